// One-pass candidate scan (rules.md: "a multi-pattern scan finds candidate lines for all
// rules in one pass; full captures run only on lines that matched").
//
// At pack compile time every source gets one Hyperscan (vectorscan) database built from
// the patterns of all extraction rules that read it: a rule's prefilter literals, or, for
// a rule without a prefilter, its regex compiled in prefilter mode. At feed time one
// hs_scan per line flags the rules whose pattern occurs; only those run RE2. The scan may
// flag too much (RE2 decides) but never too little: a rule whose pattern Hyperscan cannot
// take, or whose meaning could differ from RE2's, is flagged on every line (ScanMode::Always).
//
// Hyperscan types stay out of this header so that code including rule_pack.h needs no
// Hyperscan include path.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_pack.h"

struct hs_database;
struct hs_scratch;

namespace attrib::rules::detail {

struct HsDatabaseDeleter {
  void operator()(hs_database* db) const noexcept;
};
struct HsScratchDeleter {
  void operator()(hs_scratch* scratch) const noexcept;
};
using HsDatabase = std::unique_ptr<hs_database, HsDatabaseDeleter>;
// Scratch is per thread: hs_scan writes into it. Each Extractor owns one (an Extractor
// is used by one thread at a time), cloned from the scanner's prototype.
using HsScratch = std::unique_ptr<hs_scratch, HsScratchDeleter>;

// Decides each rule's ScanMode (and scan_note when Always). Never fails: a pattern
// Hyperscan refuses falls back to Always. Call after the rules' regexes are compiled.
void plan_candidate_scan(std::vector<CompiledExtractionRule>& rules);

// The rules that read one source, with their databases. Database ids are positions in
// `rules`.
struct ScanSet {
  std::vector<const CompiledExtractionRule*> rules;  // load order
  HsDatabase literals;                               // ScanMode::Literal rules' prefilter literals (bytes, exact)
  HsDatabase regexes;                                // ScanMode::Regex rules (UTF-8 patterns, prefilter mode)
  std::vector<uint32_t> regex_rules;                 // positions scanned by `regexes`
  std::vector<uint32_t> always_rules;                // positions flagged on every line
  // The same literals, every occurrence reported: one scan over many lines at once
  // (CandidateScanner::scan_lines). Only for a set whose every rule is a Literal rule: a
  // regex's anchors and classes see line ends differently in a buffer, and an Always rule
  // reads every line anyway.
  HsDatabase buffer_literals;
  size_t longest_literal = 0;  // scan_lines' overlap between pieces of a huge buffer
};

class CandidateScanner {
 public:
  // Builds one ScanSet per source the rules name (every fixed source, every app.rank<N>
  // a rule lists, and one for the other app.rank<N> streams). A database that fails to
  // build demotes its rules to Always (their scan_note says why).
  static std::shared_ptr<const CandidateScanner> build(std::vector<CompiledExtractionRule>& rules);

  // The set for a source; nullptr for a source no rule can read (unknown names).
  const ScanSet* set_for(const std::string& source) const;

  // A scratch for one thread (null when no set has a database).
  HsScratch make_scratch() const;

  // flags[i] = 1 when set.rules[i] may match `text`. Without a scratch, or when a scan
  // fails, every rule is flagged (never miss a line).
  void scan(const ScanSet& set, std::string_view text, hs_scratch* scratch, std::vector<char>& flags) const;

  // Whether scan_lines serves this set (see ScanSet::buffer_literals).
  static bool scans_lines(const ScanSet& set) { return set.buffer_literals != nullptr; }
  // One scan of many lines: `ends` gets the end offset of every literal occurrence in
  // `text`, ascending (a line holding one is a candidate line; the rest are not). False
  // when the scan failed: the caller then treats every line as a candidate.
  bool scan_lines(const ScanSet& set, std::string_view text, hs_scratch* scratch, std::vector<size_t>& ends) const;

 private:
  std::vector<std::unique_ptr<ScanSet>> sets_;
  std::map<std::string, const ScanSet*> by_source_;
  const ScanSet* other_ranks_ = nullptr;  // app.rank<N> streams no rule names explicitly
  HsScratch prototype_;
  mutable std::mutex clone_mutex_;  // hs_clone_scratch reads the prototype; serialise to be safe
};

}  // namespace attrib::rules::detail
