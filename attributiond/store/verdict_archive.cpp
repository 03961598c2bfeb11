// The archive: a run's verdict with its events, coverage, history row and raw evidence,
// written in one transaction and kept as first archived (revise keeps each replaced one
// as a version); and the lookups of what it holds.
#include "attributiond/store/job_store.h"
#include "attributiond/store/store_rows.h"
#include "core/failpoint.h"
#include "core/json_text.h"

namespace attrib::store {
namespace {

// A verdict as the archive keeps it: naming its run (`Verdict::run`).
std::string archived_json(const JobKey& key, Verdict verdict) {
  verdict.run = key.run;
  return json_text(to_json(verdict));
}

// A verdict's events and coverage rows (archive, revise).
Status insert_events(store::Database& db, const JobKey& key, const std::vector<Event>& events) {
  for (const Event& e : events) {
    auto ins = db.prepare(
        "INSERT INTO events (cluster, job_id, run, event_id, kind, rule, node, source, time_us, seq, trusted, "
        "line, fields, count) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    ins.bind(1, key.cluster)
        .bind(2, key.job_id)
        .bind(3, key.run)
        .bind(4, e.id)
        .bind(5, e.kind)
        .bind(6, e.rule)
        .bind(7, e.node)
        .bind(8, e.source);
    if (e.time)
      ins.bind(9, *e.time);
    else
      ins.bind_null(9);
    ins.bind(10, static_cast<int64_t>(e.seq))
        .bind(11, int64_t{e.trusted})
        .bind(12, e.line)
        .bind(13, json_text(e.fields))
        .bind(14, static_cast<int64_t>(e.count));
    if (auto s = ins.run(); !s) return s;
  }
  return ok_status();
}

Status insert_coverage(store::Database& db, const JobKey& key, const std::vector<Coverage>& coverage) {
  for (const Coverage& c : coverage) {
    auto ins = db.prepare(
        "INSERT OR REPLACE INTO coverage (cluster, job_id, run, node, source, status, lines, events, detail) "
        "VALUES (?,?,?,?,?,?,?,?,?)");
    ins.bind(1, key.cluster)
        .bind(2, key.job_id)
        .bind(3, key.run)
        .bind(4, c.node)
        .bind(5, c.source)
        .bind(6, to_string(c.status))
        .bind(7, static_cast<int64_t>(c.lines))
        .bind(8, static_cast<int64_t>(c.events))
        .bind(9, c.detail);
    if (auto s = ins.run(); !s) return s;
  }
  return ok_status();
}

Status insert_version(store::Database& db, const JobKey& key, int64_t version, TimeUs time, const Verdict& verdict,
                      const std::string& why, const std::string& verdict_json) {
  auto ins = db.prepare(
      "INSERT INTO verdict_versions (cluster, job_id, run, version, time_us, ruleset_version, ruleset_hash, domain, "
      "rule, confidence, why, verdict_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, key.cluster)
      .bind(2, key.job_id)
      .bind(3, key.run)
      .bind(4, version)
      .bind(5, time)
      .bind(6, verdict.ruleset_version)
      .bind(7, verdict.ruleset_hash)
      .bind(8, verdict.domain)
      .bind(9, verdict.root_cause ? verdict.root_cause->rule : "")
      .bind(10, verdict.confidence)
      .bind(11, why)
      .bind(12, verdict_json);
  return ins.run();
}

}  // namespace

using detail::bind_owner;
using detail::db_error;
using detail::insert_history;

Status JobStore::archive(const JobKey& key, const Verdict& verdict, const std::vector<Event>& events, TimeUs now,
                         std::optional<TimeUs> attempt_submit, const ArchivedEvidence* evidence) {
  std::lock_guard lock(mutex_);
  // Lost to a power cut, the run is queued without its verdict and judged again: one fsync
  // a job less in a burst (the queue's own insert keeps its fsync).
  RelaxedSync relaxed(db_);
  store::Transaction tx(db_);
  if (auto s = tx.began(); !s) return s;
  // Two reports of one attempt queued as two runs and judged at once by two workers: the
  // first archived wins, the other run is dropped here, in the archive's transaction, so
  // no attempt is archived twice whatever the timing (same_attempt, before the evidence is
  // read, only saves the work).
  if (attempt_submit) {
    auto judged = db_.prepare(
        "SELECT run FROM jobs WHERE cluster = ? AND job_id = ? AND run != ? AND attempt_submit_us = ? "
        "AND verdict_json IS NOT NULL ORDER BY run LIMIT 1");
    judged.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run).bind(4, *attempt_submit);
    if (judged.step()) {
      const int64_t first = judged.int_at(0);
      auto drop = db_.prepare("DELETE FROM jobs WHERE cluster = ? AND job_id = ? AND run = ? AND verdict_json IS NULL");
      drop.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run);
      if (auto s = drop.run(); !s) return s;
      if (auto s = tx.commit(); !s) return s;
      return Error{kQueueSameAttempt, "job " + key.job_id + " run " + std::to_string(key.run) +
                                          ": the attempt was archived as run " + std::to_string(first)};
    }
    if (!judged.error().empty()) return db_error(judged);
  }
  if (auto s = archive_row(key, verdict, events, now, attempt_submit, evidence); !s) return s;
  return tx.commit();
}

Status JobStore::archive_row(const JobKey& key, const Verdict& verdict, const std::vector<Event>& events, TimeUs now,
                             std::optional<TimeUs> attempt_submit, const ArchivedEvidence* evidence) {
  auto update = db_.prepare(
      "UPDATE jobs SET status = 'archived', verdict_json = ?, domain = ?, archived_us = ?, last_error = '', "
      "attempt_submit_us = ? WHERE cluster = ? AND job_id = ? AND run = ? AND verdict_json IS NULL");
  update.bind(1, archived_json(key, verdict)).bind(2, verdict.domain).bind(3, now);
  if (attempt_submit)
    update.bind(4, *attempt_submit);
  else
    update.bind_null(4);
  update.bind(5, key.cluster).bind(6, key.job_id).bind(7, key.run);
  if (auto s = update.run(); !s) return s;
  auto changes = db_.prepare("SELECT changes()");
  if (!changes.step() || changes.int_at(0) == 0) return ok_status();  // archived before: keep the first

  // The fleet history row and the listings' owner, from what the stored request holds.
  v1::JobEnded request;
  auto stored = db_.prepare("SELECT request FROM jobs WHERE cluster = ? AND job_id = ? AND run = ?");
  stored.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run);
  if (stored.step()) request.ParseFromString(stored.text_at(0));
  auto owner = db_.prepare("UPDATE jobs SET owner_uid = ? WHERE cluster = ? AND job_id = ? AND run = ?");
  bind_owner(owner, 1, request);
  owner.bind(2, key.cluster).bind(3, key.job_id).bind(4, key.run);
  if (auto s = owner.run(); !s) return s;
  if (auto s = insert_history(db_, key, verdict, request, now); !s) return s;

  if (auto s = insert_events(db_, key, events); !s) return s;
  if (evidence != nullptr) {
    auto ins = db_.prepare(
        "INSERT OR REPLACE INTO evidence (cluster, job_id, run, raw_bytes, stored_bytes, lines, dropped_lines, "
        "complete, note, blob) VALUES (?,?,?,?,?,?,?,?,?,?)");
    ins.bind(1, key.cluster)
        .bind(2, key.job_id)
        .bind(3, key.run)
        .bind(4, static_cast<int64_t>(evidence->raw_bytes))
        .bind(5, static_cast<int64_t>(evidence->blob.size()))
        .bind(6, static_cast<int64_t>(evidence->lines))
        .bind(7, static_cast<int64_t>(evidence->dropped_lines))
        .bind(8, int64_t{evidence->complete})
        .bind(9, evidence->note)
        .bind_blob(10, evidence->blob);
    if (auto s = ins.run(); !s) return s;
  }
  failpoint("archive.mid_transaction");  // verdict, history, events and evidence written, not committed
  return insert_coverage(db_, key, verdict.coverage);
}

Result<std::optional<ExternalArchived>> JobStore::find_external(const std::string& cluster, const std::string& job_id,
                                                                const std::string& scheduler, int attempt,
                                                                std::optional<uint32_t> only_owner) {
  std::lock_guard lock(mutex_);
  return find_external_locked(cluster, job_id, scheduler, attempt, only_owner);
}

Result<std::optional<ExternalArchived>> JobStore::find_external_locked(const std::string& cluster,
                                                                       const std::string& job_id,
                                                                       const std::string& scheduler, int attempt,
                                                                       std::optional<uint32_t> only_owner) {
  auto known = db_.prepare(
      "SELECT run, verdict_json, owner_uid FROM jobs WHERE cluster = ? AND job_id = ? AND scheduler = ? "
      "AND verdict_json IS NOT NULL AND json_extract(verdict_json, '$.attempt') = ? ORDER BY run DESC LIMIT 1");
  known.bind(1, cluster).bind(2, job_id).bind(3, scheduler).bind(4, int64_t{attempt});
  if (!known.step()) {
    if (!known.error().empty()) return db_error(known);
    return std::optional<ExternalArchived>();
  }
  // Its verdict is its owner's to read: anyone else handing in the same ids learns nothing.
  if (only_owner && (known.is_null(2) || known.int_at(2) != static_cast<int64_t>(*only_owner)))
    return Error{kVerdictForbidden, "job " + job_id + " attempt " + std::to_string(attempt) + " of cluster " + cluster +
                                        " was judged for another caller"};
  return std::optional<ExternalArchived>(ExternalArchived{{cluster, job_id, known.int_at(0)}, false, known.text_at(1)});
}

Result<ExternalArchived> JobStore::archive_external(const v1::JobEnded& request, const std::string& scheduler,
                                                    const Verdict& verdict, const std::vector<Event>& events,
                                                    const ArchivedEvidence* evidence, TimeUs now,
                                                    std::optional<uint32_t> only_owner) {
  std::string bytes;
  if (!request.SerializeToString(&bytes)) return Error{kQueueEncode, "cannot encode JobEnded"};
  const std::string& cluster = request.cluster();
  std::lock_guard lock(mutex_);
  store::Transaction tx(db_);
  if (auto s = tx.began(); !s) return s.error();
  // Looked up again inside the transaction: another request for the attempt may have
  // archived it since the caller's find_external.
  auto known = find_external_locked(cluster, request.job_id(), scheduler, verdict.attempt, only_owner);
  if (!known) return known.error();
  if (*known) return std::move(**known);
  JobKey key{cluster, request.job_id(), 0};
  {  // finalized (RETURNING read) before the next statement runs
    auto insert = db_.prepare(
        "INSERT INTO jobs (cluster, job_id, run, status, request, received_us, next_attempt_us, scheduler) "
        "VALUES (?1, ?2, (SELECT COALESCE(MAX(run) + 1, 0) FROM jobs WHERE cluster = ?1 AND job_id = ?2), "
        "'queued', ?3, ?4, ?4, ?5) RETURNING run");
    insert.bind(1, cluster).bind(2, request.job_id()).bind_blob(3, bytes).bind(4, now).bind(5, scheduler);
    if (!insert.step()) return db_error(insert);
    key.run = insert.int_at(0);
  }
  if (auto s = archive_row(key, verdict, events, now, std::nullopt, evidence); !s) return s.error();
  auto done = db_.prepare("UPDATE jobs SET status = 'done', done_us = ? WHERE cluster = ? AND job_id = ? AND run = ?");
  done.bind(1, now).bind(2, key.cluster).bind(3, key.job_id).bind(4, key.run);
  if (auto s = done.run(); !s) return s.error();
  if (auto s = tx.commit(); !s) return s.error();
  return ExternalArchived{key, true, archived_json(key, verdict)};
}

Result<bool> JobStore::revise(const JobKey& key, const Verdict& verdict, const std::vector<Event>& events,
                              const std::string& why, TimeUs now) {
  std::lock_guard lock(mutex_);
  store::Transaction tx(db_);
  if (auto s = tx.began(); !s) return s.error();
  auto current = db_.prepare(
      "SELECT verdict_json, COALESCE(archived_us, received_us), request FROM jobs "
      "WHERE cluster = ? AND job_id = ? AND run = ? AND status = 'done' AND verdict_json IS NOT NULL");
  current.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run);
  if (!current.step()) {
    if (!current.error().empty()) return db_error(current);
    return false;
  }
  const std::string old_json = current.text_at(0);
  const TimeUs archived = current.int_at(1);
  v1::JobEnded request;
  request.ParseFromString(current.text_at(2));

  auto last = db_.prepare("SELECT max(version) FROM verdict_versions WHERE cluster = ? AND job_id = ? AND run = ?");
  last.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run);
  if (!last.step()) return db_error(last);
  int64_t version = 0;
  if (last.is_null(0)) {
    // The first revision: the verdict the run was judged with becomes version 0.
    auto parsed = verdict_from_json(nlohmann::json::parse(old_json, nullptr, false));
    if (!parsed)
      return Error{kDbStep, "job " + key.job_id + ": the archived verdict does not parse: " + parsed.error().message};
    if (auto s = insert_version(db_, key, 0, archived, *parsed, "attributed", old_json); !s) return s.error();
  } else {
    version = last.int_at(0);
  }
  const std::string new_json = archived_json(key, verdict);
  if (auto s = insert_version(db_, key, version + 1, now, verdict, why, new_json); !s) return s.error();

  // The run's verdict rows replaced; archived again so that a worker rewrites its comment.
  for (const char* table : {"events", "coverage", "history"}) {
    auto del = db_.prepare(std::string("DELETE FROM ") + table + " WHERE cluster = ? AND job_id = ? AND run = ?");
    del.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run);
    if (auto s = del.run(); !s) return s.error();
  }
  auto update = db_.prepare(
      "UPDATE jobs SET status = 'archived', verdict_json = ?, domain = ?, revised_us = ?, next_attempt_us = 0, "
      "last_error = '' WHERE cluster = ? AND job_id = ? AND run = ?");
  update.bind(1, new_json)
      .bind(2, verdict.domain)
      .bind(3, now)
      .bind(4, key.cluster)
      .bind(5, key.job_id)
      .bind(6, key.run);
  if (auto s = update.run(); !s) return s.error();
  if (auto s = insert_history(db_, key, verdict, request, archived); !s) return s.error();
  if (auto s = insert_events(db_, key, events); !s) return s.error();
  if (auto s = insert_coverage(db_, key, verdict.coverage); !s) return s.error();
  if (auto s = tx.commit(); !s) return s.error();
  return true;
}

Result<std::vector<VerdictVersion>> JobStore::versions(const JobKey& key) {
  std::lock_guard lock(read_mutex_);
  auto stmt = read_db_.prepare(
      "SELECT version, time_us, ruleset_version, ruleset_hash, domain, rule, confidence, why, verdict_json "
      "FROM verdict_versions WHERE cluster = ? AND job_id = ? AND run = ? ORDER BY version");
  stmt.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run);
  std::vector<VerdictVersion> out;
  while (stmt.step())
    out.push_back({stmt.int_at(0), stmt.int_at(1), stmt.text_at(2), stmt.text_at(3), stmt.text_at(4), stmt.text_at(5),
                   stmt.text_at(6), stmt.text_at(7), stmt.text_at(8)});
  if (!stmt.error().empty()) return db_error(stmt);
  return out;
}

Result<std::optional<JobRecord>> JobStore::lookup(const std::string& cluster, const std::string& job_id,
                                                  std::optional<int64_t> run) {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare(
      "SELECT CASE WHEN failed_us IS NULL THEN status ELSE 'failed' END, attempts, last_error, verdict_json, request, "
      "run, (SELECT MAX(run) + 1 FROM jobs WHERE cluster = ?1 AND job_id = ?2), scheduler "
      "FROM jobs WHERE cluster = ?1 AND job_id = ?2 AND (?3 IS NULL OR run = ?3) ORDER BY run DESC LIMIT 1");
  stmt.bind(1, cluster).bind(2, job_id);
  if (run)
    stmt.bind(3, *run);
  else
    stmt.bind_null(3);
  if (!stmt.step()) {
    if (!stmt.error().empty()) return db_error(stmt);
    return std::optional<JobRecord>();
  }
  JobRecord record;
  record.key = {cluster, job_id, stmt.int_at(5)};
  record.runs = stmt.int_at(6);
  record.status = stmt.text_at(0);
  record.attempts = static_cast<int>(stmt.int_at(1));
  record.last_error = stmt.text_at(2);
  if (!stmt.is_null(3)) record.verdict_json = stmt.text_at(3);
  record.scheduler = stmt.text_at(7);
  // The owner is read from the stored request (no column of its own): every row has it,
  // including rows written before attrib checked ownership.
  if (v1::JobEnded request; request.ParseFromString(stmt.text_at(4))) {
    record.uid = request.uid();
    record.user = request.user();
  }
  return std::optional<JobRecord>(std::move(record));
}

Result<std::optional<ArchivedEvidence>> JobStore::evidence(const JobKey& key) {
  std::lock_guard lock(read_mutex_);
  auto stmt = read_db_.prepare(
      "SELECT blob, raw_bytes, lines, dropped_lines, complete, note FROM evidence "
      "WHERE cluster = ? AND job_id = ? AND run = ?");
  stmt.bind(1, key.cluster).bind(2, key.job_id).bind(3, key.run);
  if (!stmt.step()) {
    if (!stmt.error().empty()) return db_error(stmt);
    return std::optional<ArchivedEvidence>();
  }
  ArchivedEvidence evidence;
  evidence.blob = stmt.text_at(0);
  evidence.raw_bytes = static_cast<uint64_t>(stmt.int_at(1));
  evidence.lines = static_cast<uint64_t>(stmt.int_at(2));
  evidence.dropped_lines = static_cast<uint64_t>(stmt.int_at(3));
  evidence.complete = stmt.int_at(4) != 0;
  evidence.note = stmt.text_at(5);
  return std::optional<ArchivedEvidence>(std::move(evidence));
}

}  // namespace attrib::store
