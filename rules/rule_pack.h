// The compiled, immutable rule pack (engine.h forward-declares RulePack).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

#include "rules/catalog_loader.h"
#include "rules/engine.h"
#include "rules/rule_definitions.h"

namespace attrib::rules {

namespace detail {

struct CompiledField {
  std::string name;
  FieldType type = FieldType::String;
  int group = 0;  // RE2 capture group index
};

struct CompiledBlock {
  std::unique_ptr<re2::RE2> end;
  std::vector<CompiledField> end_fields;  // typed named groups of `end`
  std::unique_ptr<re2::RE2> abort;        // optional
  std::vector<CompiledField> abort_fields;
};

// How the one-pass candidate scan (candidate_scan.h) finds lines for a rule.
enum class ScanMode {
  Literal,  // the prefilter literals: exactly the old "contains one literal" test
  Regex,    // no prefilter: the regex compiled by Hyperscan in prefilter mode (a superset)
  Always,   // nothing usable (Hyperscan refused the pattern, or its semantics may differ
            // from RE2's): every line of the rule's sources is a candidate
};

struct CompiledExtractionRule {
  ExtractionRuleDef def;
  std::unique_ptr<re2::RE2> regex;
  std::vector<CompiledField> fields;
  std::optional<CompiledBlock> block;
  ScanMode scan = ScanMode::Always;
  std::string scan_note;  // why a rule is scanned Always (reported by pack_stats)
};

struct CompiledCorrelationRule {
  CorrelationRuleDef def;
  bool requires_trusted = false;
};

// The event kind the correlator synthesises from the accounting record.
inline constexpr const char* kJobStateKind = "slurm.job_state";
// The synthetic event of a node's repeated unexplained failures (JobFacts::repeated_failures).
inline constexpr const char* kRepeatedFailuresKind = "node.repeated_failures";
// The domain of a locator rule: it points where a failure showed first, not why.
inline constexpr const char* kLocatorDomain = "UNATTRIBUTED";

// Applies one extraction rule to a payload: literal prefilter, then the regex, then
// typed conversion of captures. nullopt when the line does not match (or a typed
// capture does not convert, e.g. an int group that captured "abc"). `from_start`: the
// regex must match at the payload's first character (a system log's message, which may
// carry user-chosen text later on); otherwise anywhere (an application's output).
std::optional<nlohmann::json> match_line(const CompiledExtractionRule& rule, std::string_view text, bool from_start);

// Does `rule` apply to lines of `source`? ("app" covers every app.rank<N> stream.)
bool rule_applies(const ExtractionRuleDef& rule, const std::string& source);

// A finished multi-line block: its first line's position and the merged captures.
struct CompletedBlock {
  std::optional<TimeUs> time;  // of the first line
  uint64_t seq = 0;            // of the first line
  bool trusted = false;        // of the first line
  std::string line;            // first and last line, joined by '\n'
  nlohmann::json fields;       // start captures and constants, then the end's captures
};

// The open blocks of one block rule in one (node, source) stream. Memory is bounded:
// a block keeps two lines and its captures, blocks expire after `max_lines` lines and
// at most kMaxOpenBlocks are open at once (the oldest is dropped first).
class BlockTracker {
 public:
  static constexpr size_t kMaxOpenBlocks = 64;

  bool empty() const { return open_.empty(); }
  // Line `index` (1-based position in the stream) closes the open block of its key
  // when it matches the rule's end pattern within max_lines; expired blocks are dropped.
  std::optional<CompletedBlock> close(const CompiledExtractionRule& rule, uint64_t index, std::string_view text,
                                      bool from_start);
  // Opens (or restarts) the block of the start line's key.
  void open(const CompiledExtractionRule& rule, uint64_t index, std::string_view text, std::optional<TimeUs> time,
            uint64_t seq, bool trusted, nlohmann::json start_fields);

 private:
  struct Open {
    uint64_t first_index = 0;
    std::optional<TimeUs> time;
    uint64_t seq = 0;
    bool trusted = false;
    std::string first_line;
    nlohmann::json fields;
  };
  std::map<std::string, Open> open_;  // by key value ("" without a key)
};

// Splits a multi-line payload into its physical lines ("a\nb\n" -> a, b).
std::vector<std::string_view> split_lines(std::string_view text);

class CandidateScanner;

}  // namespace detail

class RulePack {
 public:
  std::string name;
  std::string version;
  std::string hash;  // "sha256:<hex>"
  int64_t clock_skew_us = 0;
  std::vector<std::string> files;
  size_t examples = 0;
  std::vector<detail::CompiledExtractionRule> extraction;    // in load order
  std::vector<detail::CompiledCorrelationRule> correlation;  // by (precedence desc, id)
  std::map<std::string, detail::CatalogTable> catalogs;
  std::set<std::string> benign_kinds;  // declared `benign:` in a rule file
  // One-pass candidate scan over all rules of a source; null in the RE2-only reference
  // mode (load_rule_pack_without_scan), where every rule's prefilter and regex run per line.
  std::shared_ptr<const detail::CandidateScanner> scanner;
};

namespace detail {
// The pack without its candidate scan: the old per-rule path, kept as the reference the
// scan is tested against (tests/unit/rules/candidate_scan_test.cpp).
Result<std::shared_ptr<const RulePack>> load_rule_pack_without_scan(const LoadOptions& options);
}  // namespace detail

}  // namespace attrib::rules
