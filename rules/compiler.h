// Rule definitions -> compiled RulePack: regexes compiled, references resolved,
// trust and templates checked, every inline example run.
#pragma once

#include <memory>
#include <vector>

#include "rules/rule_pack.h"

namespace attrib::rules::detail {

struct DefinitionSet {
  PackManifest manifest;
  std::vector<RuleFileDefs> shipped;  // pack rule files, in manifest order
  std::vector<RuleFileDefs> site;     // site rule files, in load order
  std::map<std::string, CatalogTable> catalogs;
};

// Throws LoadFailure on the first problem. Without `candidate_scan` the pack has no
// scanner (the RE2-only reference mode tests compare the scan against).
std::unique_ptr<RulePack> compile_pack(DefinitionSet definitions, bool candidate_scan = true);

// Placeholders of a summary template ("{pci} on {node}" -> pci, node). Throws on
// unbalanced braces.
std::vector<std::string> template_placeholders(const std::string& text, const SourceLocation& where,
                                               const std::string& field);

}  // namespace attrib::rules::detail
