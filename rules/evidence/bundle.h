// Evidence bundle v1 (docs/verdict-and-bundle.md, docs/rules.md "Evidence bundles"):
// a directory with job.json and <host>/<source>.log|.jsonl files, or the same files in
// memory, read into the same LogLine stream and coverage report a live collection
// produces, so that attrib-replay and attributiond decide with exactly the same engine path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/line_run.h"
#include "core/result.h"
#include "core/types.h"
#include "core/verdict.h"
#include "rules/engine.h"

namespace attrib::rules {

// A bundle in memory: path relative to the bundle directory ("job.json", "n1/kernel.log")
// -> content, as common::unpack_evidence returns an archived one.
using BundleFiles = std::map<std::string, std::string>;

// One stream of the bundle: <host>/<source>.log or <host>/<source>.jsonl.
struct BundleFile {
  std::string host;
  std::string source;  // kernel | syslog | fabricmanager | slurm | app | app.rank<N>
  // What messages call it: <dir>/<host>/<file> of a directory, <host>/<file> in memory.
  std::filesystem::path path;
  bool journal_json = false;  // .jsonl: journalctl -o json lines
  std::string content;        // the whole file: a directory's is read when it is opened
};

// The optional file of a bundle holding the coverage rows as the collection reported them
// (to_json(Coverage) each: status, lines, detail, window), written with the raw evidence
// the daemon archives: replay reports them instead of what the files alone can tell.
inline constexpr const char* kCoverageFile = "coverage.json";

struct Bundle {
  std::filesystem::path dir;  // empty for a bundle opened from memory
  std::optional<std::vector<Coverage>> recorded_coverage;  // coverage.json, when present
  JobFacts job;
  // The evidence window: job.json "window", else [start - lead, end + grace] when both
  // times are known; none disables window filtering.
  std::optional<TimeUs> window_start;
  std::optional<TimeUs> window_end;
  bool explicit_window = false;
  int64_t utc_offset_s = 0;        // job.json "utc_offset" ("+02:00"): local clock of the logs
  std::vector<BundleFile> files;   // sorted by (host, source); order never changes the verdict
  std::vector<std::string> hosts;  // every host directory, sorted
};

// The daemon's defaults (head.window_lead_s / head.window_grace_s), so that replay and
// attributiond look at the same slice of a log.
struct BundleOptions {
  int64_t window_lead_s = 300;
  int64_t window_grace_s = 60;
};

// Every sub-directory of root that holds a file named `marker` (a fixture's expected.json,
// a corpus incident's incident.json), sorted by name.
std::vector<std::filesystem::path> list_bundles_with(const std::filesystem::path& root, const std::string& marker);

// job.json's fields (job facts, window, utc_offset) into bundle; errors BUNDLE_E_JOB
// ("job.json: <field>: message"). The attribution API's `job` object is read with it.
Status job_from_json(const nlohmann::json& job, Bundle& bundle);

// Reads job.json and every stream of a bundle directory. Errors (code, "file:line: field:
// message"): BUNDLE_E_IO (missing or unreadable), BUNDLE_E_JOB (job.json invalid),
// BUNDLE_E_SOURCE (a file that is no known source), BUNDLE_E_HOST (a host entry that is not
// a directory).
Result<Bundle> open_bundle(const std::filesystem::path& dir, const BundleOptions& options = {});
// The same for files in memory, never touching the filesystem (the attribution API, a run's
// archived evidence): a name "<host>/..." is in host directory <host>, top-level names are
// not evidence. The same errors, naming the relative path; the contents are moved into the
// bundle, not copied.
Result<Bundle> open_bundle(BundleFiles files, const BundleOptions& options = {});

// Streams every line of every file (in bundle.files order) to sink as LogLines and
// returns the coverage report: the recorded rows when the bundle has coverage.json, else
// one row per stream, plus `unavailable` rows for job nodes with no directory in the
// bundle (one per source family the other nodes have). Events are not counted here
// (count_events fills Coverage::events after extraction, as the daemon does).
// Error: BUNDLE_E_JSON (a bad .jsonl line, with file:line).
// `runs`, when given, takes each <source>.log file whole as one run of lines instead
// (core/line_run.h; Extractor::feed_lines, as the collectors hand files over): the same
// lines, seqs and times, each dated once for the coverage count, but scanned at once.
Result<std::vector<Coverage>> read_bundle_lines(const Bundle& bundle, const std::function<void(const LogLine&)>& sink,
                                                const std::function<uint64_t(const LineRun&)>& runs = {});

// Coverage::events = the number of distinct events of that node and source.
void count_events(std::vector<Coverage>& coverage, const std::vector<Event>& events);

// open_bundle + Extractor + correlate: what attrib-replay prints.
Result<Verdict> replay_bundle(const std::filesystem::path& dir, std::shared_ptr<const RulePack> pack,
                              const BundleOptions& options = {});
// The same for an already opened bundle (tests reorder bundle.files).
Result<Verdict> replay_bundle(const Bundle& bundle, std::shared_ptr<const RulePack> pack);

// Is `source` trusted when read from a bundle file? kernel, syslog, fabricmanager and
// slurm are root-written logs; app and app.rank<N> are the user's output.
bool bundle_source_trusted(const std::string& source);

}  // namespace attrib::rules
