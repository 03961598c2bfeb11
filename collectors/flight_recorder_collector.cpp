#include "collectors/flight_recorder_collector.h"

#include <algorithm>
#include <filesystem>

#include "collectors/coverage_report.h"
#include "collectors/flight_recorder_dump.h"
#include "collectors/source_files.h"

namespace attrib::collectors {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDumpPrefix = "nccl_trace_rank_";

// The global rank a dump's name ends with, or -1.
int64_t rank_of(const std::string& file) {
  if (file.rfind(kDumpPrefix, 0) != 0) return -1;
  const std::string digits = file.substr(std::string(kDumpPrefix).size());
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

}  // namespace

const OptionTable<FlightRecorderOptions>& FlightRecorderCollector::option_table() {
  static const OptionTable<FlightRecorderOptions> table = {
      option("directory", &FlightRecorderOptions::directory, "/var/spool/attrib/tasks",
             "The spank_attrib.so spool of a node (as for spank_records); the dumps are read from "
             "<directory>/<job>/user/nccl_trace_rank_<rank>. May contain {node} (the Slurm node name).",
             {}, [](const std::string& path) { return path_template_problem(path, {"node"}); }),
      option("max_bytes_per_dump", &FlightRecorderOptions::max_bytes_per_dump, "67108864",
             "A larger dump is not read (reported as partial coverage).", at_least(1)),
  };
  return table;
}

Result<std::unique_ptr<Collector>> FlightRecorderCollector::create(const YAML::Node& options) {
  auto parsed = read_collector_options(kName, option_table(), options);
  if (!parsed) return parsed.error();
  return std::unique_ptr<Collector>(std::make_unique<FlightRecorderCollector>(std::move(*parsed)));
}

FlightRecorderCollector::FlightRecorderCollector(FlightRecorderOptions options) : options_(std::move(options)) {}

std::vector<Coverage> FlightRecorderCollector::collect(const CollectRequest& request, const LineSink& sink) {
  CoverageReport report(request, {kSource});
  auto spool = expand_path_template(options_.directory, {{"node", request.node}});
  if (!spool) return report.finish(CoverageStatus::Failed, spool.error().message);
  auto job_dir = expand_path_template(*spool + "/{job}/user", {{"job", request.job_id}});
  if (!job_dir) return report.finish(CoverageStatus::Failed, job_dir.error().message);
  std::error_code ec;
  if (!fs::is_directory(*job_dir, ec))
    return report.finish(CoverageStatus::Empty, "no flight-recorder dumps (" + *job_dir + " does not exist)");

  std::vector<std::pair<int64_t, fs::path>> dumps;
  for (fs::directory_iterator it(*job_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const int64_t rank = rank_of(it->path().filename().string());
    if (rank >= 0) dumps.emplace_back(rank, it->path());
  }
  if (ec) return report.finish(CoverageStatus::Failed, "reading " + *job_dir + ": " + ec.message());
  std::sort(dumps.begin(), dumps.end());

  std::vector<std::string> problems;
  for (const auto& [rank, path] : dumps) {
    const FileContent content =
        read_user_file(path.string(), request.owner_uid, options_.max_bytes_per_dump);
    if (content.state != FileContent::State::Read || content.truncated) {
      problems.push_back(path.filename().string() + ": " +
                         (content.truncated ? "larger than max_bytes_per_dump, not read" : content.error));
      continue;
    }
    auto groups = read_flight_recorder_dump(content.data);
    if (!groups) {
      problems.push_back(path.filename().string() + ": " + groups.error().message);
      continue;
    }
    for (const RankCollectives& group : *groups) {
      const TimeUs at = std::clamp<TimeUs>(group.last_time_ns / 1000, request.window_start, request.window_end);
      sink(LogLine{request.node, kSource, at, report.next_seq(kSource), false, flight_recorder_line(rank, group)});
    }
  }
  if (!problems.empty()) return report.finish(CoverageStatus::Partial, join_notes(problems));
  return report.finish(std::nullopt, std::to_string(dumps.size()) + " dump(s)");
}

}  // namespace attrib::collectors
