#include "attributiond/store/fleet_queries.h"

#include <algorithm>
#include <set>

namespace attrib::store {
namespace {

const char* kBlameColumns = "cluster, job_id, node, gpu, domain, rule, state, user_name, uid, time_us, trusted, action";

BlameRow blame_row(const Statement& stmt) {
  BlameRow row;
  row.cluster = stmt.text_at(0);
  row.job_id = stmt.text_at(1);
  row.node = stmt.text_at(2);
  row.gpu = stmt.text_at(3);
  row.domain = stmt.text_at(4);
  row.rule = stmt.text_at(5);
  row.state = stmt.text_at(6);
  row.user = stmt.text_at(7);
  row.uid = static_cast<uint32_t>(stmt.int_at(8));
  row.time_us = stmt.int_at(9);
  row.trusted = stmt.int_at(10) != 0;
  row.action = stmt.text_at(11);
  return row;
}

Result<std::vector<BlameRow>> read_blame(Statement& stmt) {
  if (!stmt.ok()) return Error{kDbPrepare, stmt.error()};
  std::vector<BlameRow> rows;
  while (stmt.step()) rows.push_back(blame_row(stmt));
  if (!stmt.error().empty()) return Error{kDbStep, stmt.error()};
  return rows;
}

}  // namespace

Result<std::vector<BlameRow>> node_history(Database& db, const std::string& node, TimeUs since_us,
                                           const std::string& cluster, size_t limit) {
  auto stmt = db.prepare(std::string("SELECT * FROM (SELECT ") + kBlameColumns +
                         " FROM history WHERE node = ?1 AND time_us >= ?2 AND (?3 = '' OR cluster = ?3) "
                         "ORDER BY time_us DESC, job_id DESC LIMIT ?4) ORDER BY time_us, job_id");
  stmt.bind(1, node).bind(2, since_us).bind(3, cluster).bind(4, static_cast<int64_t>(limit));
  return read_blame(stmt);
}

Result<std::optional<BlameRow>> job_blame(Database& db, const JobKey& key) {
  auto stmt = db.prepare(std::string("SELECT ") + kBlameColumns +
                         " FROM history WHERE cluster = ? AND job_id = ? AND run = ? AND node != ''");
  stmt.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run);
  auto rows = read_blame(stmt);
  if (!rows) return rows.error();
  if (rows->empty()) return std::optional<BlameRow>();
  return std::optional<BlameRow>(std::move(rows->front()));
}

Result<UnexplainedFailures> unexplained_failures_on(Database& db, const std::string& cluster,
                                                    const std::string& node, TimeUs since_us, TimeUs until_us,
                                                    const std::string& except_job, std::optional<uint32_t> uid) {
  // instr() on the comma-bounded list, not LIKE: a node name may hold '_' or '%'.
  auto stmt = db.prepare(
      "SELECT COUNT(DISTINCT job_id), COUNT(DISTINCT CASE WHEN ?6 IS NULL OR uid != ?6 THEN uid END) FROM history "
      "WHERE cluster = ?1 AND time_us >= ?3 AND time_us < ?4 AND job_id != ?5 AND domain != 'NONE' "
      "AND (domain IN ('UNATTRIBUTED', 'AMBIGUOUS') OR trusted = 0) "
      "AND instr(',' || affected_nodes || ',', ',' || ?2 || ',') > 0");
  if (!stmt.ok()) return Error{kDbPrepare, stmt.error()};
  stmt.bind(1, cluster).bind(2, node).bind(3, since_us).bind(4, until_us).bind(5, except_job);
  if (uid)
    stmt.bind(6, static_cast<int64_t>(*uid));
  else
    stmt.bind_null(6);
  if (!stmt.step()) return Error{kDbStep, stmt.error()};
  return UnexplainedFailures{stmt.int_at(0), stmt.int_at(1)};
}

Result<std::vector<BlameRow>> blame_since(Database& db, TimeUs since_us) {
  auto stmt = db.prepare(std::string("SELECT ") + kBlameColumns +
                         " FROM history WHERE node != '' AND time_us >= ? ORDER BY time_us, job_id");
  stmt.bind(1, since_us);
  return read_blame(stmt);
}

namespace {

// The history columns a VerdictRow is read from, in verdict_row's order.
constexpr const char* kVerdictRowColumns =
    "SELECT cluster, job_id, user_name, uid, state, domain, rule, action, node, gpu, affected_nodes, time_us, "
    "trusted";

VerdictRow verdict_row(const Statement& stmt) {
  VerdictRow row;
  row.cluster = stmt.text_at(0);
  row.job_id = stmt.text_at(1);
  row.user = stmt.text_at(2);
  row.uid = static_cast<uint32_t>(stmt.int_at(3));
  row.state = stmt.text_at(4);
  row.domain = stmt.text_at(5);
  row.rule = stmt.text_at(6);
  row.action = stmt.text_at(7);
  row.node = stmt.text_at(8);
  row.gpu = stmt.text_at(9);
  row.affected_nodes = stmt.text_at(10);
  row.time_us = stmt.int_at(11);
  row.trusted = stmt.int_at(12) != 0;
  return row;
}

}  // namespace

Result<VerdictListPage> verdict_page(Database& db, const VerdictQuery& query) {
  // Each filter is in SQL and over an index (job_store.cpp, migration 4): the owner's rows
  // (history_owner), every domain but NONE (the partial history_failures, used because the
  // query says `domain != 'NONE'` as its WHERE does), or one domain (history_domain). A
  // later page starts after the previous one's last key, a seek, not an OFFSET; it is then
  // the only lower bound on time, since SQLite seeks by one (with `time_us >= since` too
  // it would seek to `since` and step over every row before the key).
  const size_t limit = std::clamp<size_t>(query.limit, 1, kMaxPageRows);
  const bool after = query.after && query.after->time_us >= query.since_us;  // an earlier key: the first page
  std::string sql = std::string(kVerdictRowColumns) + " FROM history WHERE (?2 = '' OR cluster = ?2)";
  sql += query.domain.empty() ? " AND domain != 'NONE'" : " AND domain = ?3";
  if (query.owner) sql += " AND owner_uid = ?4";
  sql += after ? " AND (time_us, cluster, job_id) > (?5, ?6, ?7)" : " AND time_us >= ?1";
  sql += " ORDER BY time_us, cluster, job_id LIMIT ?8";
  auto stmt = db.prepare(sql);
  if (!stmt.ok()) return Error{kDbPrepare, stmt.error()};
  stmt.bind(1, query.since_us).bind(2, query.cluster);
  if (!query.domain.empty()) stmt.bind(3, query.domain);
  if (query.owner) stmt.bind(4, static_cast<int64_t>(*query.owner));
  if (after) stmt.bind(5, query.after->time_us).bind(6, query.after->cluster).bind(7, query.after->job_id);
  stmt.bind(8, static_cast<int64_t>(limit + 1));  // one more: whether another page follows
  VerdictListPage page;
  while (stmt.step()) {
    if (page.rows.size() == limit) {
      const VerdictRow& last = page.rows.back();
      page.next = PageKey{last.time_us, last.cluster, last.job_id};
      break;
    }
    page.rows.push_back(verdict_row(stmt));
  }
  if (!stmt.error().empty()) return Error{kDbStep, stmt.error()};
  return page;
}

Result<ArrayTasks> array_tasks(Database& db, const std::string& cluster, const std::string& array_job_id,
                               std::optional<uint32_t> owner) {
  // "123_" < every "123_<task>" < "123`" ('`' follows '_'): a seek over the primary key.
  const std::string first = array_job_id + "_", after = array_job_id + "`";
  auto is_task = [&](const std::string& job_id) {
    return job_id.size() > first.size() &&
           job_id.find_first_not_of("0123456789", first.size()) == std::string::npos;
  };
  std::string sql = std::string(kVerdictRowColumns) +
                    " FROM history h WHERE cluster = ?1 AND job_id > ?2 AND job_id < ?3 "
      "AND run = (SELECT MAX(run) FROM history WHERE cluster = h.cluster AND job_id = h.job_id)";
  if (owner) sql += " AND owner_uid = ?4";
  auto stmt = db.prepare(sql);
  if (!stmt.ok()) return Error{kDbPrepare, stmt.error()};
  stmt.bind(1, cluster).bind(2, first).bind(3, after);
  if (owner) stmt.bind(4, static_cast<int64_t>(*owner));
  ArrayTasks tasks;
  while (stmt.step())
    if (is_task(stmt.text_at(1))) tasks.judged.push_back(verdict_row(stmt));
  if (!stmt.error().empty()) return Error{kDbStep, stmt.error()};
  auto task_number = [&](const VerdictRow& row) { return std::stoull(row.job_id.substr(first.size())); };
  std::sort(tasks.judged.begin(), tasks.judged.end(),
            [&](const VerdictRow& a, const VerdictRow& b) { return task_number(a) < task_number(b); });
  if (owner) return tasks;
  auto waiting = db.prepare(
      "SELECT job_id FROM jobs j WHERE cluster = ?1 AND job_id > ?2 AND job_id < ?3 AND verdict_json IS NULL "
      "AND failed_us IS NULL AND NOT EXISTS (SELECT 1 FROM history h WHERE h.cluster = j.cluster AND "
      "h.job_id = j.job_id AND h.run > j.run)");
  if (!waiting.ok()) return Error{kDbPrepare, waiting.error()};
  waiting.bind(1, cluster).bind(2, first).bind(3, after);
  std::set<std::string> queued;
  while (waiting.step())
    if (is_task(waiting.text_at(0))) queued.insert(waiting.text_at(0));
  if (!waiting.error().empty()) return Error{kDbStep, waiting.error()};
  tasks.waiting = static_cast<int64_t>(queued.size());
  return tasks;
}

Result<std::vector<DomainCount>> domain_counts(Database& db, const VerdictQuery& query) {
  // A non-admin's counts read only their own rows, from history_owner alone (it holds the domain).
  std::string sql = "SELECT domain, count(*) FROM history WHERE time_us >= ?1 AND (?2 = '' OR cluster = ?2)";
  if (query.owner) sql += " AND owner_uid = ?3";
  sql += " GROUP BY domain ORDER BY count(*) DESC, domain";
  auto stmt = db.prepare(sql);
  if (!stmt.ok()) return Error{kDbPrepare, stmt.error()};
  stmt.bind(1, query.since_us).bind(2, query.cluster);
  if (query.owner) stmt.bind(3, static_cast<int64_t>(*query.owner));
  std::vector<DomainCount> counts;
  while (stmt.step()) counts.push_back({stmt.text_at(0), stmt.int_at(1)});
  if (!stmt.error().empty()) return Error{kDbStep, stmt.error()};
  return counts;
}

Result<std::vector<RemediationRecord>> remediation_history(Database& db, const std::string& node, TimeUs since_us) {
  auto stmt = db.prepare(
      "SELECT id, time_us, cluster, node, job_id, rule, action, reason, detail FROM remediation "
      "WHERE time_us >= ? AND (? = '' OR node = ?) ORDER BY time_us, id");
  stmt.bind(1, since_us).bind(2, node).bind(3, node);
  if (!stmt.ok()) return Error{kDbPrepare, stmt.error()};
  std::vector<RemediationRecord> records;
  while (stmt.step()) {
    RemediationRecord r;
    r.id = stmt.int_at(0);
    r.time_us = stmt.int_at(1);
    r.cluster = stmt.text_at(2);
    r.node = stmt.text_at(3);
    r.job_id = stmt.text_at(4);
    r.rule = stmt.text_at(5);
    r.action = stmt.text_at(6);
    r.reason = stmt.text_at(7);
    r.detail = stmt.text_at(8);
    records.push_back(std::move(r));
  }
  if (!stmt.error().empty()) return Error{kDbStep, stmt.error()};
  return records;
}

Result<bool> remediation_decided(Database& db, const std::string& cluster, const std::string& job_id,
                                 const std::string& node) {
  auto stmt = db.prepare(
      "SELECT count(*) FROM remediation WHERE cluster = ? AND job_id = ? AND node = ? AND action != 'failed'");
  stmt.bind(1, cluster).bind(2, job_id).bind(3, node);
  if (!stmt.step()) return Error{kDbStep, stmt.error()};
  return stmt.int_at(0) > 0;
}

Result<int64_t> remediation_count_since(Database& db, const std::string& action, TimeUs since_us) {
  auto stmt = db.prepare("SELECT count(*) FROM remediation WHERE action = ? AND time_us > ?");
  stmt.bind(1, action).bind(2, since_us);
  if (!stmt.step()) return Error{kDbStep, stmt.error()};
  return stmt.int_at(0);
}

Status insert_remediation(Database& db, RemediationRecord& record) {
  auto stmt = db.prepare(
      "INSERT INTO remediation (time_us, cluster, node, job_id, rule, action, reason, detail) "
      "VALUES (?,?,?,?,?,?,?,?)");
  stmt.bind(1, record.time_us)
      .bind(2, record.cluster)
      .bind(3, record.node)
      .bind(4, record.job_id)
      .bind(5, record.rule)
      .bind(6, record.action)
      .bind(7, record.reason)
      .bind(8, record.detail);
  if (auto s = stmt.run(); !s) return s;
  auto id = db.prepare("SELECT last_insert_rowid()");
  if (id.step()) record.id = id.int_at(0);
  return ok_status();
}

}  // namespace attrib::store
