#include "attributiond/store/archive_queries.h"

#include "core/error_codes.h"
#include "core/json_text.h"

namespace attrib::store {

Result<std::vector<ArchivedRun>> archived_runs(Database& db, const RunFilter& filter) {
  std::string domains;
  for (size_t i = 0; i < filter.domains.size(); ++i) domains += i == 0 ? "?" : ", ?";
  std::string which = filter.domains.empty() ? "1" : "domain IN (" + domains + ")";
  if (filter.or_low_confidence) which = "(" + which + " OR json_extract(verdict_json, '$.confidence') = 'low')";
  const std::string order = filter.newest_first ? "DESC" : "";
  auto stmt = db.prepare(
      "SELECT cluster, job_id, run, status, domain, verdict_json, evidence_pruned_us IS NOT NULL FROM jobs "
      "WHERE verdict_json IS NOT NULL AND (? = '' OR cluster = ?) AND COALESCE(archived_us, received_us) >= ? AND " +
      which + " ORDER BY COALESCE(archived_us, received_us) " + order + ", job_id " + order + ", run " + order +
      " LIMIT ?");
  int index = 1;
  stmt.bind(index++, filter.cluster);
  stmt.bind(index++, filter.cluster);
  stmt.bind(index++, filter.since.value_or(0));
  for (const std::string& domain : filter.domains) stmt.bind(index++, domain);
  stmt.bind(index, filter.limit == 0 ? int64_t{-1} : static_cast<int64_t>(filter.limit));
  std::vector<ArchivedRun> out;
  while (stmt.step())
    out.push_back({{stmt.text_at(0), stmt.text_at(1), stmt.int_at(2)},
                   stmt.text_at(3),
                   stmt.text_at(4),
                   stmt.text_at(5),
                   stmt.int_at(6) != 0});
  if (!stmt.error().empty()) return Error{kDbStep, stmt.error()};
  return out;
}

Status save_mined_templates(Database& db, const std::vector<MinedTemplateRow>& rows) {
  Transaction tx(db);
  if (auto s = tx.began(); !s) return s;
  if (auto s = db.exec("DELETE FROM mined_templates"); !s) return s;
  auto ins = db.prepare(
      "INSERT INTO mined_templates (rank, mined_us, template, attempts, nodes, lines, before_end, successful, "
      "attempt_ids, example, skeleton) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  for (const MinedTemplateRow& row : rows) {
    ins.bind(1, row.rank)
        .bind(2, row.mined)
        .bind(3, row.text)
        .bind(4, row.attempts)
        .bind(5, row.nodes)
        .bind(6, row.lines)
        .bind(7, row.before_end)
        .bind(8, row.successful)
        .bind(9, json_text(row.attempt_ids))
        .bind(10, row.example)
        .bind(11, row.skeleton);
    if (auto s = ins.run(); !s) return s;
    ins.reset();
  }
  return tx.commit();
}

Result<std::vector<MinedTemplateRow>> mined_templates(Database& db) {
  auto stmt = db.prepare(
      "SELECT rank, mined_us, template, attempts, nodes, lines, before_end, successful, attempt_ids, example, "
      "skeleton FROM mined_templates ORDER BY rank");
  std::vector<MinedTemplateRow> out;
  while (stmt.step()) {
    MinedTemplateRow row{stmt.int_at(0),  stmt.int_at(1),  stmt.text_at(2),
                         stmt.int_at(3),  stmt.int_at(4),  stmt.int_at(5),
                         stmt.int_at(6),  stmt.int_at(7),  {},
                         stmt.text_at(9), stmt.text_at(10)};
    const auto ids = nlohmann::json::parse(stmt.text_at(8), nullptr, false);
    if (ids.is_array())
      for (const auto& id : ids)
        if (id.is_string()) row.attempt_ids.push_back(id.get<std::string>());
    out.push_back(std::move(row));
  }
  if (!stmt.error().empty()) return Error{kDbStep, stmt.error()};
  return out;
}

}  // namespace attrib::store
