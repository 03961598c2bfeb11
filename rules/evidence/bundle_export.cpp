// Evidence -> bundle v1 (attrib/rules/bundle_export.h).
#include "rules/evidence/bundle_export.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "rules/evidence/bundle.h"
#include "rules/rule_definitions.h"
#include "rules/rule_pack.h"

namespace attrib::rules {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// An archived stream's compact records (archive_files), never a bundle file of its own.
constexpr const char* kArchivedLinesSuffix = ".attrib-lines";

Error export_error(const std::string& message) { return Error{kBundleExport, message}; }

// A node name becomes a directory name: nothing that could leave the bundle.
bool safe_component(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name[0] != '.' && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

// One exported line: every event extracted from one occurrence of one raw line. The text
// is a view into the events or raw lines being exported, which outlive the export.
struct LineKey {
  uint64_t seq;
  std::optional<TimeUs> time;
  std::string_view line;
  bool trusted;
  bool operator<(const LineKey& o) const {
    return std::tie(seq, time, line, trusted) < std::tie(o.seq, o.time, o.line, o.trusted);
  }
};

// One `journalctl -o json`-shaped line, as json_text of the object with these members
// writes it (members in key order), written directly: a raw export has one per line.
void append_journal_entry(std::string& out, const std::string& node, const std::string& source, const LineKey& key,
                          uint64_t count) {
  auto member = [&](const char* name, std::string_view value) {
    out += out.back() == '{' ? "\"" : ",\"";
    out += name;
    out += "\":";
    append_json_string(out, value);
  };
  out += '{';
  if (count > 1) member("ATTRIB_COUNT", std::to_string(count));
  member("ATTRIB_SEQ", std::to_string(key.seq));
  member("MESSAGE", key.line);
  member("_HOSTNAME", node);
  // Trust as the bundle reader reads it back: the kernel stream must be the kernel
  // transport, daemons' lines must be root's. The original uid is not archived; 65534
  // (nobody) only says "not root".
  if (source == "kernel") member("_TRANSPORT", key.trusted ? "kernel" : "stdout");
  if (source == "syslog" || source == "fabricmanager") member("_UID", key.trusted ? "0" : "65534");
  if (key.time) member("__REALTIME_TIMESTAMP", std::to_string(*key.time));
  out += "}\n";
}

}  // namespace

namespace {

using Streams = std::map<std::pair<std::string, std::string>, std::map<LineKey, uint64_t>>;

json job_json(const JobFacts& facts, std::optional<TimeUs> window_start, std::optional<TimeUs> window_end) {
  json job = json::object();
  job["job_id"] = facts.job_id;
  job["cluster"] = facts.cluster;
  job["attempt"] = facts.attempt;
  job["state"] = facts.state;
  job["exit_code"] = facts.exit_code;
  job["signal"] = facts.signal;
  if (facts.start) job["start"] = format_time(*facts.start);
  if (facts.end) job["end"] = format_time(*facts.end);
  job["nodes"] = facts.nodes;
  if (!facts.components.empty()) job["components"] = components_to_json(facts.components);
  if (facts.restarts > 0) job["restarts"] = facts.restarts;
  if (!facts.scheduler.empty()) job["scheduler"] = facts.scheduler;
  if (!facts.allocation.empty() || facts.uid) job["allocation"] = allocation_to_json(facts.allocation, facts.uid);
  if (!facts.repeated_failures.empty()) job["repeated_failures"] = repeated_failures_to_json(facts.repeated_failures);
  if (!facts.ranks.empty()) {
    json ranks = json::object();
    for (const auto& [rank, node] : facts.ranks) ranks[std::to_string(rank)] = node;
    job["ranks"] = ranks;
  }
  if (window_start && window_end) job["window"] = {format_time(*window_start), format_time(*window_end)};
  return job;
}

// job.json and one <node>/<source>.jsonl per stream (an empty stream: read, said nothing).
Result<BundleFiles> files_of(const json& job, const Streams& streams) {
  BundleFiles files;
  files["job.json"] = job.dump(2) + "\n";
  for (const auto& [stream, lines] : streams) {
    const auto& [node, source] = stream;
    if (!safe_component(node)) return export_error("node '" + node + "' is not a host name");
    if (!detail::is_known_source(source)) return export_error("source '" + source + "' has no bundle file name");
    std::string& out = files[node + "/" + source + ".jsonl"];
    for (const auto& [key, count] : lines) append_journal_entry(out, node, source, key, count);
  }
  return files;
}

// A row whose source was read (ok, empty, partial), as opposed to failed or missing.
bool was_read(const Coverage& c) {
  return c.status == CoverageStatus::Ok || c.status == CoverageStatus::Empty || c.status == CoverageStatus::Partial;
}

// Coverage rows that were read get a stream even without a line, so the node does not
// look unavailable on replay.
void add_read_streams(Streams& streams, const std::vector<Coverage>& coverage) {
  for (const Coverage& c : coverage)
    if (was_read(c) && safe_component(c.node) && detail::is_known_source(c.source)) streams[{c.node, c.source}];
}

// One archived stream's records as the lines a bundle writes: ordered and counted as
// write_bundle's map does, without a tree node per line (records come in seq order, so
// the sort is a check). The keys' text points into `records`.
Result<std::vector<std::pair<LineKey, uint64_t>>> journal_lines(std::string_view records) {
  std::vector<std::pair<LineKey, uint64_t>> lines;
  auto decoded =
      RawStream::decode(records, [&](uint64_t seq, std::optional<TimeUs> time, bool trusted, std::string_view text) {
        lines.push_back({LineKey{seq, time, text, trusted}, 1});
      });
  if (!decoded) return decoded.error();
  const auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(lines.begin(), lines.end(), by_key)) std::stable_sort(lines.begin(), lines.end(), by_key);
  // The same line read twice (by the head and the node's agent): once, as often as read.
  size_t kept = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (kept > 0 && !(lines[kept - 1].first < lines[i].first))
      ++lines[kept - 1].second;
    else
      lines[kept++] = lines[i];
  }
  lines.resize(kept);
  return lines;
}

}  // namespace

Status write_bundle_files(const fs::path& dir, const BundleFiles& files) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) return export_error(dir.string() + ": exists and is not empty");
  fs::create_directories(dir, ec);
  if (ec) return export_error(dir.string() + ": " + ec.message());
  for (const auto& [name, content] : files) {
    const fs::path relative(name);
    for (const auto& part : relative)
      if (!safe_component(part.string())) return export_error("bundle file '" + name + "' leaves the bundle");
    const fs::path path = dir / relative;
    fs::create_directories(path.parent_path(), ec);
    if (ec) return export_error(path.parent_path().string() + ": " + ec.message());
    std::ofstream out(path, std::ios::binary);
    out << content;
    if (!out) return export_error(path.string() + ": cannot write");
  }
  return ok_status();
}

Result<Bundle> open_archived_bundle(BundleFiles files) {
  auto bundle_files = archived_bundle_files(std::move(files));
  if (!bundle_files) return bundle_files.error();
  return open_bundle(std::move(*bundle_files));
}

Status write_bundle(const fs::path& dir, const JobFacts& facts, const std::vector<Event>& events,
                    const std::vector<Coverage>& coverage) {
  Streams streams;
  std::optional<TimeUs> earliest, latest;
  const auto span = [&](std::optional<TimeUs> t) {
    if (!t) return;
    if (!earliest || *t < *earliest) earliest = t;
    if (!latest || *t > *latest) latest = t;
  };
  for (const Event& e : events) {
    if (e.node.empty() && e.kind == detail::kJobStateKind) continue;  // the accounting record, not a log line
    if (e.kind == detail::kRepeatedFailuresKind) continue;    // the archive's counts: job.json has them
    if (!safe_component(e.node)) return export_error("event " + e.id + ": node '" + e.node + "' is not a host name");
    if (!detail::is_known_source(e.source))
      return export_error("event " + e.id + ": source '" + e.source + "' has no bundle file name");
    // Several rules may extract from one line: it is written once, as often as it occurred.
    uint64_t& count = streams[{e.node, e.source}][LineKey{e.seq, e.time, e.line, e.trusted}];
    count = std::max(count, e.count);
    span(e.time);
  }
  add_read_streams(streams, coverage);
  for (const Coverage& c : coverage) {
    if (!was_read(c)) continue;
    span(c.window_start);
    span(c.window_end);
  }
  span(facts.start);
  span(facts.end);
  // The window the evidence was collected in, widened to every exported line, so that
  // replay filters nothing out whatever lead/grace the daemon was configured with.
  auto files = files_of(job_json(facts, earliest, latest), streams);
  if (!files) return files.error();
  return write_bundle_files(dir, *files);
}

Result<BundleFiles> archive_files(const JobFacts& facts, RawEvidence evidence) {
  BundleFiles files;
  files["job.json"] = job_json(facts, evidence.window_start, evidence.window_end).dump(2) + "\n";
  json coverage = json::array();
  for (const Coverage& c : evidence.coverage) coverage.push_back(to_json(c));
  files[kCoverageFile] = coverage.dump(2) + "\n";
  std::map<RawLines::Key, RawStream> streams = std::move(evidence.lines).release_streams();
  // As add_read_streams: a row read gets its (maybe empty) stream; one named unsafely, none.
  for (const Coverage& c : evidence.coverage)
    if (was_read(c) && safe_component(c.node) && detail::is_known_source(c.source)) streams[{c.node, c.source}];
  for (auto& [key, stream] : streams) {
    const auto& [node, source] = key;
    if (!safe_component(node)) return export_error("node '" + node + "' is not a host name");
    if (!detail::is_known_source(source)) return export_error("source '" + source + "' has no bundle file name");
    files[node + "/" + source + kArchivedLinesSuffix] = std::move(stream).release_records();
  }
  return files;
}

Result<BundleFiles> archived_bundle_files(BundleFiles files) {
  std::vector<std::string> archived;
  for (const auto& [name, content] : files)
    if (name.ends_with(kArchivedLinesSuffix)) archived.push_back(name);
  for (const std::string& name : archived) {
    const auto damaged = [&](const std::string& what) { return Error{kEvidenceUnpack, name + ": " + what}; };
    const std::string stem = name.substr(0, name.size() - std::strlen(kArchivedLinesSuffix));
    const size_t slash = stem.find('/');
    if (slash == std::string::npos) return damaged("not <node>/<source>");
    const std::string node = stem.substr(0, slash), source = stem.substr(slash + 1);
    if (!safe_component(node) || !detail::is_known_source(source)) return damaged("not <node>/<source>");
    auto lines = journal_lines(files[name]);
    if (!lines) return damaged(lines.error().message);
    std::string out;
    for (const auto& [key, count] : *lines) append_journal_entry(out, node, source, key, count);
    if (!files.emplace(stem + ".jsonl", std::move(out)).second)
      return damaged("the stream is also in " + stem + ".jsonl");
    files.erase(name);  // after the .jsonl is written: the lines' text points into it
  }
  return files;
}

Result<BundleFiles> raw_bundle_files(const JobFacts& facts, const RawEvidence& evidence) {
  auto files = archive_files(facts, evidence);
  if (!files) return files.error();
  return archived_bundle_files(std::move(*files));
}

std::vector<Event> events_of_verdict(const Verdict& verdict) {
  std::map<std::string, Event> by_id;
  if (verdict.root_cause) by_id.emplace(verdict.root_cause->event.id, verdict.root_cause->event);
  for (const auto& s : verdict.symptoms) by_id.emplace(s.event.id, s.event);
  for (const auto& e : verdict.unexplained) by_id.emplace(e.id, e);
  for (const auto& n : verdict.neighbours) by_id.emplace(n.event.id, n.event);
  std::vector<Event> out;
  for (auto& [id, e] : by_id) out.push_back(std::move(e));
  return out;
}

// The archive's counts back from their synthetic event (correlator.cpp
// repeated_failure_events): a verdict keeps the event, not the job facts.
NodeFailureHistory repeated_failure_of(const Event& e) {
  NodeFailureHistory h;
  h.node = e.node;
  const auto count = [&](const char* name) -> int64_t {
    auto it = e.fields.find(name);
    return it != e.fields.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  };
  h.other_jobs = static_cast<int>(count("jobs"));
  h.other_users = static_cast<int>(count("users"));
  h.window_s = count("window_s");
  return h;
}

JobFacts facts_from_verdict(const Verdict& verdict) {
  JobFacts facts;
  facts.job_id = verdict.job_id;
  facts.cluster = verdict.cluster;
  facts.attempt = verdict.attempt;
  facts.state = verdict.terminal_state;
  facts.exit_code = verdict.exit_code;
  facts.signal = verdict.signal;
  facts.nodes = verdict.nodes;
  facts.components = verdict.components;
  facts.restarts = verdict.restarts;
  facts.allocation = verdict.allocation;
  facts.uid = verdict.uid;
  // The verdict keeps no start/end; the accounting event (and the archive's counts) are
  // stamped with the job's end, which is the only job time the correlation reads.
  for (const Event& e : events_of_verdict(verdict)) {
    if (e.kind == detail::kJobStateKind && e.node.empty()) facts.end = e.time;
    if (e.kind == detail::kRepeatedFailuresKind) {
      facts.repeated_failures.push_back(repeated_failure_of(e));
      if (!facts.end) facts.end = e.time;  // stamped with the job's end too
    }
  }
  return facts;
}

Status export_verdict_bundle(const fs::path& dir, const Verdict& verdict) {
  return write_bundle(dir, facts_from_verdict(verdict), events_of_verdict(verdict), verdict.coverage);
}

}  // namespace attrib::rules
