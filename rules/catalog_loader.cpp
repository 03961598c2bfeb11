#include "rules/catalog_loader.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <sstream>

namespace attrib::rules::detail {

namespace {

size_t column_index(const std::vector<std::string>& header, const std::string& name, const CatalogDef& def,
                    const std::string& display_name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  fail(kRuleCatalog, {display_name, 1}, "catalogs." + def.name, "no column named '" + name + "'");
}

std::string format_name(const std::string& format, const std::vector<std::string>& header,
                        const std::vector<std::string>& cells, const SourceLocation& where) {
  std::string out;
  size_t pos = 0;
  while (pos < format.size()) {
    const size_t open = format.find('{', pos);
    if (open == std::string::npos) {
      out += format.substr(pos);
      break;
    }
    const size_t close = format.find('}', open);
    if (close == std::string::npos) fail(kRuleCatalog, where, "name_format", "unbalanced braces");
    out += format.substr(pos, open - pos);
    // {a|b}: the first of the columns with a non-empty cell.
    std::stringstream alternatives(format.substr(open + 1, close - open - 1));
    std::string column;
    std::string value;
    while (std::getline(alternatives, column, '|')) {
      const auto it = std::find(header.begin(), header.end(), column);
      if (it == header.end()) fail(kRuleCatalog, where, "name_format", "no column named '" + column + "'");
      value = cells[static_cast<size_t>(it - header.begin())];
      if (!value.empty()) break;
    }
    out += value;
    pos = close + 1;
  }
  return out;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<uint64_t> parse_hex(const std::string& text) {
  std::string t = lower(text);
  t.erase(std::remove(t.begin(), t.end(), '_'), t.end());
  if (t.rfind("0x", 0) == 0) t = t.substr(2);
  if (t.empty() || t.size() > 16) return std::nullopt;
  uint64_t value = 0;
  for (char c : t) {
    int d = 0;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else
      return std::nullopt;
    value = value * 16 + static_cast<uint64_t>(d);
  }
  return value;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, sep)) {
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    out.push_back(part);
  }
  return out;
}

// A 0/1/- mask, most significant bit first, against a value.
bool bits_match(const std::string& mask, uint64_t value) {
  const size_t n = mask.size();
  for (size_t i = 0; i < n; ++i) {
    const char m = mask[i];
    if (m == '-') continue;
    const uint64_t bit = (value >> (n - 1 - i)) & 1u;
    if ((m == '1') != (bit == 1)) return false;
  }
  return true;
}

void check_match_cell(const CatalogMatch& spec, const std::string& cell, const SourceLocation& where,
                      const std::string& column) {
  if (cell.empty()) return;
  if (spec.type == "bits") {
    if (cell.size() > 64 || cell.find_first_not_of("01-") != std::string::npos) {
      fail(kRuleCatalog, where, column, "expected a 0/1/- bit mask, found '" + cell + "'");
    }
  } else if (spec.type == "hex") {
    for (const auto& alt : split(cell, '/')) {
      if (!parse_hex(alt)) fail(kRuleCatalog, where, column, "expected hex values, found '" + cell + "'");
    }
  }
}

std::string field_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

bool cell_accepts(const CatalogMatch& spec, const std::string& cell, const nlohmann::json& fields) {
  if (cell.empty()) return true;
  auto it = fields.find(spec.field);
  if (it == fields.end()) return false;
  const std::string text = field_text(*it);
  if (spec.type == "bits") {
    const auto value = parse_hex(text);
    return value && bits_match(cell, *value);
  }
  if (spec.type == "hex") {
    const auto value = parse_hex(text);
    if (!value) return false;
    for (const auto& alt : split(cell, '/')) {
      if (parse_hex(alt) == value) return true;
    }
    return false;
  }
  // name: "A/B" lists the names a row goes by.
  for (const auto& alt : split(cell, '/')) {
    if (alt == text) return true;
  }
  return false;
}

// A decode row's entry for this event: the secondary one when the event matches one of
// the row's secondary cells.
const CatalogEntry* row_entry(const CatalogTable& table, const CatalogTable::DecodeRow& row,
                              const nlohmann::json& fields) {
  if (row.secondary && table.secondary_when) {
    for (const auto& cell : row.secondary_when) {
      if (!cell.empty() && cell_accepts(*table.secondary_when, cell, fields)) return &*row.secondary;
    }
  }
  return &table.entries.at(row.entry);
}

}  // namespace

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

const CatalogEntry* find_catalog_entry(const CatalogTable& table, const std::string& key,
                                       const nlohmann::json& fields) {
  if (table.match.empty()) {
    auto row = table.entries.find(key);
    return row == table.entries.end() ? nullptr : &row->second;
  }
  const CatalogTable::DecodeRow* best = nullptr;
  bool best_named = false;
  for (const auto& row : table.rows) {
    if (row.key != key) continue;
    bool ok = true, named = false, has_name = false;
    for (size_t i = 0; i < table.match.size() && ok; ++i) {
      const auto& spec = table.match[i];
      if (spec.type == "name") {
        has_name = true;
        for (const auto& cell : row.cells[i]) named = named || (!cell.empty() && cell_accepts(spec, cell, fields));
        continue;
      }
      // Alternatives: the row's non-empty cells; a row with none accepts anything.
      bool any = false, constrained = false;
      for (const auto& cell : row.cells[i]) {
        if (cell.empty()) continue;
        constrained = true;
        any = any || cell_accepts(spec, cell, fields);
      }
      ok = any || !constrained;
    }
    if (!ok) continue;
    if (!has_name) return row_entry(table, row, fields);
    if (best == nullptr || (named && !best_named)) {
      best = &row;
      best_named = named;
    }
  }
  return best ? row_entry(table, *best, fields) : nullptr;
}

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
  size_t key_col = 0, name_col = 0, domain_col = 0, severity_col = 0, action_col = 0;
  std::vector<std::vector<size_t>> match_cols;
  size_t secondary_col = 0;
  std::vector<size_t> secondary_when_cols;
  table.match = def.match;
  if (def.secondary_action) table.secondary_when = def.secondary_action->when;
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
      if (!def.action_column.empty()) action_col = column_index(header, def.action_column, def, display_name);
      for (const auto& spec : def.match) {
        std::vector<size_t> cols;
        for (const auto& c : spec.columns) cols.push_back(column_index(header, c, def, display_name));
        match_cols.push_back(std::move(cols));
      }
      if (def.secondary_action) {
        secondary_col = column_index(header, def.secondary_action->column, def, display_name);
        for (const auto& c : def.secondary_action->when.columns) {
          secondary_when_cols.push_back(column_index(header, c, def, display_name));
        }
      }
      continue;
    }
    const SourceLocation where{display_name, line_number};
    if (cells.size() != header.size()) {
      fail(kRuleCatalog, where, "",
           "expected " + std::to_string(header.size()) + " columns, found " + std::to_string(cells.size()));
    }
    CatalogEntry entry;
    entry.key = cells[key_col];
    entry.name = def.name_format.empty() ? cells[name_col] : format_name(def.name_format, header, cells, where);
    entry.domain_hint = cells[domain_col];
    entry.severity = cells[severity_col];
    if (!def.severity_map.empty()) {
      auto mapped = def.severity_map.find(entry.severity);
      if (mapped == def.severity_map.end()) {
        fail(kRuleCatalog, where, def.severity_column,
             "severity '" + entry.severity + "' has no entry in catalogs." + def.name + ".severity_map");
      }
      entry.severity = mapped->second;
    }
    if (entry.key.empty()) fail(kRuleCatalog, where, def.key_column, "empty key");
    if (entry.name.empty()) fail(kRuleCatalog, where, def.name_column, "row has no name");
    if (!is_severity(entry.severity)) {
      fail(kRuleCatalog, where, def.severity_column, "unknown severity '" + entry.severity + "'");
    }
    auto domain = def.domain_map.find(entry.domain_hint);
    if (domain == def.domain_map.end()) {
      fail(kRuleCatalog, where, def.domain_column,
           "domain hint '" + entry.domain_hint + "' has no entry in catalogs." + def.name + ".domain_map");
    }
    entry.domain = domain->second;
    for (const auto& o : def.action_overrides) {
      if (o.domain == entry.domain && o.severity == entry.severity) entry.action = o.action;
    }
    if (entry.action.empty() && !def.action_column.empty()) {
      auto action = def.action_map.find(cells[action_col]);
      if (action == def.action_map.end()) {
        fail(kRuleCatalog, where, def.action_column,
             "action '" + cells[action_col] + "' has no entry in catalogs." + def.name + ".action_map");
      }
      entry.action = action->second;
    }
    if (entry.action.empty()) {
      auto action = def.action_by_severity.find(entry.severity);
      if (action == def.action_by_severity.end()) {
        fail(kRuleCatalog, where, def.severity_column,
             "severity '" + entry.severity + "' has no entry in catalogs." + def.name + ".action_by_severity");
      }
      entry.action = action->second;
    }
    // A benign report is never a cause; a code the table cannot place in a domain is
    // decided by other rules (or stays unattributed), never a root by itself.
    entry.root_eligible = entry.domain != "UNATTRIBUTED" && entry.severity != "benign";
    if (!def.match.empty()) {
      // Decode table: the entry is named by its key and every match cell, e.g.
      // "145|RLW_RXPIPE|------000000---------00011000010|...|0x00000001".
      CatalogTable::DecodeRow row;
      row.key = entry.key;
      std::string unique = entry.key;
      for (size_t i = 0; i < def.match.size(); ++i) {
        std::vector<std::string> spec_cells;
        for (size_t j = 0; j < match_cols[i].size(); ++j) {
          const std::string& cell = cells[match_cols[i][j]];
          check_match_cell(def.match[i], cell, where, def.match[i].columns[j]);
          spec_cells.push_back(cell);
          unique += "|" + cell;
        }
        row.cells.push_back(std::move(spec_cells));
      }
      entry.key = unique;
      row.entry = unique;
      if (def.secondary_action) {
        const auto& spec = *def.secondary_action;
        bool has_when = false;
        for (size_t j = 0; j < secondary_when_cols.size(); ++j) {
          const std::string& cell = cells[secondary_when_cols[j]];
          check_match_cell(spec.when, cell, where, spec.when.columns[j]);
          row.secondary_when.push_back(cell);
          has_when = has_when || !cell.empty();
        }
        const std::string& action_cell = cells[secondary_col];
        if (action_cell.empty() && has_when) {
          fail(kRuleCatalog, where, spec.column, "the row has secondary-action cells but no secondary action");
        }
        if (!action_cell.empty()) {
          if (!has_when)
            fail(kRuleCatalog, where, spec.column, "secondary action '" + action_cell + "' but no cell says when");
          auto action = def.action_map.find(action_cell);
          if (action == def.action_map.end()) {
            fail(kRuleCatalog, where, spec.column,
                 "action '" + action_cell + "' has no entry in catalogs." + def.name + ".action_map");
          }
          CatalogEntry secondary = entry;
          secondary.key = unique + "|" + spec.column;
          secondary.action = action->second;
          row.secondary = std::move(secondary);
        }
      }
      table.rows.push_back(std::move(row));
    }
    if (!table.entries.emplace(entry.key, entry).second)
      fail(kRuleCatalog, where, def.key_column, "duplicate key " + entry.key);
  }
  if (header.empty()) fail(kRuleCatalog, {display_name, 0}, "", "empty catalog");
  return table;
}

}  // namespace attrib::rules::detail
