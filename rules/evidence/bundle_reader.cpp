// Evidence bundle v1 -> job facts, LogLines and coverage (attrib/rules/bundle.h).
//
// A bundle directory and the same files in memory open into one form, every stream's
// content in memory, so that one path dates and reads them, whichever they came from.
//
// Order never matters: files are listed sorted, and everything derived from several
// files (the reference year, a host's boot time) is computed from all of them with
// order-free rules (minimum, median), so a shuffled file list gives the same lines.
#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/utf8.h"
#include "core/whole_file.h"
#include "rules/evidence/bundle.h"
#include "rules/line_time.h"
#include "rules/rule_definitions.h"

namespace attrib::rules {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr TimeUs kSecondUs = 1000000;
// Boot-time estimates of one host (wall clock minus uptime) that disagree by more than
// this mean the host rebooted (or its stamps are unreliable): bare dmesg lines then keep
// only their order rather than get a wrong time.
constexpr TimeUs kBootAgreementUs = 10 * kSecondUs;

Error job_error(const std::string& field, const std::string& message) {
  return Error{kBundleJob, "job.json: " + field + ": " + message};
}

Result<int64_t> parse_utc_offset(const std::string& text) {
  if (text == "Z" || text == "UTC") return int64_t{0};
  // "+02:00", "-0530"
  if (text.size() < 5 || (text[0] != '+' && text[0] != '-')) return job_error("utc_offset", "expected +HH:MM");
  std::string digits;
  for (char c : text.substr(1))
    if (c != ':') digits += c;
  if (digits.size() != 4 || digits.find_first_not_of("0123456789") != std::string::npos)
    return job_error("utc_offset", "expected +HH:MM");
  const int64_t seconds = std::stoi(digits.substr(0, 2)) * 3600 + std::stoi(digits.substr(2)) * 60;
  return text[0] == '-' ? -seconds : seconds;
}

Result<std::optional<TimeUs>> time_field(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return std::optional<TimeUs>{};
  if (!it->is_string()) return job_error(name, "expected an ISO 8601 string");
  auto t = parse_iso_time(it->get<std::string>());
  if (!t) return job_error(name, "'" + it->get<std::string>() + "' is not an ISO 8601 time (2026-11-30T10:00:00Z)");
  return std::optional<TimeUs>(*t);
}

Result<int> int_field(const json& j, const char* name, int fallback) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) return job_error(name, "expected an integer");
  return it->get<int>();
}

Result<std::string> string_field(const json& j, const char* name, const std::string& fallback) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_string()) return job_error(name, "expected a string");
  return it->get<std::string>();
}

}  // namespace

Status job_from_json(const json& j, Bundle& bundle) {
  if (!j.is_object()) return job_error("(top)", "expected a JSON object");

  JobFacts& job = bundle.job;
  auto id = j.find("job_id");
  if (id == j.end()) return job_error("job_id", "required");
  if (id->is_string() && !id->get<std::string>().empty())
    job.job_id = id->get<std::string>();
  else if (id->is_number_unsigned())
    job.job_id = id->dump();
  else
    return job_error("job_id", "expected a non-empty string such as \"4242\"");

  auto nodes = j.find("nodes");
  if (nodes == j.end()) return job_error("nodes", "required");
  if (!nodes->is_array()) return job_error("nodes", "expected a list of node names");
  for (const auto& n : *nodes) {
    if (!n.is_string() || n.get<std::string>().empty()) return job_error("nodes", "every entry must be a node name");
    job.nodes.push_back(n.get<std::string>());
  }

  auto cluster = string_field(j, "cluster", "");
  if (!cluster) return cluster.error();
  auto state = string_field(j, "state", "UNKNOWN");
  if (!state) return state.error();
  auto exit_code = int_field(j, "exit_code", 0);
  if (!exit_code) return exit_code.error();
  auto signal = int_field(j, "signal", 0);
  if (!signal) return signal.error();
  auto attempt = int_field(j, "attempt", 0);
  if (!attempt) return attempt.error();
  auto start = time_field(j, "start");
  if (!start) return start.error();
  auto end = time_field(j, "end");
  if (!end) return end.error();
  job.cluster = *cluster;
  job.state = *state;
  job.exit_code = *exit_code;
  job.signal = *signal;
  job.attempt = *attempt;
  auto restarts = int_field(j, "restarts", 0);
  if (!restarts) return restarts.error();
  if (*restarts < 0) return job_error("restarts", "expected a count (0 or more)");
  job.restarts = *restarts;
  job.start = *start;
  job.end = *end;

  if (auto components = j.find("components"); components != j.end() && !components->is_null()) {
    auto parsed = components_from_json(*components, "components");
    if (!parsed) return Error{kBundleJob, "job.json: " + parsed.error().message};
    job.components = std::move(*parsed);
  }
  if (auto ranks = j.find("ranks"); ranks != j.end() && !ranks->is_null()) {
    if (!ranks->is_object()) return job_error("ranks", "expected {\"<rank>\": \"<node>\"}");
    for (const auto& [key, value] : ranks->items()) {
      if (key.empty() || key.size() > 9 || key.find_first_not_of("0123456789") != std::string::npos)
        return job_error("ranks." + key, "rank must be a number");
      if (!value.is_string()) return job_error("ranks." + key, "expected a node name");
      job.ranks[std::stoi(key)] = value.get<std::string>();
    }
  }
  if (auto offset = j.find("utc_offset"); offset != j.end() && !offset->is_null()) {
    if (!offset->is_string()) return job_error("utc_offset", "expected +HH:MM");
    auto parsed = parse_utc_offset(offset->get<std::string>());
    if (!parsed) return parsed.error();
    bundle.utc_offset_s = *parsed;
  }
  if (auto window = j.find("window"); window != j.end() && !window->is_null()) {
    if (!window->is_array() || window->size() != 2 || !(*window)[0].is_string() || !(*window)[1].is_string())
      return job_error("window", "expected [\"<start>\", \"<end>\"] (ISO 8601)");
    auto a = parse_iso_time((*window)[0].get<std::string>());
    auto b = parse_iso_time((*window)[1].get<std::string>());
    if (!a || !b || *b < *a) return job_error("window", "expected two ISO 8601 times, start <= end");
    bundle.window_start = a;
    bundle.window_end = b;
    bundle.explicit_window = true;
  }
  if (auto allocation = j.find("allocation"); allocation != j.end() && !allocation->is_null()) {
    if (Status s = allocation_from_json(*allocation, "allocation", job.allocation, job.uid); !s)
      return Error{kBundleJob, "job.json: " + s.error().message};
  }
  if (auto repeated = j.find("repeated_failures"); repeated != j.end() && !repeated->is_null()) {
    auto parsed = repeated_failures_from_json(*repeated, "repeated_failures");
    if (!parsed) return Error{kBundleJob, "job.json: " + parsed.error().message};
    job.repeated_failures = std::move(*parsed);
  }
  auto scheduler = string_field(j, "scheduler", "");
  if (!scheduler) return scheduler.error();
  job.scheduler = *scheduler;
  return ok_status();
}

namespace {

using LineSink = std::function<void(const LogLine&)>;
using RunSink = std::function<uint64_t(const LineRun&)>;
using SeenStreams = std::set<std::pair<std::string, std::string>>;  // (host, source)

// ---- Opening: job.json, coverage.json and the streams, from a directory or from memory.

Status read_job_json(const std::string& text, Bundle& bundle) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e400 (fuzz/)
    return Error{kBundleJob, "job.json: not JSON: " + std::string(e.what())};
  }
  return job_from_json(j, bundle);
}

// coverage.json: an array of coverage rows (to_json(Coverage)).
Status read_coverage_json(const std::string& text, Bundle& bundle) {
  json rows;
  try {
    rows = json::parse(text);
  } catch (const json::exception& e) {
    return Error{kBundleJob, std::string(kCoverageFile) + ": not JSON: " + e.what()};
  }
  if (!rows.is_array()) return Error{kBundleJob, std::string(kCoverageFile) + ": expected an array of coverage rows"};
  std::vector<Coverage> coverage;
  for (size_t i = 0; i < rows.size(); ++i) {
    auto row = coverage_from_json(rows[i], std::string(kCoverageFile) + "[" + std::to_string(i) + "]");
    if (!row) return Error{kBundleJob, row.error().message};
    coverage.push_back(std::move(*row));
  }
  bundle.recorded_coverage = std::move(coverage);
  return ok_status();
}

// Without a "window" in job.json: the job's times widened by the daemon's lead and grace.
void set_default_window(Bundle& bundle, const BundleOptions& options) {
  if (bundle.explicit_window || !bundle.job.start || !bundle.job.end) return;
  bundle.window_start = *bundle.job.start - options.window_lead_s * kSecondUs;
  bundle.window_end = *bundle.job.end + options.window_grace_s * kSecondUs;
}

// A host's stream as its file name says (<source>.log or <source>.jsonl of a known source
// the host has not had yet), without its content. `path` names it in messages.
Result<BundleFile> named_stream(const std::string& host, const fs::path& path, SeenStreams& seen) {
  BundleFile f;
  f.host = host;
  f.path = path;
  const std::string ext = path.extension().string();
  if (ext == ".jsonl")
    f.journal_json = true;
  else if (ext != ".log")
    return Error{kBundleSource, path.string() + ": not a <source>.log or <source>.jsonl file"};
  f.source = path.stem().string();
  if (!detail::is_known_source(f.source))
    return Error{kBundleSource, path.string() + ": unknown source '" + f.source +
                                    "' (kernel, syslog, fabricmanager, slurm, prometheus, app, app.rank<N>)"};
  if (!seen.insert({host, f.source}).second)
    return Error{kBundleSource,
                 path.string() + ": source '" + f.source + "' of host " + host + " appears twice (.log and .jsonl)"};
  return f;
}

Error not_a_stream(const std::string& name) {
  return Error{kBundleHost, name + ": a host directory holds only <source>.log or <source>.jsonl files"};
}

// A whole file, as the bundle keeps every stream's content.
Result<std::string> read_file(const fs::path& path) {
  auto content = read_whole_file(path);
  if (!content) return Error{kBundleIo, path.string() + ": cannot read"};
  return std::move(*content);
}

// One host directory's streams, each checked by name before it is read.
Status read_host_directory(const fs::path& host_dir, const std::string& host, SeenStreams& seen, Bundle& bundle) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(host_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (!entry.is_regular_file()) return not_a_stream(entry.path().string());
    auto stream = named_stream(host, entry.path(), seen);
    if (!stream) return stream.error();
    auto content = read_file(entry.path());
    if (!content) return content.error();
    stream->content = std::move(*content);
    bundle.files.push_back(std::move(*stream));
  }
  if (ec) return Error{kBundleIo, host_dir.string() + ": " + ec.message()};
  return ok_status();
}

// Every host directory. Top-level files (job.json, a fixture's expected.json, a README)
// are not evidence; dot entries are skipped everywhere.
Status read_host_directories(const fs::path& dir, Bundle& bundle) {
  SeenStreams seen;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string host = entry.path().filename().string();
    if (host.empty() || host[0] == '.' || !entry.is_directory()) continue;
    bundle.hosts.push_back(host);
    if (Status s = read_host_directory(entry.path(), host, seen, bundle); !s) return s;
  }
  if (ec) return Error{kBundleIo, dir.string() + ": " + ec.message()};
  return ok_status();
}

// The streams of files in memory, as read_host_directories finds them in a directory: a
// "<host>/<file>" name is a host directory's file, top-level names are not evidence, dot
// names are skipped. The contents are moved into the bundle.
Status take_host_files(BundleFiles files, Bundle& bundle) {
  SeenStreams seen;
  for (auto& [name, content] : files) {
    const size_t slash = name.find('/');
    if (slash == std::string::npos) continue;
    const std::string host = name.substr(0, slash);
    const std::string file = name.substr(slash + 1);
    if (host.empty() || host[0] == '.') continue;
    // The names are sorted, so a host's names are adjacent: each host is listed once.
    if (bundle.hosts.empty() || bundle.hosts.back() != host) bundle.hosts.push_back(host);
    if (file.empty() || file[0] == '.') continue;
    if (file.find('/') != std::string::npos) return not_a_stream(name);
    auto stream = named_stream(host, name, seen);
    if (!stream) return stream.error();
    stream->content = std::move(content);
    bundle.files.push_back(std::move(*stream));
  }
  return ok_status();
}

// The order a bundle's streams are read in, whatever order they were found in.
void sort_streams(Bundle& bundle) {
  std::sort(bundle.hosts.begin(), bundle.hosts.end());
  std::sort(bundle.files.begin(), bundle.files.end(), [](const BundleFile& a, const BundleFile& b) {
    return std::tie(a.host, a.source) < std::tie(b.host, b.source);
  });
}

// ---- Dating: what a first look at every stream tells about the times of its lines.

bool is_system_log(const std::string& source) {
  return source == "kernel" || source == "syslog" || source == "fabricmanager";
}

// The family a source belongs to for coverage: every app.rank<N> is "app".
std::string source_family(const std::string& source) { return source.rfind("app", 0) == 0 ? "app" : source; }

// Calls visit(line_number, text) for every physical line of text (1-based), without its
// '\n' and a '\r' before it; stops at an error.
template <typename Visit>
Status for_each_line(std::string_view text, Visit&& visit) {
  std::string line;
  uint64_t number = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    line.assign(text.substr(pos, end - pos));
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (Status s = visit(++number, line); !s) return s;
  }
  return ok_status();
}

Error line_error(const BundleFile& file, uint64_t number, const Error& e) {
  return Error{e.code, file.path.string() + ":" + std::to_string(number) + ": " + e.message};
}

// What a first look at every file tells: the earliest dated stamp (a reference year
// when job.json has no times) and each host's boot time (for bare dmesg stamps).
struct Scan {
  std::optional<TimeUs> earliest_dated;
  std::map<std::string, std::vector<TimeUs>> boot_estimates;  // host -> wall clock - uptime
  bool yearless = false;
};

bool has_year(StampFormat f) {
  return f == StampFormat::Iso || f == StampFormat::SlurmIso || f == StampFormat::DmesgCtime ||
         f == StampFormat::DmesgIso || f == StampFormat::FabricManager;
}

Result<Scan> scan(const Bundle& bundle, const TimeContext& context) {
  Scan result;
  const auto dated = [&](TimeUs t) {
    if (!result.earliest_dated || t < *result.earliest_dated) result.earliest_dated = t;
  };
  for (const BundleFile& file : bundle.files) {
    Status s = for_each_line(file.content, [&](uint64_t number, const std::string& text) -> Status {
      if (text.empty()) return ok_status();
      if (file.journal_json) {
        auto entry = parse_journal_json(text);
        if (!entry) return line_error(file, number, entry.error());
        if (entry->realtime) dated(*entry->realtime);
        if (entry->realtime && entry->monotonic)
          result.boot_estimates[file.host].push_back(*entry->realtime - *entry->monotonic);
        return ok_status();
      }
      const LineStamp stamp = parse_line_stamp(text, context, is_system_log(file.source));
      if (stamp.time && has_year(stamp.format)) dated(*stamp.time);
      if (stamp.year_missing) result.yearless = true;
      if (stamp.time && stamp.uptime) result.boot_estimates[file.host].push_back(*stamp.time - *stamp.uptime);
      return ok_status();
    });
    if (!s) return s.error();
  }
  return result;
}

// The median estimate, or none when the estimates disagree (a reboot in the window).
std::optional<TimeUs> boot_time(std::vector<TimeUs> estimates) {
  if (estimates.empty()) return std::nullopt;
  std::sort(estimates.begin(), estimates.end());
  if (estimates.back() - estimates.front() > kBootAgreementUs) return std::nullopt;
  return estimates[(estimates.size() - 1) / 2];
}

// How the bundle's lines are dated: the reference for year-less stamps, the logs' UTC
// offset, and each host's boot time for bare dmesg stamps.
struct Dating {
  TimeContext context;
  std::map<std::string, std::optional<TimeUs>> boots;  // host -> boot time; none: unknown or rebooted
};

Result<Dating> date_bundle(const Bundle& bundle) {
  Dating dating;
  dating.context.utc_offset_s = bundle.utc_offset_s;
  dating.context.reference =
      bundle.job.start ? bundle.job.start : bundle.job.end ? bundle.job.end : bundle.window_start;
  auto first = scan(bundle, dating.context);
  if (!first) return first.error();
  Scan facts = std::move(*first);
  if (!dating.context.reference && facts.earliest_dated && facts.yearless) {
    // No job times: year-less stamps take their year from the bundle's own dated lines,
    // and boot times paired from them are computed again with that year.
    dating.context.reference = facts.earliest_dated;
    auto second = scan(bundle, dating.context);
    if (!second) return second.error();
    facts = std::move(*second);
  }
  for (auto& [host, estimates] : facts.boot_estimates) dating.boots[host] = boot_time(std::move(estimates));
  return dating;
}

// ---- Reading: each stream's lines (or its run) and its coverage row.

std::string plural(uint64_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

// Where each physical line of text starts, as for_each_line numbers them.
std::vector<size_t> line_starts(const std::string& text) {
  std::vector<size_t> starts = {0};
  for (size_t nl = text.find('\n'); nl != std::string::npos && nl + 1 < text.size(); nl = text.find('\n', nl + 1))
    starts.push_back(nl + 1);
  return starts;
}

// Reads one stream, as LogLines or as one run of lines, counting what it read into the
// stream's coverage row.
class StreamReader {
 public:
  StreamReader(const Bundle& bundle, const BundleFile& file, const Dating& dating)
      : bundle_(bundle), file_(file), context_(dating.context), trusted_(bundle_source_trusted(file.source)) {
    if (auto it = dating.boots.find(file.host); it != dating.boots.end() && it->second) {
      boot_ = *it->second;
      has_boot_ = true;
    }
  }

  // A .log stream can go to the engine whole, as one run, unless it has '\r' line ends
  // (for_each_line drops them; a run would keep them).
  bool fits_one_run() const { return !file_.journal_json && file_.content.find('\r') == std::string::npos; }

  Status read_lines(const LineSink& sink) {
    return for_each_line(file_.content, [&](uint64_t number, const std::string& text) -> Status {
      if (text.empty()) return ok_status();
      return file_.journal_json ? read_journal_line(number, text, sink) : read_text_line(number, text, sink);
    });
  }

  // Each line's prefix found and dated as read_lines finds it, then the whole stream handed
  // over as one run (see read_bundle_lines).
  Status read_run(const RunSink& runs) {
    const std::string& content = file_.content;
    if (content.empty()) return ok_status();
    const std::vector<size_t> starts = line_starts(content);
    std::vector<std::optional<LineRun::Prefix>> prefixes(starts.size());  // one per line; nullopt: left out
    Status s = for_each_line(content, [&](uint64_t number, const std::string& text) -> Status {
      if (text.empty()) return ok_status();
      const LineStamp stamp = parse_line_stamp(text, context_, is_system_log(file_.source));
      const std::optional<TimeUs> time = date(stamp);
      if (outside_window(time)) {
        ++outside_;
      } else {
        prefixes[number - 1] = LineRun::Prefix{time, stamp.payload_offset};
        ++lines_;
      }
      return ok_status();
    });
    if (!s) return s;
    LineRun run;
    run.node = file_.host;
    run.source = file_.source;
    run.trusted = trusted_;
    run.text = content;
    run.prefix = [&](std::string_view line) {
      const size_t offset = static_cast<size_t>(line.data() - content.data());
      const size_t index =
          static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), offset) - starts.begin()) - 1;
      return prefixes[index];
    };
    runs(run);
    return ok_status();
  }

  Coverage coverage() const {
    Coverage c;
    c.node = file_.host;
    c.source = file_.source;
    c.window_start = bundle_.window_start;
    c.window_end = bundle_.window_end;
    c.lines = lines_;
    c.status = lines_ > 0 ? CoverageStatus::Ok : CoverageStatus::Empty;
    std::vector<std::string> notes;
    if (outside_) notes.push_back(plural(outside_, "line") + " outside the evidence window");
    if (no_boot_) notes.push_back(plural(no_boot_, "dmesg line") + " without a boot time (order only)");
    if (no_year_) notes.push_back(plural(no_year_, "line") + " without a year (order only)");
    for (const auto& n : notes) c.detail += (c.detail.empty() ? "" : "; ") + n;
    return c;
  }

 private:
  // Like the journald collector: the kernel stream is the kernel transport, and daemons'
  // entries are trusted only when root wrote them.
  Status read_journal_line(uint64_t number, const std::string& text, const LineSink& sink) {
    auto entry = parse_journal_json(text);
    if (!entry) return line_error(file_, number, entry.error());
    if (!entry->has_message) return ok_status();
    bool trusted = trusted_;
    if (file_.source == "kernel" && entry->transport && *entry->transport != "kernel") trusted = false;
    if ((file_.source == "syslog" || file_.source == "fabricmanager") && entry->uid && *entry->uid != "0")
      trusted = false;
    emit(entry->realtime, entry->seq.value_or(number - 1), trusted, entry->message, entry->count, sink);
    return ok_status();
  }

  Status read_text_line(uint64_t number, const std::string& text, const LineSink& sink) {
    const LineStamp stamp = parse_line_stamp(text, context_, is_system_log(file_.source));
    const std::optional<TimeUs> time = date(stamp);
    emit(time, number - 1, trusted_, std::string_view(text).substr(stamp.payload_offset), 1, sink);
    return ok_status();
  }

  // A text line's time: its stamp's, or a bare dmesg uptime after the host's boot time.
  // Counts the lines left with their order only.
  std::optional<TimeUs> date(const LineStamp& stamp) {
    std::optional<TimeUs> time = stamp.time;
    if (!time && stamp.uptime) {
      if (has_boot_)
        time = boot_ + *stamp.uptime;
      else
        ++no_boot_;
    }
    if (stamp.year_missing) ++no_year_;
    return time;
  }

  bool outside_window(std::optional<TimeUs> time) const {
    return time && bundle_.window_start && bundle_.window_end &&
           (*time < *bundle_.window_start || *time > *bundle_.window_end);
  }

  // The line to sink as often as it occurred, unless it lies outside the evidence window.
  void emit(std::optional<TimeUs> time, uint64_t seq, bool trusted, std::string_view text, uint64_t count,
            const LineSink& sink) {
    if (outside_window(time)) {
      outside_ += count;
      return;
    }
    // Invalid UTF-8 repaired as the daemon's engine repairs it (core/utf8.h): a replayed
    // line reads as the collected one did.
    const LogLine line{file_.host, file_.source, time, seq, trusted, to_valid_utf8(text)};
    for (uint64_t k = 0; k < count; ++k) sink(line);
    lines_ += count;
  }

  const Bundle& bundle_;
  const BundleFile& file_;
  const TimeContext& context_;
  bool trusted_;
  TimeUs boot_ = 0;  // the host's boot time, when has_boot_ (an optional here: gcc 12 warns it maybe unset)
  bool has_boot_ = false;
  uint64_t lines_ = 0;
  uint64_t outside_ = 0;  // outside the evidence window
  uint64_t no_boot_ = 0;  // bare dmesg stamps on a host without a boot time
  uint64_t no_year_ = 0;  // year-less stamps without a reference
};

// Job nodes with no directory: the evidence that could decide may be exactly what is
// missing, so the verdict says so, for every source family the other nodes have. (A node
// with a directory but without, say, slurm.log is not reported: many streams exist only
// on some nodes, and the bundle cannot tell "not collected" from "not configured".)
void add_missing_nodes(const Bundle& bundle, std::vector<Coverage>& coverage) {
  std::set<std::string> job_nodes(bundle.job.nodes.begin(), bundle.job.nodes.end());
  std::set<std::string> families;
  for (const BundleFile& f : bundle.files)
    if (job_nodes.count(f.host)) families.insert(source_family(f.source));
  if (families.empty()) families.insert("kernel");
  const std::set<std::string> hosts(bundle.hosts.begin(), bundle.hosts.end());
  for (const std::string& node : job_nodes) {
    if (hosts.count(node)) continue;
    for (const std::string& family : families) {
      Coverage c;
      c.node = node;
      c.source = family;
      c.status = CoverageStatus::Unavailable;
      c.window_start = bundle.window_start;
      c.window_end = bundle.window_end;
      c.detail = "no " + node + "/ directory in the bundle";
      coverage.push_back(std::move(c));
    }
  }
}

}  // namespace

bool bundle_source_trusted(const std::string& source) { return source_family(source) != "app"; }

Result<Bundle> open_bundle(const fs::path& dir, const BundleOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error{kBundleIo, dir.string() + ": not a directory"};
  Bundle bundle;
  bundle.dir = dir;
  auto job = read_file(dir / "job.json");
  if (!job) return Error{kBundleIo, (dir / "job.json").string() + ": cannot read (every bundle needs job.json)"};
  if (Status s = read_job_json(*job, bundle); !s) return s.error();
  if (fs::exists(dir / kCoverageFile, ec)) {
    auto coverage = read_file(dir / kCoverageFile);
    if (!coverage) return coverage.error();
    if (Status s = read_coverage_json(*coverage, bundle); !s) return s.error();
  }
  set_default_window(bundle, options);
  if (Status s = read_host_directories(dir, bundle); !s) return s.error();
  sort_streams(bundle);
  return bundle;
}

Result<Bundle> open_bundle(BundleFiles files, const BundleOptions& options) {
  Bundle bundle;
  auto job = files.find("job.json");
  if (job == files.end()) return Error{kBundleIo, "job.json: cannot read (every bundle needs job.json)"};
  if (Status s = read_job_json(job->second, bundle); !s) return s.error();
  if (auto coverage = files.find(kCoverageFile); coverage != files.end()) {
    if (Status s = read_coverage_json(coverage->second, bundle); !s) return s.error();
  }
  set_default_window(bundle, options);
  if (Status s = take_host_files(std::move(files), bundle); !s) return s.error();
  sort_streams(bundle);
  return bundle;
}

Result<std::vector<Coverage>> read_bundle_lines(const Bundle& bundle, const std::function<void(const LogLine&)>& sink,
                                                const std::function<uint64_t(const LineRun&)>& runs) {
  auto dating = date_bundle(bundle);
  if (!dating) return dating.error();
  std::vector<Coverage> coverage;
  for (const BundleFile& file : bundle.files) {
    StreamReader reader(bundle, file, *dating);
    Status s = runs && reader.fits_one_run() ? reader.read_run(runs) : reader.read_lines(sink);
    if (!s) return s.error();
    coverage.push_back(reader.coverage());
  }
  // The rows as the collection reported them (why a source was partial, failed or timed
  // out) say more than the files: they are the report.
  if (bundle.recorded_coverage) return *bundle.recorded_coverage;
  add_missing_nodes(bundle, coverage);
  return coverage;
}

void count_events(std::vector<Coverage>& coverage, const std::vector<Event>& events) {
  std::map<std::pair<std::string, std::string>, uint64_t> per_stream;
  for (const Event& e : events) per_stream[{e.node, e.source}] += 1;
  for (Coverage& c : coverage) {
    auto it = per_stream.find({c.node, c.source});
    c.events = it == per_stream.end() ? 0 : it->second;
  }
}

Result<Verdict> replay_bundle(const Bundle& bundle, std::shared_ptr<const RulePack> pack) {
  if (!pack) return Error{kBundlePack, "no rule pack loaded"};
  Extractor extractor(pack);
  auto coverage = read_bundle_lines(
      bundle, [&](const LogLine& line) { extractor.feed(line); },
      [&](const LineRun& run) { return extractor.feed_lines(run); });
  if (!coverage) return coverage.error();
  std::vector<Event> events = extractor.finish();
  count_events(*coverage, events);
  return correlate(*pack, bundle.job, std::move(events), std::move(*coverage));
}

Result<Verdict> replay_bundle(const fs::path& dir, std::shared_ptr<const RulePack> pack, const BundleOptions& options) {
  auto bundle = open_bundle(dir, options);
  if (!bundle) return bundle.error();
  return replay_bundle(*bundle, std::move(pack));
}

std::vector<std::filesystem::path> list_bundles_with(const std::filesystem::path& root, const std::string& marker) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / marker)) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace attrib::rules
