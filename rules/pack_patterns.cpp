// extraction_patterns(): read-only view of the compiled pack (attrib/rules/pack_patterns.h).
#include "rules/pack_patterns.h"

#include "rules/rule_pack.h"

namespace attrib::rules {

std::vector<ExtractionPattern> extraction_patterns(const RulePack& pack) {
  std::vector<ExtractionPattern> out;
  out.reserve(pack.extraction.size());
  for (const auto& rule : pack.extraction) {
    out.push_back({rule.def.id, rule.def.regex, rule.def.block ? rule.def.block->end : std::string()});
  }
  return out;
}

}  // namespace attrib::rules
