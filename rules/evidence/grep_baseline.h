// The grep baseline that `attrib-rules eval` compares the pack with: a handful of
// priority-ordered regexes over every line of a bundle, the way sites script failure
// triage today (docs/accuracy.md). The first pattern, in priority order, that matches any
// line names the domain; none names UNATTRIBUTED. It has no notion of trust, symptoms or
// confidence, which is the point of the comparison.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace re2 {
class RE2;
}

namespace attrib::rules {

struct GrepPattern {
  std::string domain;
  std::string regex;  // RE2, case-insensitive
};

// The patterns in priority order (fixed: the baseline must not be tuned to a corpus).
const std::vector<GrepPattern>& grep_baseline_patterns();

// Classifies the text of a bundle's lines.
class GrepBaseline {
 public:
  GrepBaseline();
  ~GrepBaseline();
  GrepBaseline(const GrepBaseline&) = delete;
  GrepBaseline& operator=(const GrepBaseline&) = delete;

  void feed(const std::string& line);
  std::string domain() const;  // the best (lowest index) pattern seen, or UNATTRIBUTED

 private:
  std::vector<std::unique_ptr<re2::RE2>> compiled_;  // parallel to grep_baseline_patterns()
  size_t best_;
};

}  // namespace attrib::rules
