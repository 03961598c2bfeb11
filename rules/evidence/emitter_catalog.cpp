#include "rules/evidence/emitter_catalog.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "rules/catalog_loader.h"
#include "rules/rule_pack.h"

namespace attrib::rules {
namespace {

namespace fs = std::filesystem;

constexpr const char* kColumns[] = {"message", "where", "family", "role", "known_by", "left_out"};
constexpr size_t kColumnCount = std::size(kColumns);

Error catalog_error(const fs::path& file, size_t line, const std::string& message) {
  return Error{kRuleCatalog, file.string() + ":" + std::to_string(line) + ": " + message};
}

// "# key: value" header lines: emitter, repository, tag, scope.
void read_header_line(const std::string& line, EmitterCatalog& catalog) {
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return;
  std::string key = line.substr(1, colon - 1);
  key.erase(0, key.find_first_not_of(' '));
  std::string value = line.substr(colon + 1);
  value.erase(0, value.find_first_not_of(' '));
  if (key == "emitter") catalog.emitter = value;
  if (key == "repository") catalog.repository = value;
  if (key == "tag") catalog.tag = value;
  if (key == "scope") catalog.scope = value;
}

Result<EmitterMessage> read_row(const fs::path& file, size_t number, const std::string& line) {
  const auto cells = detail::split_tabs(line);
  if (cells.size() != kColumnCount)
    return catalog_error(file, number, "expected " + std::to_string(kColumnCount) + " tab-separated columns, got " +
                                           std::to_string(cells.size()));
  EmitterMessage m{number, cells[0], cells[1], cells[2], cells[3], cells[4] == "-" ? "" : cells[4], cells[5]};
  for (size_t i : {0u, 1u, 2u, 3u})
    if (cells[i].empty()) return catalog_error(file, number, std::string(kColumns[i]) + ": empty");
  if (m.role != "root_cause" && m.role != "symptom" && m.role != "benign")
    return catalog_error(file, number, "role: expected root_cause, symptom or benign, got '" + m.role + "'");
  if (m.known_by.empty() == m.left_out.empty())
    return catalog_error(file, number,
                         m.known_by.empty() ? "left_out: a message no extractor knows needs a reason (or todo)"
                                            : "left_out: must be empty when known_by names an extractor");
  return m;
}

}  // namespace

Result<EmitterCatalog> read_emitter_catalog(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return catalog_error(file, 0, "cannot be read");
  EmitterCatalog catalog;
  catalog.file = file;
  std::string line;
  bool header_seen = false;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      read_header_line(line, catalog);
      continue;
    }
    if (!header_seen) {
      std::string expected;
      for (const char* c : kColumns) expected += (expected.empty() ? "" : "\t") + std::string(c);
      if (line != expected) return catalog_error(file, number, "expected the column header: " + expected);
      header_seen = true;
      continue;
    }
    auto row = read_row(file, number, line);
    if (!row) return row.error();
    catalog.messages.push_back(std::move(*row));
  }
  for (auto [key, value] : {std::pair{"emitter", &catalog.emitter}, std::pair{"repository", &catalog.repository},
                            std::pair{"tag", &catalog.tag}})
    if (value->empty()) return catalog_error(file, 1, std::string("no '# ") + key + ":' header line");
  if (catalog.messages.empty()) return catalog_error(file, 1, "no message rows");
  return catalog;
}

Result<std::vector<EmitterCatalog>> read_emitter_catalogs(const fs::path& pack_dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(pack_dir / "data" / "emitters", ec))
    if (entry.path().extension() == ".tsv") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<EmitterCatalog> out;
  for (const auto& file : files) {
    auto catalog = read_emitter_catalog(file);
    if (!catalog) return catalog.error();
    out.push_back(std::move(*catalog));
  }
  return out;
}

EmitterCoverage emitter_coverage(const EmitterCatalog& catalog, const RulePack& pack) {
  std::set<std::string> extractors;
  for (const auto& rule : pack.extraction) extractors.insert(rule.def.id);
  EmitterCoverage c{catalog.emitter, catalog.repository, catalog.tag};
  std::map<std::string, bool> family_known;
  for (const auto& m : catalog.messages) {
    ++c.messages;
    bool& known = family_known[m.family];
    if (!m.known_by.empty()) {
      if (!extractors.count(m.known_by))
        c.missing_extractors.push_back(catalog.file.filename().string() + ":" + std::to_string(m.line) + ": " +
                                       m.known_by);
      ++c.known;
      known = true;
    } else if (m.left_out == "todo") {
      ++c.todo;
    } else {
      ++c.left_out;
      ++c.left_out_reasons[m.left_out];
    }
  }
  for (const auto& m : catalog.messages)
    if (m.left_out == "todo" && !family_known[m.family] &&
        std::find(c.todo_families.begin(), c.todo_families.end(), m.family) == c.todo_families.end())
      c.todo_families.push_back(m.family);
  c.families = family_known.size();
  c.families_known = static_cast<size_t>(
      std::count_if(family_known.begin(), family_known.end(), [](const auto& f) { return f.second; }));
  return c;
}

}  // namespace attrib::rules
