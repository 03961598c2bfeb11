// Templates of the lines no rule knows (attrib-rules mine): a Drain-style miner, written
// here. Variable parts are masked first (ids, PCI addresses, IPs, paths, hex, numbers,
// the job's host names), then lines of the same length and first token are clustered by
// the share of tokens they have in common (Drain's similarity): positions where a
// cluster's lines differ become <*>.
//
// Templates are ranked by how many attempts they appear in (attempts that succeeded, the
// baseline, rank a template down: background noise shows there too), then nodes, then how
// often they came before the job's end. Each proposes a site rule skeleton whose regex,
// prefilter and examples come from the real lines and are checked against them here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/types.h"

namespace attrib::rules {

struct MinedLine {
  std::string text;
  std::string node;
  std::string source;
  std::string attempt;  // "<job_id> run <n>": what the template's attempts count
  bool before_end = true;
};

struct LineTemplate {
  std::vector<std::string> tokens;  // literal tokens with masks (<NUM> ...) and <*>
  uint64_t occurrences = 0;
  uint64_t before_end = 0;
  std::set<std::string> attempts;
  std::set<std::string> nodes;
  std::set<std::string> sources;
  std::set<std::string> baseline_attempts;  // successful attempts it also appeared in
  struct Example {
    std::string line;  // verbatim
    std::string attempt;
    std::string node;
  };
  std::vector<Example> examples;  // up to three distinct lines
  std::string text() const;       // tokens joined by single spaces
};

class TemplateMiner {
 public:
  // similarity: the share of a cluster's tokens a line must have at the same positions.
  explicit TemplateMiner(double similarity = 0.5);
  // The job's nodes: their names are masked as <NODE> in its lines.
  void add(const MinedLine& line, const std::set<std::string>& host_names = {});
  // A line of a successful attempt: counted against the template it fits, never a new one.
  void add_baseline(const MinedLine& line, const std::set<std::string>& host_names = {});
  // Best first (see above); ties by text.
  std::vector<LineTemplate> ranked() const;
  size_t lines() const { return lines_; }

 private:
  std::optional<size_t> best_cluster(const std::vector<std::string>& tokens) const;
  double similarity_;
  std::vector<LineTemplate> clusters_;
  std::map<std::pair<size_t, std::string>, std::vector<size_t>> groups_;  // (length, first token) -> clusters
  size_t lines_ = 0;
};

// The masked tokens of a line (what the miner clusters).
std::vector<std::string> mask_tokens(const std::string& line, const std::set<std::string>& host_names = {});

// A site rule skeleton (YAML, extract + correlate) for the template: its regex matches
// every example line (the examples that it would not match are left out; none left:
// nullopt), a literal prefilter when the template has one, typed string fields with the
// examples' values, the sources seen, and `domain: FILL_IN` for the admin to replace
// (attrib-rules validate refuses the rule until then).
std::optional<std::string> rule_skeleton(const LineTemplate& t, const std::string& id);

}  // namespace attrib::rules
