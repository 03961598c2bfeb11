// The rules engine's public API: load a rule pack, extract events from lines,
// correlate events with the job's facts into a verdict.
//
// Stages are separate so that extraction can run where the logs are (node agents)
// and correlation on the head, and so that attrib-replay and attributiond share
// exactly the same code path.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/line_run.h"
#include "core/result.h"
#include "core/types.h"
#include "core/verdict.h"

namespace attrib::rules {

class RulePack;  // immutable once loaded; share with std::shared_ptr<const RulePack>

struct LoadOptions {
  std::filesystem::path pack_dir;                // shipped pack (rules/pack + rules/data)
  std::vector<std::filesystem::path> site_dirs;  // site rules; overriding must be explicit
};

// Loads and compiles every rule file. Errors name file:line and field with a stable code.
Result<std::shared_ptr<const RulePack>> load_rule_pack(const LoadOptions& options);

std::string pack_version(const RulePack& pack);
std::string pack_hash(const RulePack& pack);  // "sha256:<hex>" over the loaded files

// What a pack holds, for `attrib-rules validate` and tests.
struct PackStats {
  std::string name;
  std::string version;
  std::vector<std::string> files;  // every file loaded (manifest, rule files, data, site files)
  size_t extraction_rules = 0;
  size_t correlation_rules = 0;
  size_t examples = 0;     // inline examples checked at load time
  size_t block_rules = 0;  // multi-line extraction rules (`block:`)
  // The one-pass candidate scan: rules found by their prefilter literals, by their regex
  // (Hyperscan prefilter mode), and "rule-id: why" for those RE2 must try on every line
  // of their sources because Hyperscan cannot stand in for them.
  size_t scan_literal_rules = 0;
  size_t scan_regex_rules = 0;
  std::vector<std::string> scan_fallbacks;
};
PackStats pack_stats(const RulePack& pack);

// What an event kind the pack extracts can be (docs/rules.md, "Every kind has a role"): a
// root cause, a symptom some root explains, and/or declared benign.
struct KindRole {
  std::string kind;
  std::vector<std::string> roots;         // "rule-id DOMAIN confidence", by rule id
  std::vector<std::string> explained_by;  // ids of the rules that list it as a symptom
  bool benign = false;                    // declared in a rule file's `benign:`
};
// Every kind some extraction rule produces, sorted by kind.
std::vector<KindRole> kind_roles(const RulePack& pack);

// One row of a data table loaded as rules (e.g. the Xid catalog), as the engine reads it.
struct CatalogEntry {
  std::string key;             // e.g. "79"
  std::string name;            // e.g. "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"
  std::string domain_hint;     // the table's own column
  std::string domain;          // verdict domain; UNATTRIBUTED when the table cannot tell
  std::string severity;        // fatal | job-fatal | degraded | benign
  std::string action;          // verdict recommended_action
  bool root_eligible = false;  // may be a root cause by itself (known domain, not benign)
};
// Rows of the named table in key order (numeric keys numerically); empty if no such table.
std::vector<CatalogEntry> catalog_entries(const RulePack& pack, const std::string& table);

// Streams lines through the extraction rules. Identical events (same node, source,
// kind, fields and line text) are folded into one with a count, so memory is bounded
// by the number of distinct events, not by the number of lines.
class Extractor {
 public:
  explicit Extractor(std::shared_ptr<const RulePack> pack);
  // Distinct events beyond max_distinct_events in all, or beyond
  // max_distinct_per_stream in one (node, source), are dropped (and counted) so that a
  // flood of *different* lines cannot exhaust memory, and one noisy stream (a job's
  // output) cannot crowd out another (the kernel's); identical lines always fold.
  Extractor(std::shared_ptr<const RulePack> pack, size_t max_distinct_events,
            size_t max_distinct_per_stream = kDefaultMaxDistinctEventsPerStream);
  ~Extractor();
  Extractor(const Extractor&) = delete;
  Extractor& operator=(const Extractor&) = delete;

  void feed(const LogLine& line);

  // Many lines of one stream at once (core/line_run.h): the fast path of file sources
  // (docs/benchmarks.md, extraction). The same events as feed() of each line in order, but
  // one candidate scan covers the whole run, and only lines a rule may match are split
  // off, dated (`prefix`) and fed; the others cost the scan alone.
  // Returns the number of lines in the run (the next run's first_seq is first_seq + it).
  uint64_t feed_lines(const LineRun& run);
  // Events in deterministic order (time, node, source, seq), ids not yet assigned.
  std::vector<Event> finish();
  // Distinct events dropped because of either cap.
  uint64_t dropped_events() const;
  // The same, per (node, source) that lost any: its coverage is partial.
  struct Dropped {
    std::string node;
    std::string source;
    uint64_t events = 0;
  };
  std::vector<Dropped> dropped_by_stream() const;

  static constexpr size_t kDefaultMaxDistinctEvents = 200000;
  static constexpr size_t kDefaultMaxDistinctEventsPerStream = 20000;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The most symptoms, and the most unexplained events, a verdict lists; the rest are
// counted (Verdict::symptoms_omitted, unexplained_omitted). Trusted events are listed
// first, then in event order: a storm of distinct application lines leaves the kernel's
// reports in the verdict.
inline constexpr size_t kMaxListedEvents = 1000;

// Decides the verdict from the job's facts, all events and the coverage report.
// Deterministic: the same inputs give the same verdict regardless of input order.
Verdict correlate(const RulePack& pack, const JobFacts& job, std::vector<Event> events, std::vector<Coverage> coverage);

}  // namespace attrib::rules
