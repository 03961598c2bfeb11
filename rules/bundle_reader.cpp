// Evidence bundle v1 -> job facts, LogLines and coverage (attrib/rules/bundle.h).
//
// Order never matters: files are listed sorted, and everything derived from several
// files (the reference year, a host's boot time) is computed from all of them with
// order-free rules (minimum, median), so a shuffled file list gives the same lines.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/utf8.h"
#include "rules/bundle.h"
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

Status read_job_json(const fs::path& file, Bundle& bundle) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error{kBundleIo, file.string() + ": cannot read (every bundle needs job.json)"};
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e400 (fuzz/)
    return Error{kBundleJob, "job.json: not JSON: " + std::string(e.what())};
  }
  return job_from_json(j, bundle);
}

bool is_system_log(const std::string& source) {
  return source == "kernel" || source == "syslog" || source == "fabricmanager";
}

// The family a source belongs to for coverage: every app.rank<N> is "app".
std::string source_family(const std::string& source) { return source.rfind("app", 0) == 0 ? "app" : source; }

// Calls visit(line_number, text) for every physical line of text already read (1-based),
// as for_each_line below does for a file; stops at an error.
template <typename Visit>
Status for_each_line_in(std::string_view text, Visit&& visit) {
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

// Calls visit(line_number, text) for every physical line (1-based); stops at an error.
template <typename Visit>
Status for_each_line(const fs::path& path, Visit&& visit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{kBundleIo, path.string() + ": cannot read"};
  std::string line;
  uint64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (Status s = visit(number, line); !s) return s;
  }
  if (in.bad()) return Error{kBundleIo, path.string() + ": read error"};
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
    Status s = for_each_line(file.path, [&](uint64_t number, const std::string& text) -> Status {
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

std::string plural(uint64_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

}  // namespace

bool bundle_source_trusted(const std::string& source) { return source_family(source) != "app"; }

// coverage.json: an array of coverage rows (to_json(Coverage)).
static Result<std::vector<Coverage>> read_coverage_json(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error{kBundleIo, file.string() + ": cannot read"};
  json rows;
  try {
    rows = json::parse(in);
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
  return coverage;
}

Result<Bundle> open_bundle(const fs::path& dir, const BundleOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error{kBundleIo, dir.string() + ": not a directory"};
  Bundle bundle;
  bundle.dir = dir;
  if (Status s = read_job_json(dir / "job.json", bundle); !s) return s.error();
  if (fs::exists(dir / kCoverageFile, ec)) {
    auto recorded = read_coverage_json(dir / kCoverageFile);
    if (!recorded) return recorded.error();
    bundle.recorded_coverage = std::move(*recorded);
  }
  if (!bundle.explicit_window && bundle.job.start && bundle.job.end) {
    bundle.window_start = *bundle.job.start - options.window_lead_s * kSecondUs;
    bundle.window_end = *bundle.job.end + options.window_grace_s * kSecondUs;
  }

  // Top-level files other than directories (job.json, a fixture's expected.json, a
  // README) are not evidence; dot entries are skipped everywhere.
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.' || !entry.is_directory()) continue;
    bundle.hosts.push_back(name);
    std::set<std::string> sources;
    std::error_code inner;
    for (const auto& file : fs::directory_iterator(entry.path(), inner)) {
      const std::string fname = file.path().filename().string();
      if (fname.empty() || fname[0] == '.') continue;
      if (!file.is_regular_file())
        return Error{kBundleHost, file.path().string() +
                                      ": a host directory holds only <source>.log or "
                                      "<source>.jsonl files"};
      BundleFile f;
      f.host = name;
      f.path = file.path();
      const std::string ext = file.path().extension().string();
      if (ext == ".jsonl")
        f.journal_json = true;
      else if (ext != ".log")
        return Error{kBundleSource, file.path().string() + ": not a <source>.log or <source>.jsonl file"};
      f.source = file.path().stem().string();
      if (!detail::is_known_source(f.source))
        return Error{kBundleSource, file.path().string() + ": unknown source '" + f.source +
                                        "' (kernel, syslog, fabricmanager, slurm, prometheus, app, app.rank<N>)"};
      if (!sources.insert(f.source).second)
        return Error{kBundleSource, file.path().string() + ": source '" + f.source + "' of host " + name +
                                        " appears twice (.log and .jsonl)"};
      bundle.files.push_back(std::move(f));
    }
    if (inner) return Error{kBundleIo, entry.path().string() + ": " + inner.message()};
  }
  if (ec) return Error{kBundleIo, dir.string() + ": " + ec.message()};
  std::sort(bundle.hosts.begin(), bundle.hosts.end());
  std::sort(bundle.files.begin(), bundle.files.end(), [](const BundleFile& a, const BundleFile& b) {
    return std::tie(a.host, a.source) < std::tie(b.host, b.source);
  });
  return bundle;
}

Result<std::vector<Coverage>> read_bundle_lines(const Bundle& bundle, const std::function<void(const LogLine&)>& sink,
                                                const std::function<uint64_t(const LineRun&)>& runs) {
  TimeContext context;
  context.utc_offset_s = bundle.utc_offset_s;
  context.reference = bundle.job.start ? bundle.job.start : bundle.job.end ? bundle.job.end : bundle.window_start;

  auto first = scan(bundle, context);
  if (!first) return first.error();
  Scan facts = std::move(*first);
  if (!context.reference && facts.earliest_dated && facts.yearless) {
    // No job times: year-less stamps take their year from the bundle's own dated lines,
    // and boot times paired from them are computed again with that year.
    context.reference = facts.earliest_dated;
    auto second = scan(bundle, context);
    if (!second) return second.error();
    facts = std::move(*second);
  }
  std::map<std::string, std::optional<TimeUs>> boots;
  for (auto& [host, estimates] : facts.boot_estimates) boots[host] = boot_time(std::move(estimates));

  std::vector<Coverage> coverage;
  for (const BundleFile& file : bundle.files) {
    Coverage c;
    c.node = file.host;
    c.source = file.source;
    c.window_start = bundle.window_start;
    c.window_end = bundle.window_end;
    uint64_t outside = 0, no_boot = 0, no_year = 0;
    const bool trusted_source = bundle_source_trusted(file.source);
    std::optional<TimeUs> boot;
    if (auto it = boots.find(file.host); it != boots.end() && it->second) boot = *it->second;

    const auto outside_window = [&](std::optional<TimeUs> time) {
      return time && bundle.window_start && bundle.window_end &&
             (*time < *bundle.window_start || *time > *bundle.window_end);
    };
    const auto emit = [&](std::optional<TimeUs> time, uint64_t seq, bool trusted, std::string_view text,
                          uint64_t count) {
      if (outside_window(time)) {
        outside += count;
        return;
      }
      // Invalid UTF-8 repaired as the daemon's engine repairs it (core/utf8.h): a replayed
      // line reads as the collected one did.
      LogLine line{file.host, file.source, time, seq, trusted, to_valid_utf8(text)};
      for (uint64_t k = 0; k < count; ++k) sink(line);
      c.lines += count;
    };

    // A .log file as one run (see read_bundle_lines): each line's prefix as the loop below
    // finds it, by line; a file with '\r' line ends goes line by line (the loop drops them).
    std::string content;
    bool as_run = false;
    std::vector<size_t> starts;  // as_run: each physical line's first byte, as for_each_line numbers them
    std::vector<std::optional<LineRun::Prefix>> prefixes;  // as_run: one per line; nullopt: left out
    if (runs && !file.journal_json) {
      std::ifstream in(file.path, std::ios::binary | std::ios::ate);
      if (!in) return Error{kBundleIo, file.path.string() + ": cannot read"};  // as for_each_line says it
      content.resize(static_cast<size_t>(std::max<std::streamoff>(0, in.tellg())));
      in.seekg(0);
      if (!in.read(content.data(), static_cast<std::streamsize>(content.size())))
        return Error{kBundleIo, file.path.string() + ": read error"};
      as_run = content.find('\r') == std::string::npos;
      if (as_run && !content.empty()) {
        starts.push_back(0);
        for (size_t nl = content.find('\n'); nl != std::string::npos && nl + 1 < content.size();
             nl = content.find('\n', nl + 1))
          starts.push_back(nl + 1);
        prefixes.resize(starts.size());
      }
    }

    const auto visit = [&](uint64_t number, const std::string& text) -> Status {
      if (text.empty()) return ok_status();
      if (file.journal_json) {
        auto entry = parse_journal_json(text);
        if (!entry) return line_error(file, number, entry.error());
        if (!entry->has_message) return ok_status();
        // Like the journald collector: the kernel stream is the kernel transport, and
        // daemons' entries are trusted only when root wrote them.
        bool trusted = trusted_source;
        if (file.source == "kernel" && entry->transport && *entry->transport != "kernel") trusted = false;
        if ((file.source == "syslog" || file.source == "fabricmanager") && entry->uid && *entry->uid != "0")
          trusted = false;
        emit(entry->realtime, entry->seq.value_or(number - 1), trusted, entry->message, entry->count);
        return ok_status();
      }
      const LineStamp stamp = parse_line_stamp(text, context, is_system_log(file.source));
      std::optional<TimeUs> time = stamp.time;
      if (!time && stamp.uptime) {
        if (boot)
          time = *boot + *stamp.uptime;
        else
          ++no_boot;
      }
      if (stamp.year_missing) ++no_year;
      if (as_run) {  // counted as emit counts, handed over below
        if (outside_window(time)) {
          ++outside;
        } else {
          prefixes[number - 1] = LineRun::Prefix{time, stamp.payload_offset};
          ++c.lines;
        }
        return ok_status();
      }
      emit(time, number - 1, trusted_source, std::string_view(text).substr(stamp.payload_offset), 1);
      return ok_status();
    };
    // A file read whole for its run is dated from that read, not read a second time.
    Status s = as_run ? for_each_line_in(content, visit) : for_each_line(file.path, visit);
    if (!s) return s.error();
    if (as_run && !content.empty()) {
      LineRun run;
      run.node = file.host;
      run.source = file.source;
      run.trusted = trusted_source;
      run.text = content;
      run.prefix = [&](std::string_view line) {
        const size_t offset = static_cast<size_t>(line.data() - content.data());
        const size_t index = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), offset) - starts.begin()) - 1;
        return prefixes[index];
      };
      runs(run);
    }

    c.status = c.lines > 0 ? CoverageStatus::Ok : CoverageStatus::Empty;
    std::vector<std::string> notes;
    if (outside) notes.push_back(plural(outside, "line") + " outside the evidence window");
    if (no_boot) notes.push_back(plural(no_boot, "dmesg line") + " without a boot time (order only)");
    if (no_year) notes.push_back(plural(no_year, "line") + " without a year (order only)");
    for (const auto& n : notes) c.detail += (c.detail.empty() ? "" : "; ") + n;
    coverage.push_back(std::move(c));
  }

  // The rows as the collection reported them (why a source was partial, failed or timed
  // out) say more than the files: they are the report.
  if (bundle.recorded_coverage) return *bundle.recorded_coverage;

  // Job nodes with no directory: the evidence that could decide may be exactly what is
  // missing, so the verdict says so, for every source family the other nodes have. (A node
  // with a directory but without, say, slurm.log is not reported: many streams exist only
  // on some nodes, and the bundle cannot tell "not collected" from "not configured".)
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
