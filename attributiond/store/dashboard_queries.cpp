#include "attributiond/store/dashboard_queries.h"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "attrib/v1/attrib.pb.h"
#include "common/auth.h"

namespace attrib::store {
namespace {

// The verdict's fields a listing shows are read by SQLite's JSON functions, so a row the
// filters drop is never parsed; its owner and user come from the job's history row (the
// request, a protobuf, is decoded only for one job's page). Columns 0..14, read by
// read_summary.
#define ATTRIB_SUMMARY_COLUMNS                                                                            \
  "SELECT j.cluster, j.job_id, j.status, j.received_us, j.domain, h.user_name, h.uid, "                   \
  "json_extract(j.verdict_json, '$.terminal_state'), json_extract(j.verdict_json, '$.root_cause.rule'), " \
  "json_extract(j.verdict_json, '$.recommended_action'), json_extract(j.verdict_json, '$.comment'), "     \
  "json_extract(j.verdict_json, '$.exit_code'), json_extract(j.verdict_json, '$.nodes'), "                \
  "json_extract(j.verdict_json, '$.affected_nodes'), j.scheduler "
#define ATTRIB_ARCHIVE \
  " FROM jobs j LEFT JOIN history h ON h.cluster = j.cluster AND h.job_id = j.job_id AND h.run = j.run "

constexpr const char* kSelectJob =
    ATTRIB_SUMMARY_COLUMNS ", j.verdict_json, j.request" ATTRIB_ARCHIVE
                           "WHERE j.verdict_json IS NOT NULL AND j.cluster = ?1 AND j.job_id = ?2 "
                           "ORDER BY j.run DESC LIMIT 1";  // a job id's newest attributed run

// The filters of both listings: ?1 domain, ?2 state, ?3 node, ?4 since, ?5 until (unless
// `until` is false: a later page's key bounds it instead), ?6 user name, ?7 uid (-1: none),
// and for non-admins ?8 their uid. `j.verdict_json IS NOT NULL` as written lets SQLite use
// the partial indexes of archived jobs (jobs_archived, jobs_owner: migration 4).
std::string filtered(const Viewer& viewer, bool until = true) {
  std::string sql = ATTRIB_ARCHIVE R"sql(
WHERE j.verdict_json IS NOT NULL
  AND (?1 = '' OR j.domain = ?1)
  AND (?2 = '' OR json_extract(j.verdict_json, '$.terminal_state') = ?2)
  AND (?3 = '' OR EXISTS (SELECT 1 FROM json_each(j.verdict_json, '$.nodes') WHERE value = ?3)
               OR EXISTS (SELECT 1 FROM json_each(j.verdict_json, '$.affected_nodes') WHERE value = ?3))
  AND j.received_us >= ?4
  AND (?6 = '' OR h.user_name = ?6) AND (?7 < 0 OR h.uid = ?7)
)sql";
  if (until) sql += "  AND j.received_us <= ?5\n";
  if (!viewer.admin) sql += "  AND j.owner_uid = ?8\n";
  return sql;
}
#undef ATTRIB_ARCHIVE

void bind_filter(store::Statement& stmt, const VerdictFilter& filter, const Viewer& viewer) {
  stmt.bind(1, filter.domain).bind(2, filter.state).bind(3, filter.node);
  stmt.bind(4, filter.since_us.value_or(std::numeric_limits<int64_t>::min()));
  stmt.bind(5, filter.until_us.value_or(std::numeric_limits<int64_t>::max()));
  // The user filter is a name, or a uid in digits.
  const bool digits = !filter.user.empty() && filter.user.size() <= 10 &&
                      filter.user.find_first_not_of("0123456789") == std::string::npos;
  stmt.bind(6, digits ? std::string() : filter.user);
  stmt.bind(7, digits ? static_cast<int64_t>(std::stoull(filter.user)) : int64_t{-1});
  if (!viewer.admin) stmt.bind(8, static_cast<int64_t>(viewer.uid));
}

std::vector<std::string> string_array(const store::Statement& stmt, int column) {
  if (stmt.is_null(column)) return {};
  auto parsed = nlohmann::json::parse(stmt.text_at(column), nullptr, false);
  std::vector<std::string> out;
  if (!parsed.is_array()) return out;
  for (const auto& item : parsed)
    if (item.is_string()) out.push_back(item.get<std::string>());
  return out;
}

VerdictSummary read_summary(const store::Statement& stmt) {
  VerdictSummary row;
  row.cluster = stmt.text_at(0);
  row.job_id = stmt.text_at(1);
  row.status = stmt.text_at(2);
  row.time_us = stmt.int_at(3);
  row.domain = stmt.text_at(4);
  row.user = stmt.text_at(5);
  row.uid = static_cast<uint32_t>(stmt.int_at(6));
  row.state = stmt.text_at(7);
  row.rule = stmt.text_at(8);
  row.action = stmt.text_at(9);
  row.comment = stmt.text_at(10);
  row.exit_code = stmt.int_at(11);
  row.nodes = string_array(stmt, 12);
  row.affected_nodes = string_array(stmt, 13);
  row.scheduler = stmt.text_at(14);
  return row;
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
  const int64_t limit = std::clamp<int64_t>(filter.limit, 1, static_cast<int64_t>(kMaxPageRows));
  // A later page seeks to the previous one's last key, its only upper bound on time: with
  // `until` as well, SQLite would seek to `until` and step over every row after the key.
  const bool before =
      filter.before && filter.before->time_us <= filter.until_us.value_or(std::numeric_limits<int64_t>::max());
  std::string sql = ATTRIB_SUMMARY_COLUMNS + filtered(viewer, !before);
  if (before) sql += "  AND (j.received_us, j.cluster, j.job_id) < (?9, ?10, ?11)\n";
  sql += "ORDER BY j.received_us DESC, j.cluster DESC, j.job_id DESC LIMIT ?12";
  std::lock_guard guard(mutex_);
  auto stmt = db_.prepare(sql);
  if (!stmt.ok()) return Error{kDbPrepare, stmt.error()};
  bind_filter(stmt, filter, viewer);
  if (before) stmt.bind(9, filter.before->time_us).bind(10, filter.before->cluster).bind(11, filter.before->job_id);
  stmt.bind(12, limit + 1);  // one more: whether another page follows
  VerdictPage page;
  while (stmt.step()) {
    if (static_cast<int64_t>(page.rows.size()) == limit) {
      page.truncated = true;
      const VerdictSummary& last = page.rows.back();
      page.next = PageKey{last.time_us, last.cluster, last.job_id};
      break;
    }
    page.rows.push_back(read_summary(stmt));
  }
  if (!stmt.error().empty()) return Error{kDbStep, stmt.error()};
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
  // Counted by SQLite: one row per (bucket, domain), not one per job.
  std::string sql = "SELECT (j.received_us - ?9) / ?10, j.domain, count(*)" + filtered(viewer) + "GROUP BY 1, 2";
  std::lock_guard guard(mutex_);
  auto stmt = db_.prepare(sql);
  if (!stmt.ok()) return Error{kDbPrepare, stmt.error()};
  bind_filter(stmt, filter, viewer);
  stmt.bind(9, first).bind(10, bucket_us);
  while (stmt.step()) {
    const int64_t index = stmt.int_at(0);
    if (index >= 0 && index < buckets) out[static_cast<size_t>(index)].domains[stmt.text_at(1)] += stmt.int_at(2);
  }
  if (!stmt.error().empty()) return Error{kDbStep, stmt.error()};
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
  // One job: its owner from the stored request itself, as GetVerdict decides.
  v1::JobEnded request;
  if (!request.ParseFromString(stmt.text_at(16)))
    return Error{kDbDecode, "stored request of job " + job_id + " is corrupt"};
  if (!may_view(viewer, request.uid(), request.user()))
    return Error{kDashForbidden, "job " + job_id + " is not yours: you may see only your own jobs"};
  JobDetail detail;
  detail.summary = read_summary(stmt);
  detail.summary.user = request.user();
  detail.summary.uid = request.uid();
  detail.verdict_json = stmt.text_at(15);
  return std::optional<JobDetail>(std::move(detail));
}

#undef ATTRIB_SUMMARY_COLUMNS

}  // namespace attrib::store
