// The queue: reports in (durable before enqueue returns), due runs out, and each run's
// marks on its way to done (archived in verdict_archive.cpp) or to the dead letters.
#include <algorithm>

#include "attributiond/store/job_store.h"
#include "attributiond/store/store_rows.h"

namespace attrib::store {
namespace {

// Whether hostlist `part` ("n3", "n[1-2]") is one of the comma-separated entries of
// `list` ("n1,n[1-2]"); commas inside brackets separate numbers, not entries.
bool listed_in(const std::string& list, const std::string& part) {
  if (part.empty()) return true;
  int depth = 0;
  size_t entry = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      if (list.compare(entry, i - entry, part) == 0) return true;
      entry = i + 1;
    } else if (list[i] == '[') {
      ++depth;
    } else if (list[i] == ']') {
      --depth;
    }
  }
  return false;
}

}  // namespace

using detail::db_error;

Result<bool> JobStore::enqueue(const v1::JobEnded& request, const std::string& cluster, TimeUs now) {
  std::lock_guard lock(mutex_);
  store::Transaction tx(db_);
  if (auto s = tx.began(); !s) return s.error();
  auto queued = enqueue_in_transaction(request, cluster, now);
  if (!queued) return queued.error();
  if (auto s = tx.commit(); !s) return s.error();
  return *queued;
}

Result<std::vector<bool>> JobStore::enqueue_all(const std::vector<v1::JobEnded>& requests, TimeUs now) {
  std::lock_guard lock(mutex_);
  store::Transaction tx(db_);
  if (auto s = tx.began(); !s) return s.error();
  std::vector<bool> queued;
  queued.reserve(requests.size());
  for (const auto& request : requests) {
    auto one = enqueue_in_transaction(request, request.cluster(), now);
    if (!one) return one.error();  // the transaction rolls back: none of them is queued
    queued.push_back(*one);
  }
  if (auto s = tx.commit(); !s) return s.error();
  return queued;
}

Result<bool> JobStore::enqueue_in_transaction(const v1::JobEnded& request, const std::string& cluster, TimeUs now) {
  std::string bytes;
  if (!request.SerializeToString(&bytes)) return Error{kQueueEncode, "cannot encode JobEnded"};
  // A het job's components each report under the het job's id: a component's report is a
  // kind of its own ("2:1", jobcomp/script of component 1), so they fold into one run.
  std::string kind = std::to_string(static_cast<int>(request.hook()));
  if (request.has_het_job_offset()) kind += ":" + std::to_string(request.het_job_offset());
  // Each node's slurmd Epilog reports the attempt at its own time and names only its node:
  // a kind per node, so the other nodes' reports join the same run, not a later attempt.
  if (request.hook() == v1::HOOK_KIND_EPILOG_SLURMD) kind += "/" + request.node_list();
  // A run's hooks column lists the reports it holds, ",<kind>@<hook time>," each, so that
  // the same report again (a spool sent twice) is known whatever was merged into the
  // stored request. Rows queued before the times were kept list ",<kind>,".
  const std::string report = kind + "@" + std::to_string(request.hook_time_us());
  auto holds_kind = [&](const std::string& hooks) {
    return hooks.find("," + kind + "@") != std::string::npos || hooks.find("," + kind + ",") != std::string::npos;
  };
  // The id's newest run. EpilogSlurmctld and jobcomp/script both report an attempt, each
  // with what only it knows (SPANK options; the state and times): a report of a kind the
  // run lacks, or the same report again (a retry, a spool sent twice: same hook time), is
  // of the same attempt. While the run waits for its verdict the report fills what the
  // stored one lacks (the stored fields win); once judged, it is a duplicate. A report of
  // a kind the run has, made at another time, is a later attempt's (a requeued job), and
  // the sweep's reports are of attempts the archive does not know: runs of their own.
  auto newest = db_.prepare(
      "SELECT run, request, hooks, status = 'queued' AND verdict_json IS NULL AND failed_us IS NULL FROM jobs "
      "WHERE cluster = ? AND job_id = ? ORDER BY run DESC LIMIT 1");
  newest.bind(1, cluster).bind(2, request.job_id());
  if (newest.step() && request.hook() != v1::HOOK_KIND_SWEEP) {
    const int64_t run = newest.int_at(0);
    const std::string hooks = newest.text_at(2);
    const bool waiting = newest.int_at(3) != 0;
    v1::JobEnded previous;
    const bool readable = previous.ParseFromString(newest.text_at(1));
    const bool same_report =
        hooks.find("," + report + ",") != std::string::npos ||
        (hooks.find("," + kind + ",") != std::string::npos && previous.hook_time_us() == request.hook_time_us());
    const bool later_attempt = readable && holds_kind(hooks) && !same_report;
    if (!later_attempt) {
      if (!readable || !waiting) return false;
      v1::JobEnded merged = request;
      merged.MergeFrom(previous);
      // Another component's nodes join the het job's, another node's slurmd Epilog adds its
      // node, and a list from a hook that knows them all joins one node's (the stored list
      // would win). A node named twice is read once (merge_facts).
      const bool partial_lists = request.has_het_job_offset() || request.hook() == v1::HOOK_KIND_EPILOG_SLURMD ||
                                 previous.hook() == v1::HOOK_KIND_EPILOG_SLURMD;
      if (partial_lists && !listed_in(previous.node_list(), request.node_list()))
        merged.set_node_list(previous.node_list().empty() ? request.node_list()
                                                          : previous.node_list() + "," + request.node_list());
      std::string merged_bytes;
      if (!merged.SerializeToString(&merged_bytes)) return false;
      const std::string merged_hooks = holds_kind(hooks) ? hooks : (hooks.empty() ? "," : hooks) + report + ",";
      if (merged_bytes == newest.text_at(1) && merged_hooks == hooks) return false;
      auto update = db_.prepare("UPDATE jobs SET request = ?, hooks = ? WHERE cluster = ? AND job_id = ? AND run = ?");
      update.bind_blob(1, merged_bytes).bind(2, merged_hooks).bind(3, cluster).bind(4, request.job_id()).bind(5, run);
      if (auto s = update.run(); !s) return s.error();
      return false;
    }
  } else if (!newest.error().empty()) {
    return db_error(newest);
  }
  // A new run, after the id's newest.
  auto stmt = db_.prepare(
      "INSERT INTO jobs (cluster, job_id, run, status, request, received_us, next_attempt_us, hooks) "
      "VALUES (?1, ?2, (SELECT COALESCE(MAX(run) + 1, 0) FROM jobs WHERE cluster = ?1 AND job_id = ?2), "
      "'queued', ?3, ?4, ?5, ?6)");
  stmt.bind(1, cluster)
      .bind(2, request.job_id())
      .bind_blob(3, bytes)
      .bind(4, now)
      .bind(5, now)
      .bind(6, "," + report + ",");
  if (auto s = stmt.run(); !s) return s.error();
  return true;
}

Result<std::optional<QueuedJob>> JobStore::next_due(TimeUs now, const std::set<JobKey>& busy) {
  std::lock_guard lock(mutex_);
  std::vector<JobKey> corrupt;
  std::optional<QueuedJob> due;
  {
    auto stmt = db_.prepare(
        "SELECT cluster, job_id, run, request, attempts, received_us, verdict_json, attempt_submit_us, "
        "accounting_down_us, accounting_back_us, revised_us FROM jobs INDEXED BY jobs_due_order "
        "WHERE status IN ('queued', 'archived') AND failed_us IS NULL AND next_attempt_us <= ? "
        "ORDER BY next_attempt_us, received_us, job_id, run");
    stmt.bind(1, now);
    while (!due && stmt.step()) {
      JobKey key{stmt.text_at(0), stmt.text_at(1), stmt.int_at(2)};
      if (busy.count(key) != 0) continue;
      QueuedJob job;
      job.key = key;
      // One row that cannot be decoded must not stop the queue: it is dead-lettered below.
      if (!job.request.ParseFromString(stmt.text_at(3))) {
        corrupt.push_back(std::move(key));
        continue;
      }
      job.attempts = static_cast<int>(stmt.int_at(4));
      job.received = stmt.int_at(5);
      if (!stmt.is_null(6)) job.verdict_json = stmt.text_at(6);
      if (!stmt.is_null(7)) job.attempt_submit = stmt.int_at(7);
      if (!stmt.is_null(8)) job.outage.down = stmt.int_at(8);
      if (!stmt.is_null(9)) job.outage.back = stmt.int_at(9);
      job.revised = !stmt.is_null(10);
      due = std::move(job);
    }
    if (!due && !stmt.error().empty()) return db_error(stmt);
  }
  for (const JobKey& key : corrupt) {
    auto dead =
        db_.prepare("UPDATE jobs SET failed_us = ?, last_error = ? WHERE cluster = ? AND job_id = ? AND run = ?");
    dead.bind(1, now).bind(2, std::string(kQueueDecode) + ": the stored request cannot be decoded");
    dead.bind(3, key.cluster).bind(4, key.job_id).bind(5, key.run);
    if (auto s = dead.run(); !s) return s.error();
  }
  return due;
}

Status JobStore::reschedule(const JobKey& key, TimeUs next_attempt, const std::string& error,
                            const AccountingOutage& mark) {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare(
      "UPDATE jobs SET attempts = attempts + 1, next_attempt_us = ?, last_error = ?, "
      "accounting_down_us = COALESCE(?, accounting_down_us), accounting_back_us = COALESCE(?, accounting_back_us) "
      "WHERE cluster = ? AND job_id = ? AND run = ?");
  stmt.bind(1, next_attempt).bind(2, error);
  int index = 3;
  for (const auto& time : {mark.down, mark.back}) {
    if (time) {
      stmt.bind(index++, *time);
    } else {
      stmt.bind_null(index++);
    }
  }
  stmt.bind(5, key.cluster).bind(6, key.job_id).bind(7, key.run);
  return stmt.run();
}

Result<bool> JobStore::record_failure(const JobKey& key, TimeUs now, const std::string& error,
                                      const RetryPolicy& policy) {
  std::lock_guard lock(mutex_);
  auto read = db_.prepare("SELECT failures FROM jobs WHERE cluster = ? AND job_id = ? AND run = ?");
  read.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run);
  if (!read.step()) return read.error().empty() ? Result<bool>(false) : Result<bool>(db_error(read));
  const int64_t failures = read.int_at(0) + 1;
  const bool dead = failures >= policy.max_failures;
  // base * 2^(failures-1), capped: a dependency that is down is not hammered.
  TimeUs delay = policy.max_backoff_us;
  if (failures - 1 < 40) delay = std::min(policy.max_backoff_us, policy.backoff_us << (failures - 1));
  auto update = db_.prepare(
      "UPDATE jobs SET attempts = attempts + 1, failures = ?, next_attempt_us = ?, last_error = ?, failed_us = ? "
      "WHERE cluster = ? AND job_id = ? AND run = ?");
  update.bind(1, failures).bind(2, now + delay).bind(3, error);
  if (dead)
    update.bind(4, now);
  else
    update.bind_null(4);
  update.bind(5, key.cluster).bind(6, key.job_id).bind(7, key.run);
  if (auto s = update.run(); !s) return s.error();
  return dead;
}

Result<std::vector<FailedJob>> JobStore::failed_jobs(size_t limit) {
  std::lock_guard lock(read_mutex_);
  auto stmt = read_db_.prepare(
      "SELECT cluster, job_id, run, failures, failed_us, last_error, request FROM jobs WHERE failed_us IS NOT NULL "
      "ORDER BY failed_us DESC, job_id, run LIMIT ?");
  stmt.bind(1, static_cast<int64_t>(limit));
  std::vector<FailedJob> out;
  while (stmt.step()) {
    FailedJob job{{stmt.text_at(0), stmt.text_at(1), stmt.int_at(2)},
                  static_cast<int>(stmt.int_at(3)),
                  stmt.int_at(4),
                  stmt.text_at(5),
                  0,
                  ""};
    if (v1::JobEnded request; request.ParseFromString(stmt.text_at(6))) {
      job.uid = request.uid();
      job.user = request.user();
    }
    out.push_back(std::move(job));
  }
  if (!stmt.error().empty()) return db_error(stmt);
  return out;
}

Result<std::optional<int64_t>> JobStore::same_attempt(const JobKey& key, TimeUs attempt_submit) {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare(
      "SELECT run FROM jobs WHERE cluster = ? AND job_id = ? AND run != ? AND attempt_submit_us = ? "
      "ORDER BY run LIMIT 1");
  stmt.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run).bind(4, attempt_submit);
  if (stmt.step()) return std::optional<int64_t>(stmt.int_at(0));
  if (!stmt.error().empty()) return db_error(stmt);
  return std::optional<int64_t>();
}

Result<bool> JobStore::earlier_run_waiting(const JobKey& key) {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare(
      "SELECT EXISTS (SELECT 1 FROM jobs WHERE cluster = ? AND job_id = ? AND run < ? AND status = 'queued' "
      "AND verdict_json IS NULL AND failed_us IS NULL)");
  stmt.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run);
  if (!stmt.step()) return db_error(stmt);
  return stmt.int_at(0) != 0;
}

Result<bool> JobStore::knows_attempt(const std::string& cluster, const std::string& job_id, TimeUs attempt_submit,
                                     TimeUs attempt_end) {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare(
      "SELECT EXISTS (SELECT 1 FROM jobs WHERE cluster = ?1 AND job_id = ?2 AND (attempt_submit_us = ?3 OR "
      "(attempt_submit_us IS NULL AND received_us >= ?4)))");
  stmt.bind(1, cluster).bind(2, job_id).bind(3, attempt_submit).bind(4, attempt_end);
  if (!stmt.step()) return db_error(stmt);
  return stmt.int_at(0) != 0;
}

Status JobStore::drop_second_report(const JobKey& key) {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare("DELETE FROM jobs WHERE cluster = ? AND job_id = ? AND run = ? AND verdict_json IS NULL");
  stmt.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run);
  return stmt.run();
}

Status JobStore::mark_done(const JobKey& key, TimeUs now) { return mark_all_done({key}, now); }

Status JobStore::mark_all_done(const std::vector<JobKey>& keys, TimeUs now) {
  std::lock_guard lock(mutex_);
  RelaxedSync relaxed(db_);  // lost, the runs write their comments again (found already there)
  Transaction tx(db_);
  if (auto s = tx.began(); !s) return s;
  auto stmt = db_.prepare(
      "UPDATE jobs SET status = 'done', done_us = ?, last_error = '' "
      "WHERE cluster = ? AND job_id = ? AND run = ? AND status = 'archived'");
  for (const JobKey& key : keys) {
    stmt.reset();
    stmt.bind(1, now).bind(2, key.cluster).bind(3, key.job_id).bind(4, key.run);
    if (auto s = stmt.run(); !s) return s;
  }
  return tx.commit();
}

Status JobStore::mark_not_attributed(const JobKey& key, const std::string& why, TimeUs now) {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare(
      "UPDATE jobs SET status = 'done', done_us = ?, last_error = ? "
      "WHERE cluster = ? AND job_id = ? AND run = ? AND status = 'queued' AND verdict_json IS NULL");
  stmt.bind(1, now).bind(2, why).bind(3, key.cluster).bind(4, key.job_id).bind(5, key.run);
  return stmt.run();
}

Result<int64_t> JobStore::pending_count() {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare("SELECT count(*) FROM jobs WHERE status != 'done' AND failed_us IS NULL");
  if (!stmt.step()) return db_error(stmt);
  return stmt.int_at(0);
}

}  // namespace attrib::store
