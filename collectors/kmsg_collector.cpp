#include "collectors/kmsg_collector.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/coverage_report.h"
#include "collectors/run_builder.h"
#include "collectors/source_files.h"

namespace attrib::collectors {
namespace {

constexpr TimeUs kMicrosPerSecond = 1'000'000;
constexpr const char* kAuto = "auto";
constexpr const char* kProcStat = "/proc/stat";

struct KmsgRecord {
  uint64_t priority = 0;  // facility * 8 + level
  uint64_t seq = 0;
  uint64_t usec = 0;         // since boot (the kernel's local clock)
  std::string_view message;  // as the device writes it: escaped (see append_unescaped)
};

template <typename Int>
bool parse_number(std::string_view text, Int& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// The kernel escapes bytes < 0x20, >= 0x7f and '\' as "\xNN" in /dev/kmsg; undo it
// so the rules see the text as printed (an embedded newline stays inside the message).
void append_unescaped(std::string_view text, std::string& out) {
  if (text.find('\\') == std::string_view::npos) {
    out.append(text);  // nearly every record: one copy
    return;
  }
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned value = 0;
    if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] == 'x' &&
        std::from_chars(text.data() + i + 2, text.data() + i + 4, value, 16).ptr == text.data() + i + 4) {
      out += static_cast<char>(value);
      i += 3;
    } else {
      out += text[i];
    }
  }
}

// No machine has been up for a century: a larger usec is a damaged or made-up record,
// and would overflow once added to the boot time.
constexpr uint64_t kMaxUptimeUs = 100ULL * 366 * 86400 * kMicrosPerSecond;

// The decimal number at `at` (digits only, at least one, no overflow: from_chars); moves
// `at` past it.
bool read_decimal(const char*& at, const char* end, uint64_t& out) {
  const auto [next, ec] = std::from_chars(at, end, out);
  if (ec != std::errc()) return false;
  at = next;
  return true;
}

// "prio,seq,usec,flags[,more...];message". Fields after usec are optional and
// ignored (newer kernels append e.g. "caller=T123"). Read in one pass: it runs for every
// record of the ring, a window of ten thousand per job.
std::optional<KmsgRecord> parse_record(std::string_view line) {
  const char* at = line.data();
  const char* const end = at + line.size();
  KmsgRecord record;
  if (!read_decimal(at, end, record.priority) || at == end || *at++ != ',' || !read_decimal(at, end, record.seq) ||
      at == end || *at++ != ',' || !read_decimal(at, end, record.usec) || at == end || record.usec > kMaxUptimeUs)
    return std::nullopt;
  if (*at != ';') {
    if (*at != ',') return std::nullopt;
    at = static_cast<const char*>(std::memchr(at, ';', static_cast<size_t>(end - at)));
    if (at == nullptr) return std::nullopt;
  }
  record.message = std::string_view(at + 1, static_cast<size_t>(end - at - 1));
  return record;
}

// A boot time given as a number of epoch seconds, or a file holding one: either the
// bare number or /proc/stat's "btime <seconds>" line.
std::optional<TimeUs> parse_boot_seconds(std::string_view text) {
  int64_t seconds = 0;
  if (!parse_number(text, seconds) || seconds == 0) return std::nullopt;
  return epoch_seconds_to_us(seconds);
}

Result<TimeUs> boot_time_from_file(const std::string& path) {
  const FileContent content = read_source_file(path, ReadLimits{1 << 20});
  if (content.state == FileContent::State::Missing) return Error{kCollectBootTime, path + " does not exist"};
  if (content.state == FileContent::State::Error) return Error{kCollectBootTime, content.error};
  for (const std::string& line : split_lines(content.data)) {
    std::string_view text = line;
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    if (text.rfind("btime ", 0) == 0) text.remove_prefix(6);
    if (auto t = parse_boot_seconds(text)) return *t;
  }
  return Error{kCollectBootTime, path + " holds no boot time (a number of epoch seconds or a 'btime N' line)"};
}

}  // namespace

const OptionTable<KmsgOptions>& KmsgCollector::option_table() {
  static const OptionTable<KmsgOptions> table = {
      option("path", &KmsgOptions::path, "/dev/kmsg",
             "Where to read kmsg records (prio,seq,usec,flags;message): the device, or a file or FIFO holding "
             "them. May contain {node} (the Slurm node name), e.g. /var/log/kmsg/{node}.kmsg on a head "
             "reading copies. Reads never block: a FIFO or device is read until no more data is ready.",
             {}, [](const std::string& path) { return path_template_problem(path, {"node"}); }),
      option("boot_time", &KmsgOptions::boot_time, "auto",
             "How boot-relative record times become wall clock: auto (this machine's btime from /proc/stat; "
             "only right when the records are this machine's), a number of epoch seconds, or an absolute "
             "path (may contain {node}) of a file holding that number or a 'btime N' line, e.g. a copy of "
             "the node's /proc/stat.",
             {},
             [](const std::string& boot_time) -> OptionProblem {
               if (boot_time == kAuto || parse_boot_seconds(boot_time)) return std::nullopt;
               if (boot_time.empty() || boot_time[0] != '/')
                 return Error{kConfigValue,
                              "must be auto, a number of epoch seconds, or an absolute path; got '" + boot_time + "'"};
               return path_template_problem(boot_time, {"node"});
             }),
  };
  return table;
}

Result<std::unique_ptr<Collector>> KmsgCollector::create(const YAML::Node& options) {
  auto parsed = read_collector_options(kName, option_table(), options);
  if (!parsed) return parsed.error();
  return std::unique_ptr<Collector>(std::make_unique<KmsgCollector>(std::move(*parsed)));
}

KmsgCollector::KmsgCollector(KmsgOptions options) : options_(std::move(options)) {}

Result<TimeUs> KmsgCollector::boot_time_of(const std::string& node) const {
  if (options_.boot_time == kAuto) return boot_time_from_file(kProcStat);
  if (auto seconds = parse_boot_seconds(options_.boot_time)) return *seconds;
  auto path = expand_path_template(options_.boot_time, {{"node", node}});
  if (!path) return path.error();
  return boot_time_from_file(*path);
}

std::vector<Coverage> KmsgCollector::collect(const CollectRequest& request, const LineSink& sink) {
  CoverageReport report(request, {"kernel"});

  auto path = expand_path_template(options_.path, {{"node", request.node}});
  if (!path) return report.finish(CoverageStatus::Failed, path.error().message);
  // The ring's bytes go into the buffer this thread read the last window into (a worker
  // reads a window per job: a fresh megabyte costs more in page faults than the scan).
  thread_local std::string kept;
  FileContent content = read_source_file(*path, ReadLimits{}, std::move(kept));
  struct KeepBuffer {
    FileContent& content;
    ~KeepBuffer() { kept = content.data.capacity() <= kKeptBufferBytes ? std::move(content.data) : std::string(); }
  } keep_buffer{content};
  if (content.state == FileContent::State::Missing) {
    return report.finish(CoverageStatus::Unavailable, *path + " does not exist");
  }
  if (content.state == FileContent::State::Error) return report.finish(CoverageStatus::Failed, content.error);
  auto boot = boot_time_of(request.node);
  if (!boot)
    return report.finish(CoverageStatus::Failed, "cannot place " + *path + " in time: " + boot.error().message);

  // The kernel's records in the window, message by message, as runs of lines.
  static const std::string kKernel = "kernel";
  RunBuilder runs(report, sink);
  std::optional<KmsgRecord> first;
  uint64_t malformed = 0;
  uint64_t not_kernel = 0;
  const std::string_view data = content.data;
  for (size_t pos = 0; pos < data.size();) {
    size_t end = data.find('\n', pos);
    if (end == std::string_view::npos) end = data.size();
    std::string_view text = data.substr(pos, end - pos);
    pos = end + 1;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    // Continuation lines (" KEY=value") carry the record's device dictionary.
    if (text.empty() || text[0] == ' ') continue;
    std::optional<KmsgRecord> record = parse_record(text);
    if (!record) {
      ++malformed;
      continue;
    }
    if (!first) first = *record;
    // Facility 0 is the kernel's own; user space writing to /dev/kmsg gets another
    // facility (at least "user"), so only facility 0 is kernel evidence.
    if (record->priority >> 3 != 0) {
      ++not_kernel;
      continue;
    }
    const TimeUs time = *boot + static_cast<TimeUs>(record->usec);
    if (time < request.window_start || time > request.window_end) continue;
    append_unescaped(record->message, runs.begin_line(request.node, kKernel, /*trusted=*/true, time));
    // Only an escape ("\x0a") can put a newline in a message (the records are split at '\n');
    // such a message stays one line.
    runs.end_line(/*may_hold_newline=*/record->message.find('\\') != std::string_view::npos);
  }
  runs.finish();

  std::vector<std::string> notes;
  if (malformed > 0) notes.push_back(std::to_string(malformed) + " malformed records skipped");
  if (not_kernel > 0) notes.push_back(std::to_string(not_kernel) + " user-space records (facility != kern) skipped");
  if (!first) {
    notes.insert(notes.begin(), *path + " holds no records");
    return report.finish(CoverageStatus::Empty, join_notes(notes));
  }

  // Partial: records that belong to the window may be gone. The ring only holds the
  // current boot and overwrites its oldest records when full, so the window is not
  // fully covered when the first retained record is after the window start: either
  // seq > 0 (older records of this boot were overwritten) or seq == 0 (the node
  // booted inside the window; the previous boot's ring is lost). Records overwritten
  // while reading (EPIPE from the device) or a truncated read are partial too.
  std::vector<std::string> partial;
  const TimeUs first_time = *boot + static_cast<TimeUs>(first->usec);
  if (first_time > request.window_start) {
    partial.push_back(first->seq > 0
                          ? *path + " begins at record " + std::to_string(first->seq) + " (" + format_time(first_time) +
                                "), after the window start: older records were overwritten"
                          : *path + " begins at boot (" + format_time(first_time) +
                                "), after the window start: the node booted inside the window");
  }
  if (content.records_lost > 0)
    partial.push_back(std::to_string(content.records_lost) + " records were overwritten while reading");
  if (content.truncated) partial.push_back("only the last part was read");
  if (!partial.empty()) {
    partial.insert(partial.end(), notes.begin(), notes.end());
    return report.finish(CoverageStatus::Partial, join_notes(partial));
  }
  return report.finish(std::nullopt, join_notes(notes));
}

}  // namespace attrib::collectors
