#include "collectors/fabricmanager_collector.h"

#include <cctype>
#include <optional>
#include <string_view>

#include "collectors/coverage_report.h"
#include "collectors/run_builder.h"
#include "collectors/source_files.h"
#include "core/calendar.h"

namespace attrib::collectors {
namespace {

constexpr int kMaxOffsetMinutes = 24 * 60;
// One entry never grows past this: a runaway continuation (a dumped blob) must not
// make a single LogLine of megabytes.
constexpr size_t kMaxEntryLines = 200;
constexpr size_t kMaxEntryBytes = 64 * 1024;

bool read_int(std::string_view text, size_t& pos, size_t min_digits, size_t max_digits, int& out) {
  size_t digits = 0;
  int value = 0;
  while (pos < text.size() && digits < max_digits && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    value = value * 10 + (text[pos] - '0');
    ++pos;
    ++digits;
  }
  out = value;
  return digits >= min_digits;
}

bool expect(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

struct Header {
  CivilTime civil;
  std::string payload;  // what follows "] ": "[ERROR] [tid 841] message"
};

// "[Jul 23 2024 07:53:55] payload"; the day may be one digit or space-padded.
std::optional<Header> parse_header(std::string_view line) {
  size_t pos = 0;
  Header h;
  if (!expect(line, pos, '[') || line.size() < pos + 4) return std::nullopt;
  h.civil.month = month_from_abbrev(line.substr(pos, 3));
  if (h.civil.month == 0) return std::nullopt;
  pos += 3;
  if (!expect(line, pos, ' ')) return std::nullopt;
  if (pos < line.size() && line[pos] == ' ') ++pos;
  if (!read_int(line, pos, 1, 2, h.civil.day) || !expect(line, pos, ' ') || !read_int(line, pos, 4, 4, h.civil.year) ||
      !expect(line, pos, ' ') || !read_int(line, pos, 2, 2, h.civil.hour) || !expect(line, pos, ':') ||
      !read_int(line, pos, 2, 2, h.civil.minute) || !expect(line, pos, ':') ||
      !read_int(line, pos, 2, 2, h.civil.second) || !expect(line, pos, ']')) {
    return std::nullopt;
  }
  if (pos < line.size() && line[pos] == ' ') ++pos;
  h.payload = std::string(line.substr(pos));
  return h;
}

}  // namespace

const OptionTable<FabricManagerOptions>& FabricManagerCollector::option_table() {
  static const OptionTable<FabricManagerOptions> table = {
      option("path", &FabricManagerOptions::path, "/var/log/fabricmanager.log",
             "Fabric Manager's log file (LOG_FILE_NAME in fabricmanager.cfg). Its rotated <path>.1 is read "
             "first when present. May contain {node} (the Slurm node name) for a head reading copies.",
             {}, [](const std::string& path) { return path_template_problem(path, {"node"}); }),
      option("timezone_offset_minutes", &FabricManagerOptions::timezone_offset_minutes, "0",
             "The node's UTC offset in minutes (east positive, e.g. 60 for CET): Fabric Manager writes "
             "local time without a zone.",
             between(-kMaxOffsetMinutes, kMaxOffsetMinutes)),
  };
  return table;
}

Result<std::unique_ptr<Collector>> FabricManagerCollector::create(const YAML::Node& options) {
  auto parsed = read_collector_options(kName, option_table(), options);
  if (!parsed) return parsed.error();
  return std::unique_ptr<Collector>(std::make_unique<FabricManagerCollector>(std::move(*parsed)));
}

FabricManagerCollector::FabricManagerCollector(FabricManagerOptions options) : options_(std::move(options)) {}

std::vector<Coverage> FabricManagerCollector::collect(const CollectRequest& request, const LineSink& sink) {
  CoverageReport report(request, {"fabricmanager"});

  auto path = expand_path_template(options_.path, {{"node", request.node}});
  if (!path) return report.finish(CoverageStatus::Failed, path.error().message);

  // Oldest first: the rotated file, then the live one, read as one stream so an
  // entry continuing across the rotation point stays whole.
  std::vector<std::string> errors;
  std::vector<std::string> read_paths;
  bool truncated = false;
  std::string stream;
  for (const std::string& file : {*path + ".1", *path}) {
    FileContent content = read_source_file(file, ReadLimits{});
    if (content.state == FileContent::State::Missing) continue;
    if (content.state == FileContent::State::Error) {
      errors.push_back(content.error);
      continue;
    }
    read_paths.push_back(file);
    truncated = truncated || content.truncated;
    if (!stream.empty() && stream.back() != '\n') stream += '\n';
    stream += content.data;
  }
  if (read_paths.empty()) {
    if (!errors.empty()) return report.finish(CoverageStatus::Failed, errors.front());
    return report.finish(CoverageStatus::Unavailable, "neither " + *path + " nor " + *path + ".1 exists");
  }

  std::optional<TimeUs> earliest;
  std::optional<Header> entry;  // the entry being assembled
  std::optional<TimeUs> entry_time;
  size_t entry_lines = 0;
  uint64_t orphans = 0;
  uint64_t dropped_continuations = 0;
  uint64_t bad_dates = 0;
  static const std::string kSource = "fabricmanager";
  RunBuilder runs(report, sink);  // single-line entries in a row: one run
  auto flush = [&]() {
    if (!entry) return;
    // Written by the root-run daemon to a root-owned file; an entry of several lines is
    // one line.
    if (entry_time && *entry_time >= request.window_start && *entry_time <= request.window_end)
      runs.add_line(request.node, kSource, /*trusted=*/true, entry_time, entry->payload);
    entry.reset();
  };

  for (const std::string& text : split_lines(stream)) {
    if (std::optional<Header> header = parse_header(text)) {
      flush();
      entry_time = civil_to_utc(header->civil, options_.timezone_offset_minutes);
      if (!entry_time) ++bad_dates;  // "[Feb 30 ...]": kept out of every window
      if (entry_time && (!earliest || *entry_time < *earliest)) earliest = entry_time;
      entry = std::move(header);
      entry_lines = 1;
      continue;
    }
    if (!entry) {
      if (!text.empty()) ++orphans;  // continues an entry we no longer have
      continue;
    }
    if (entry_lines >= kMaxEntryLines || entry->payload.size() + text.size() + 1 > kMaxEntryBytes) {
      ++dropped_continuations;
      continue;
    }
    // Continuation lines join their entry: the rules match one LogLine at a time,
    // and a multi-line entry is one message (as journald stores it).
    entry->payload += '\n';
    entry->payload += text;
    ++entry_lines;
  }
  flush();
  runs.finish();

  std::vector<std::string> notes;
  if (orphans > 0) notes.push_back(std::to_string(orphans) + " lines before the first timestamped entry skipped");
  if (dropped_continuations > 0)
    notes.push_back(std::to_string(dropped_continuations) + " continuation lines over the entry limit dropped");
  if (bad_dates > 0) notes.push_back(std::to_string(bad_dates) + " entries with an impossible date skipped");

  std::vector<std::string> partial;
  if (!errors.empty()) partial.push_back(errors.front());
  if (earliest && *earliest > request.window_start)
    partial.push_back(read_paths.front() + " begins at " + format_time(*earliest) + ", after the window start");
  if (truncated) partial.push_back("only the last part of a large file was read");
  if (!partial.empty()) {
    partial.insert(partial.end(), notes.begin(), notes.end());
    return report.finish(CoverageStatus::Partial, join_notes(partial));
  }
  if (!earliest) notes.push_back("no timestamped entries in " + read_paths.back());
  return report.finish(std::nullopt, join_notes(notes));
}

}  // namespace attrib::collectors
