// Data tables as rules: a tab-separated catalog (e.g. the NVIDIA Xid catalog) whose
// rows give each code a name, a verdict domain, a severity and an action.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "rules/engine.h"
#include "rules/rule_definitions.h"

namespace attrib::rules::detail {

struct CatalogTable {
  std::string name;
  std::map<std::string, CatalogEntry> entries;  // by key text, e.g. "79" (decode tables: key|match cells)
  // Decode tables (CatalogDef::match): several rows share a key and are told apart by
  // further columns matched against event fields. Rows in file order.
  struct DecodeRow {
    std::string key;                              // the key column's cell, e.g. "145"
    std::vector<std::vector<std::string>> cells;  // per match spec, per column
    std::string entry;                            // key into `entries`
    // Secondary action (CatalogDef::secondary_action): when the event also matches one
    // of `secondary_when` the row's meaning is `secondary`, the same row with the
    // secondary action. Kept out of `entries`: it is no row of its own.
    std::vector<std::string> secondary_when;
    std::optional<CatalogEntry> secondary;
  };
  std::vector<CatalogMatch> match;
  std::optional<CatalogMatch> secondary_when;  // the field and type the secondary cells test
  std::vector<DecodeRow> rows;
};

// Parses `text` (the file named by def.file). Every row must map to a domain, a known
// severity and an action, or loading fails with RULE_E_CATALOG naming file:line.
CatalogTable load_catalog(const CatalogDef& def, const std::string& text, const std::string& display_name);

bool is_severity(const std::string& severity);

// A tab-separated row's cells (empty cells kept): the pack's data tables and the emitter
// catalogs (rules/emitter_catalog.h) share one reading of a row.
std::vector<std::string> split_tabs(const std::string& line);

// The row an event with key text `key` and `fields` maps to, or nullptr. Plain tables:
// the row with that key. Decode tables: the first row (file order) with that key whose
// match columns all accept the event's fields, preferring rows whose `name` columns
// list the event's name field; that row's secondary entry when the event matches its
// secondary cells.
const CatalogEntry* find_catalog_entry(const CatalogTable& table, const std::string& key, const nlohmann::json& fields);

}  // namespace attrib::rules::detail
