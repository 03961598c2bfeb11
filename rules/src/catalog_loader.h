// Data tables as rules: a tab-separated catalog (e.g. the NVIDIA Xid catalog) whose
// rows give each code a name, a verdict domain, a severity and an action.
#pragma once

#include <map>
#include <string>

#include "attrib/rules/engine.h"
#include "rule_definitions.h"

namespace attrib::rules::detail {

struct CatalogTable {
  std::string name;
  std::map<std::string, CatalogEntry> entries;  // by key text, e.g. "79"
};

// Parses `text` (the file named by def.file). Every row must map to a domain, a known
// severity and an action, or loading fails with RULE_E_CATALOG naming file:line.
CatalogTable load_catalog(const CatalogDef& def, const std::string& text, const std::string& display_name);

bool is_severity(const std::string& severity);

}  // namespace attrib::rules::detail
