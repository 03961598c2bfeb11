// The pack's extraction regexes, for tools (attrib-rules export-patterns: one pattern a
// line, e.g. to benchmark the engine's scan against ripgrep on the same corpus).
#pragma once

#include <string>
#include <vector>

#include "rules/engine.h"

namespace attrib::rules {

struct ExtractionPattern {
  std::string rule;       // extraction rule id
  std::string regex;      // RE2 syntax as written in the rule file (a block rule's first line)
  std::string block_end;  // a block rule's `block.end` regex; empty for one-line rules
};

// In load order.
std::vector<ExtractionPattern> extraction_patterns(const RulePack& pack);

}  // namespace attrib::rules
