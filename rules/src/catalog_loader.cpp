#include "catalog_loader.h"

#include <set>
#include <sstream>

namespace attrib::rules::detail {

namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return out;
}

size_t column_index(const std::vector<std::string>& header, const std::string& name, const CatalogDef& def,
                    const std::string& display_name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  fail(kErrCatalog, {display_name, 1}, "catalogs." + def.name, "no column named '" + name + "'");
}

}  // namespace

bool is_severity(const std::string& severity) {
  static const std::set<std::string> kSeverities = {"fatal", "job-fatal", "degraded", "benign"};
  return kSeverities.count(severity) > 0;
}

CatalogTable load_catalog(const CatalogDef& def, const std::string& text, const std::string& display_name) {
  CatalogTable table;
  table.name = def.name;
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  std::vector<std::string> header;
  size_t key_col = 0, name_col = 0, domain_col = 0, severity_col = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const auto cells = split_tabs(line);
    if (header.empty()) {
      header = cells;
      key_col = column_index(header, def.key_column, def, display_name);
      name_col = column_index(header, def.name_column, def, display_name);
      domain_col = column_index(header, def.domain_column, def, display_name);
      severity_col = column_index(header, def.severity_column, def, display_name);
      continue;
    }
    const SourceLocation where{display_name, line_number};
    if (cells.size() != header.size()) {
      fail(kErrCatalog, where, "", "expected " + std::to_string(header.size()) + " columns, found " +
                                       std::to_string(cells.size()));
    }
    CatalogEntry entry;
    entry.key = cells[key_col];
    entry.name = cells[name_col];
    entry.domain_hint = cells[domain_col];
    entry.severity = cells[severity_col];
    if (entry.key.empty()) fail(kErrCatalog, where, def.key_column, "empty key");
    if (entry.name.empty()) fail(kErrCatalog, where, def.name_column, "row has no name");
    if (!is_severity(entry.severity)) {
      fail(kErrCatalog, where, def.severity_column, "unknown severity '" + entry.severity + "'");
    }
    auto domain = def.domain_map.find(entry.domain_hint);
    if (domain == def.domain_map.end()) {
      fail(kErrCatalog, where, def.domain_column,
           "domain hint '" + entry.domain_hint + "' has no entry in catalogs." + def.name + ".domain_map");
    }
    entry.domain = domain->second;
    for (const auto& o : def.action_overrides) {
      if (o.domain == entry.domain && o.severity == entry.severity) entry.action = o.action;
    }
    if (entry.action.empty()) {
      auto action = def.action_by_severity.find(entry.severity);
      if (action == def.action_by_severity.end()) {
        fail(kErrCatalog, where, def.severity_column,
             "severity '" + entry.severity + "' has no entry in catalogs." + def.name + ".action_by_severity");
      }
      entry.action = action->second;
    }
    // A benign report is never a cause; a code the table cannot place in a domain is
    // decided by other rules (or stays unattributed), never a root by itself.
    entry.root_eligible = entry.domain != "UNATTRIBUTED" && entry.severity != "benign";
    if (!table.entries.emplace(entry.key, entry).second) fail(kErrCatalog, where, def.key_column, "duplicate key " + entry.key);
  }
  if (header.empty()) fail(kErrCatalog, {display_name, 0}, "", "empty catalog");
  return table;
}

}  // namespace attrib::rules::detail
