#include "attributiond/store/archive_queries.h"

#include "core/error_codes.h"

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
    out.push_back({{stmt.text_at(0), stmt.text_at(1), stmt.int_at(2)}, stmt.text_at(3), stmt.text_at(4),
                   stmt.text_at(5), stmt.int_at(6) != 0});
  if (!stmt.error().empty()) return Error{kDbStep, stmt.error()};
  return out;
}

}  // namespace attrib::store
