#include "collectors/spank_records_collector.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "collectors/coverage_report.h"
#include "collectors/source_files.h"

namespace attrib::collectors {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Node and job names become path components: refuse anything that could leave the spool.
bool safe_component(const std::string& text) {
  return !text.empty() && text != "." && text != ".." && text.find('/') == std::string::npos &&
         text.find('\0') == std::string::npos;
}

struct TaskExit {
  TimeUs end = 0;
  std::string step;
  int64_t rank = 0;
  bool trusted = false;
  std::string text;
};

}  // namespace

std::string task_exit_line(const std::string& job, const std::string& step, int64_t rank, int64_t local_rank,
                           const std::string& node, int64_t pid, int64_t exit_code, int64_t signal,
                           const std::string& gpus) {
  const bool abnormal = exit_code != 0 || signal != 0;
  return std::string("attrib-spank: task exited ") + (abnormal ? "abnormally" : "normally") + ": job=" + job +
         " step=" + step + " rank=" + std::to_string(rank) + " local_rank=" + std::to_string(local_rank) +
         " node=" + node + " pid=" + std::to_string(pid) + " exit_code=" + std::to_string(exit_code) +
         " signal=" + std::to_string(signal) + (gpus.empty() ? "" : " gpus=" + gpus);
}

namespace {

// The GPU indices a record names ("0,1"), when its node gave the task GPUs; only digits
// and commas pass, so the line the rules read cannot be extended through the record.
std::string gpus_of(const json& record) {
  auto it = record.find("gpus");
  if (it == record.end() || !it->is_string()) return "";
  const std::string gpus = it->get<std::string>();
  if (gpus.empty() || gpus.size() > 256 || gpus.find_first_not_of("0123456789,") != std::string::npos) return "";
  return gpus;
}

// The most other-job directories of a node read for one attribution, newest first: a
// node's spool keeps every job's records until the site expires them (docs/spank.md).
constexpr size_t kMaxNeighbourDirs = 512;

// Another job's task, as the rules read it (slurm.spank_neighbour_task).
std::string neighbour_task_line(const json& record) {
  const std::string gpus = gpus_of(record);
  return "attrib-spank: task of another job: job=" + std::to_string(record.at("job_id").get<int64_t>()) +
         " step=" + record.at("step").get<std::string>() +
         " rank=" + std::to_string(record.at("global_rank").get<int64_t>()) +
         " node=" + record.at("node").get<std::string>() + " pid=" + std::to_string(record.at("pid").get<int64_t>()) +
         (gpus.empty() ? "" : " gpus=" + gpus);
}

// The last well-formed line of a record file (its exit line once the task has ended).
std::optional<json> last_record(const fs::path& path) {
  std::ifstream in(path);
  std::optional<json> last;
  for (std::string text; std::getline(in, text);) {
    json record = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.contains("event")) last = std::move(record);
  }
  return last;
}

// Directories of other jobs on the node, newest first, at most kMaxNeighbourDirs; `more`
// counts those left out.
std::vector<fs::path> neighbour_dirs(const fs::path& node_dir, const std::string& job_id, size_t& more) {
  std::vector<std::pair<fs::file_time_type, fs::path>> dirs;
  std::error_code ec;
  for (fs::directory_iterator it(node_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.front() == '.' || name == job_id || !it->is_directory(ec)) continue;
    dirs.emplace_back(it->last_write_time(ec), it->path());
  }
  std::sort(dirs.begin(), dirs.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  more = dirs.size() > kMaxNeighbourDirs ? dirs.size() - kMaxNeighbourDirs : 0;
  std::vector<fs::path> out;
  for (size_t i = 0; i < dirs.size() && i < kMaxNeighbourDirs; ++i) out.push_back(dirs[i].second);
  return out;
}

}  // namespace

std::vector<SpankRecordsCollector::TaskLine> SpankRecordsCollector::neighbour_tasks(const fs::path& node_dir,
                                                                                    const CollectRequest& request,
                                                                                    size_t& more) const {
  std::vector<TaskLine> tasks;
  for (const fs::path& dir : neighbour_dirs(node_dir, request.job_id, more)) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path path = it->path();
      const std::string file = path.filename().string();
      if (file.empty() || file.front() == '.' || path.extension() != ".json") continue;
      const auto record = last_record(path);
      if (!record) continue;
      try {
        const int64_t start = record->at("start_us").get<int64_t>();
        const auto end = record->contains("end_us") ? std::optional(record->at("end_us").get<int64_t>()) : std::nullopt;
        if (start > request.window_end || (end && *end < request.window_start)) continue;  // not beside this job
        // Stamped where it is first beside this job, never before the window: what lies
        // before it is not this job's evidence, and a replay of the raw lines drops it.
        tasks.push_back({std::max(start, request.window_start), neighbour_task_line(*record),
                         root_owned_and_protected(path)});
      } catch (const json::exception&) {
        // a neighbour's unreadable record: not this job's coverage
      }
    }
  }
  std::sort(tasks.begin(), tasks.end(),
            [](const TaskLine& a, const TaskLine& b) { return std::tie(a.time, a.text) < std::tie(b.time, b.text); });
  return tasks;
}

const OptionTable<SpankRecordsOptions>& SpankRecordsCollector::option_table() {
  static const OptionTable<SpankRecordsOptions> table = {
      option("directory", &SpankRecordsOptions::directory, "/var/spool/attrib/tasks",
             "The spank_attrib.so spool of a node (its plugstack spool_dir). \"{node}\" is replaced by the Slurm "
             "node name, for nodes that share one filesystem (plugstack spool_dir=.../%n).",
             non_empty()),
  };
  return table;
}

Result<std::unique_ptr<Collector>> SpankRecordsCollector::create(const YAML::Node& options) {
  auto parsed = read_collector_options(kName, option_table(), options);
  if (!parsed) return parsed.error();
  return std::unique_ptr<Collector>(std::make_unique<SpankRecordsCollector>(std::move(*parsed)));
}

SpankRecordsCollector::SpankRecordsCollector(SpankRecordsOptions options) : options_(std::move(options)) {}

std::string SpankRecordsCollector::node_directory(const std::string& node) const {
  std::string out;
  const std::string placeholder = "{node}";
  size_t pos = 0;
  while (true) {
    const size_t at = options_.directory.find(placeholder, pos);
    out += options_.directory.substr(pos, at == std::string::npos ? std::string::npos : at - pos);
    if (at == std::string::npos) break;
    out += node;
    pos = at + placeholder.size();
  }
  return out;
}

std::vector<Coverage> SpankRecordsCollector::collect(const CollectRequest& request, const LineSink& sink) {
  CoverageReport report(request, {kSource});

  if (!safe_component(request.node) || !safe_component(request.job_id)) {
    return report.finish(CoverageStatus::Failed,
                         "node or job name unusable as a path: '" + request.node + "', '" + request.job_id + "'");
  }
  const fs::path node_dir = node_directory(request.node);
  std::error_code ec;
  if (!fs::is_directory(node_dir, ec)) {
    // The plugin creates the node's spool when slurmd starts: without it the plugin is
    // not loaded (or not configured) on this node.
    return report.finish(CoverageStatus::Unavailable, "task spool " + node_dir.string() +
                                                          " does not exist (spank_attrib.so not loaded on this node?)");
  }
  const fs::path job_dir = node_dir / request.job_id;
  if (!fs::is_directory(job_dir, ec)) {
    return report.finish(CoverageStatus::Empty,
                         "no task records for job " + request.job_id + " in " + node_dir.string());
  }

  std::vector<TaskExit> exits;
  size_t files = 0, bad_lines = 0, unfinished = 0, untrusted = 0;
  for (fs::directory_iterator it(job_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path path = it->path();
    const std::string file = path.filename().string();
    // Skips the writer's ".<name>.tmp.<pid>" files and the user's evidence directory.
    if (file.empty() || file.front() == '.' || path.extension() != ".json") continue;
    ++files;
    // A record is trusted when root wrote it and nobody else could have changed it: the
    // plugin writes as root (slurmstepd) into root-owned 0755 directories.
    const bool trusted = root_owned_and_protected(path);
    if (!trusted) ++untrusted;
    std::ifstream in(path);
    bool ended = false;
    for (std::string text; std::getline(in, text);) {
      const json record = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (!record.is_object() || !record.contains("event")) {
        ++bad_lines;
        continue;
      }
      if (record["event"] != "task_exit") continue;
      try {
        TaskExit exit;
        exit.end = record.at("end_us").get<int64_t>();
        exit.step = record.at("step").get<std::string>();
        exit.rank = record.at("global_rank").get<int64_t>();
        exit.trusted = trusted;
        exit.text = task_exit_line(std::to_string(record.at("job_id").get<int64_t>()), exit.step, exit.rank,
                                   record.at("local_rank").get<int64_t>(), record.at("node").get<std::string>(),
                                   record.at("pid").get<int64_t>(), record.at("exit_code").get<int64_t>(),
                                   record.at("signal").get<int64_t>(), gpus_of(record));
        exits.push_back(std::move(exit));
        ended = true;
      } catch (const json::exception&) {
        ++bad_lines;  // a field missing or of the wrong type
      }
    }
    if (!ended) ++unfinished;
  }
  if (ec) return report.finish(CoverageStatus::Failed, "reading " + job_dir.string() + ": " + ec.message());
  size_t more_neighbours = 0;
  const std::vector<TaskLine> neighbours = neighbour_tasks(node_dir, request, more_neighbours);

  // Stream order = order of the ends (then step, rank): the first abnormal end is first.
  std::sort(exits.begin(), exits.end(), [](const TaskExit& a, const TaskExit& b) {
    return std::tie(a.end, a.step, a.rank) < std::tie(b.end, b.step, b.rank);
  });
  const auto hand_over = [&](TimeUs time, bool trusted, const std::string& text) {
    sink(LogLine{request.node, kSource, time, report.next_seq(kSource), trusted, text});
  };
  for (const TaskExit& exit : exits) hand_over(exit.end, exit.trusted, exit.text);
  // Other jobs' tasks beside it: what tells whose pid or GPU a node's line names.
  for (const TaskLine& task : neighbours) hand_over(task.time, task.trusted, task.text);

  std::vector<std::string> notes;
  if (unfinished)
    notes.push_back(std::to_string(unfinished) +
                    " task(s) without an exit record (still running, or the node stopped)");
  if (untrusted) notes.push_back(std::to_string(untrusted) + " record file(s) not root-owned, read as untrusted");
  if (bad_lines) notes.push_back(std::to_string(bad_lines) + " unreadable record line(s) skipped");
  if (!neighbours.empty()) notes.push_back(std::to_string(neighbours.size()) + " task(s) of other jobs beside it");
  if (more_neighbours)
    notes.push_back(std::to_string(more_neighbours) + " older job directories not read for neighbours");
  const std::string detail = join_notes(notes);
  if (bad_lines) return report.finish(CoverageStatus::Partial, detail);
  return report.finish(files == 0 ? CoverageStatus::Empty : CoverageStatus::Ok, detail);
}

}  // namespace attrib::collectors
