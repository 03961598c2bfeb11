#include "attributiond/store/dashboard_queries.h"

#include <limits>

#include <nlohmann/json.hpp>

#include "attrib/v1/attrib.pb.h"
#include "common/auth.h"

namespace attrib::store {
namespace {

// The verdict's fields a listing shows are read by SQLite's JSON functions, so a row the
// filters drop is never parsed. The owner lives only in the stored JobEnded (no column
// of its own), so ownership and the user filter are applied here, row by row.
// Columns 0..12, read by read_summary.
#define ATTRIB_SUMMARY_COLUMNS                                                                        \
  "SELECT cluster, job_id, status, received_us, domain, request, "                                    \
  "json_extract(verdict_json, '$.terminal_state'), json_extract(verdict_json, '$.root_cause.rule'), " \
  "json_extract(verdict_json, '$.recommended_action'), json_extract(verdict_json, '$.comment'), "     \
  "json_extract(verdict_json, '$.exit_code'), json_extract(verdict_json, '$.nodes'), "                \
  "json_extract(verdict_json, '$.affected_nodes') "

constexpr const char* kSelectJob =
    ATTRIB_SUMMARY_COLUMNS ", verdict_json FROM jobs WHERE verdict_json IS NOT NULL AND cluster = ?1 AND job_id = ?2";

constexpr const char* kSelectFiltered = ATTRIB_SUMMARY_COLUMNS R"sql(
FROM jobs
WHERE verdict_json IS NOT NULL
  AND (?1 = '' OR domain = ?1)
  AND (?2 = '' OR json_extract(verdict_json, '$.terminal_state') = ?2)
  AND (?3 = '' OR EXISTS (SELECT 1 FROM json_each(jobs.verdict_json, '$.nodes') WHERE value = ?3)
               OR EXISTS (SELECT 1 FROM json_each(jobs.verdict_json, '$.affected_nodes') WHERE value = ?3))
  AND received_us >= ?4 AND received_us <= ?5
ORDER BY received_us DESC, cluster, job_id DESC
)sql";
#undef ATTRIB_SUMMARY_COLUMNS

std::vector<std::string> string_array(const store::Statement& stmt, int column) {
  if (stmt.is_null(column)) return {};
  auto parsed = nlohmann::json::parse(stmt.text_at(column), nullptr, false);
  std::vector<std::string> out;
  if (!parsed.is_array()) return out;
  for (const auto& item : parsed)
    if (item.is_string()) out.push_back(item.get<std::string>());
  return out;
}

VerdictSummary read_summary(const store::Statement& stmt, const v1::JobEnded& request) {
  VerdictSummary row;
  row.cluster = stmt.text_at(0);
  row.job_id = stmt.text_at(1);
  row.status = stmt.text_at(2);
  row.time_us = stmt.int_at(3);
  row.domain = stmt.text_at(4);
  row.user = request.user();
  row.uid = request.uid();
  row.state = stmt.text_at(6);
  row.rule = stmt.text_at(7);
  row.action = stmt.text_at(8);
  row.comment = stmt.text_at(9);
  row.exit_code = stmt.int_at(10);
  row.nodes = string_array(stmt, 11);
  row.affected_nodes = string_array(stmt, 12);
  return row;
}

bool user_matches(const std::string& wanted, const v1::JobEnded& request) {
  if (wanted.empty()) return true;
  if (wanted.find_first_not_of("0123456789") == std::string::npos && wanted.size() <= 10)
    return request.uid() == std::stoull(wanted);
  return request.user() == wanted;
}

// Calls visit(stmt, request) for every row the filter and the viewer allow, newest first,
// until visit returns false.
template <typename Visit>
Status for_each_visible(store::Database& db, const VerdictFilter& filter, const Viewer& viewer, Visit visit) {
  auto stmt = db.prepare(kSelectFiltered);
  if (!stmt.ok()) return Error{kDbPrepare, stmt.error()};
  stmt.bind(1, filter.domain).bind(2, filter.state).bind(3, filter.node);
  stmt.bind(4, filter.since_us.value_or(std::numeric_limits<int64_t>::min()));
  stmt.bind(5, filter.until_us.value_or(std::numeric_limits<int64_t>::max()));
  while (stmt.step()) {
    v1::JobEnded request;
    if (!request.ParseFromString(stmt.text_at(5))) continue;  // unreadable: nobody's to show
    if (!user_matches(filter.user, request)) continue;
    if (!may_view(viewer, request.uid(), request.user())) continue;
    if (!visit(stmt, request)) return ok_status();
  }
  if (!stmt.error().empty()) return Error{kDbStep, stmt.error()};
  return ok_status();
}

}  // namespace

bool may_view(const Viewer& viewer, uint32_t uid, const std::string& user) {
  if (viewer.admin) return true;
  // A job whose owner is unknown (no uid from the hook) is for admins only.
  auto owner = common::job_owner_uid(uid, user);
  return owner && *owner == viewer.uid;
}

Result<std::unique_ptr<DashboardQueries>> DashboardQueries::open(const std::string& database_path) {
  auto db = store::Database::open_read_only(database_path);
  if (!db) return db.error();
  return std::unique_ptr<DashboardQueries>(new DashboardQueries(std::move(*db)));
}

Result<VerdictPage> DashboardQueries::verdicts(const VerdictFilter& filter, const Viewer& viewer) {
  std::lock_guard guard(mutex_);
  VerdictPage page;
  auto status = for_each_visible(db_, filter, viewer, [&](const store::Statement& stmt, const v1::JobEnded& request) {
    if (static_cast<int>(page.rows.size()) >= filter.limit) {
      page.truncated = true;
      return false;
    }
    page.rows.push_back(read_summary(stmt, request));
    return true;
  });
  if (!status) return status.error();
  return page;
}

Result<std::vector<CountBucket>> DashboardQueries::counts(const VerdictFilter& filter, int64_t bucket_s,
                                                          const Viewer& viewer) {
  if (!filter.since_us || !filter.until_us || *filter.until_us < *filter.since_us)
    return Error{kDashRange, "counts need since <= until"};
  if (bucket_s <= 0) return Error{kDashRange, "bucket must be positive"};
  const int64_t bucket_us = bucket_s * 1000000;
  // Buckets on multiples of their width since the epoch (UTC midnights for days), so two
  // pages asking for overlapping ranges draw the same bars.
  const TimeUs first = *filter.since_us - (*filter.since_us % bucket_us + bucket_us) % bucket_us;
  const int64_t buckets = (*filter.until_us - first) / bucket_us + 1;
  if (buckets > 2000) return Error{kDashRange, "too many buckets: widen the bucket or narrow the range"};
  std::vector<CountBucket> out(static_cast<size_t>(buckets));
  for (int64_t i = 0; i < buckets; ++i) out[static_cast<size_t>(i)].start_us = first + i * bucket_us;
  std::lock_guard guard(mutex_);
  auto status = for_each_visible(db_, filter, viewer, [&](const store::Statement& stmt, const v1::JobEnded&) {
    int64_t index = (stmt.int_at(3) - first) / bucket_us;
    if (index >= 0 && index < buckets) ++out[static_cast<size_t>(index)].domains[stmt.text_at(4)];
    return true;
  });
  if (!status) return status.error();
  return out;
}

Result<std::optional<JobDetail>> DashboardQueries::job(const std::string& cluster, const std::string& job_id,
                                                       const Viewer& viewer) {
  std::lock_guard guard(mutex_);
  auto stmt = db_.prepare(kSelectJob);
  if (!stmt.ok()) return Error{kDbPrepare, stmt.error()};
  stmt.bind(1, cluster).bind(2, job_id);
  if (!stmt.step()) {
    if (!stmt.error().empty()) return Error{kDbStep, stmt.error()};
    return std::optional<JobDetail>();
  }
  v1::JobEnded request;
  if (!request.ParseFromString(stmt.text_at(5)))
    return Error{kDbDecode, "stored request of job " + job_id + " is corrupt"};
  if (!may_view(viewer, request.uid(), request.user()))
    return Error{kDashForbidden, "job " + job_id + " is not yours: you may see only your own jobs"};
  JobDetail detail;
  detail.summary = read_summary(stmt, request);
  detail.verdict_json = stmt.text_at(13);
  return std::optional<JobDetail>(std::move(detail));
}

}  // namespace attrib::store
