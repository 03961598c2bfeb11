// The head daemon's durable state: the job queue (every accepted JobEnded is written here
// before the RPC returns) and the verdict archive. A job's run moves queued -> archived
// (verdict, events and coverage stored) -> done (comment written to slurmdbd and read
// back); one that keeps failing is dead-lettered instead.
//
// The contract a storage engine implements: JobStore's public methods below, grouped as
// the queue, the archive and lookup, with these guarantees. Today's engine keeps it all in
// one SQLite file (job_store.cpp opens it, job_queue.cpp is the queue, verdict_archive.cpp
// the archive and lookup, schema_migrations.cpp the schema history); a PostgreSQL engine
// is to give the same methods the same guarantees.
// - The queue is durable before enqueue returns: a report the caller then answers, or
//   whose spool file it removes, survives a crash and a power cut. enqueue_all is atomic:
//   all of its reports are queued, or none.
// - archive keeps a run's first verdict: archiving the run again changes nothing, and an
//   attempt archived as one run is not archived as another (the second run is dropped,
//   QUEUE_E_SAME_ATTEMPT). A verdict is stored whole (verdict, events, coverage, history
//   row, raw evidence) or not at all; only revise replaces it, keeping the old as a version.
//   archive and the done marks may be lost to a power cut (not to a crash): the run is then
//   judged, or its comment written, again, and nothing is lost.
// - Every step is idempotent and keyed by the run (JobKey): a step that finds its run no
//   longer in the state it expects changes nothing, so a daemon killed at any point resumes
//   from the runs' states and attributes each attempt once.
// - Writes are serialised; failed_jobs, evidence, versions and with_read_db read on a
//   connection of their own and never wait for a writer.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "attrib/v1/attrib.pb.h"
#include "attributiond/store/job_key.h"
#include "attributiond/store/sqlite.h"
#include "attributiond/store/wal_checkpointer.h"
#include "core/result.h"
#include "core/verdict.h"

namespace attrib::store {

// slurmdbd's last outage as one run saw it: when it was last found unreachable, and when
// it first answered after that (scoping waits for the final record from its return).
struct AccountingOutage {
  std::optional<TimeUs> down;
  std::optional<TimeUs> back;
};

struct QueuedJob {
  JobKey key;
  v1::JobEnded request;
  int attempts = 0;
  TimeUs received = 0;
  std::optional<std::string> verdict_json;  // set once archived; the comment may still be pending
  std::optional<TimeUs> attempt_submit;     // the judged attempt's row (set with verdict_json)
  AccountingOutage outage;
  bool revised = false;  // re-attributed (revise): only its comment is rewritten, nothing acts
};

struct JobRecord {
  JobKey key;
  int64_t runs = 1;    // the job id's runs are numbered 0 .. runs - 1 (one folded away may be missing)
  std::string status;  // queued | archived | done | failed (dead-lettered)
  int attempts = 0;
  std::string last_error;
  std::optional<std::string> verdict_json;
  uint32_t uid = 0;  // who the job ran as, from the stored JobEnded (0 with user "" : unknown)
  std::string user;
  std::string scheduler = "slurm";  // another one's for an attempt judged through the attribution API
};

// What archive_external did: the run holding the attempt, and whether it was new.
struct ExternalArchived {
  JobKey key;
  bool created = false;      // false: the attempt was archived before; nothing changed
  std::string verdict_json;  // the run's verdict, as archived
};

// How attribution failures are retried (config head.retry_backoff_s and friends).
struct RetryPolicy {
  TimeUs backoff_us = 5000000;        // the first retry's delay; doubled for each further failure
  TimeUs max_backoff_us = 600000000;  // the cap of the delay
  int64_t max_failures = 10;          // dead-lettered at this many failures
};

// A dead-lettered job: kept with why, no longer retried (attrib-show --failed).
struct FailedJob {
  JobKey key;
  int failures = 0;
  TimeUs failed_us = 0;
  std::string last_error;
  uint32_t uid = 0;  // the job's owner, from the stored request (0 with user "": unknown)
  std::string user;
};

// An attempt's raw evidence as archived (table evidence, migration 7).
struct ArchivedEvidence {
  std::string blob;  // common::pack_evidence of the bundle v1 files
  uint64_t raw_bytes = 0;
  uint64_t lines = 0;
  uint64_t dropped_lines = 0;
  bool complete = false;  // replays to the archived verdict
  std::string note;       // why it is not complete
};

// One verdict a run has had (table verdict_versions): 0 the first, then each revision.
struct VerdictVersion {
  int64_t version = 0;
  TimeUs time = 0;
  std::string ruleset_version;
  std::string ruleset_hash;
  std::string domain;
  std::string rule;  // the root cause's; "" without one
  std::string confidence;
  std::string why;  // "attributed", or what revised it
  std::string verdict_json;
};

// Who opens the archive. The daemon creates it and migrates its schema; a tool
// (attrib-reattribute, attrib-rules mine) opens only an archive the daemon has made
// current and never changes its schema behind the daemon's back (DB_E_SCHEMA otherwise).
enum class StoreAccess { Daemon, Tool };

class JobStore {
 public:
  // Creates (the daemon) or checks (a tool) the file's schema, then opens it.
  static Result<std::unique_ptr<JobStore>> open(const std::string& path, StoreAccess access = StoreAccess::Daemon);

  // ---- the queue (job_queue.cpp): reports in, due runs out, each run's way to done ----
  // Durably queues the job. Returns false for another report of the id's newest run's
  // attempt (another hook kind, or the same report again): a waiting run gains the fields
  // its first report lacked (e.g. SPANK options from a second hook). A report of a hook
  // kind the newest run has, at another time, or from the sweep, is a new run; whether it
  // is a new attempt is checked against accounting again (same_attempt).
  Result<bool> enqueue(const v1::JobEnded& request, const std::string& cluster, TimeUs now);
  // enqueue for each request (under its own cluster()), all in one transaction: one fsync
  // for a burst of spool files, which stay the durable copy until this returns. An error
  // queues none of them.
  Result<std::vector<bool>> enqueue_all(const std::vector<v1::JobEnded>& requests, TimeUs now);
  // The oldest job that is due and not in `busy`. A row whose request cannot be decoded is
  // dead-lettered on the way, never returned and never blocks the others.
  Result<std::optional<QueuedJob>> next_due(TimeUs now, const std::set<JobKey>& busy);
  // Not ready yet (the accounting record lags): look again at next_attempt.
  // `mark`: the times of the outage to remember (a time not given keeps the stored one).
  Status reschedule(const JobKey& key, TimeUs next_attempt, const std::string& error,
                    const AccountingOutage& mark = {});
  // An attempt failed: retried after an exponential backoff, or dead-lettered once it has
  // failed policy.max_failures times. Returns whether it was dead-lettered.
  Result<bool> record_failure(const JobKey& key, TimeUs now, const std::string& error, const RetryPolicy& policy);
  // Dead-lettered jobs, newest first (read on the read-only connection).
  Result<std::vector<FailedJob>> failed_jobs(size_t limit);
  // Another run of key's job id that was judged on the same attempt (the accounting row
  // submitted at attempt_submit): key's run is then that attempt reported twice.
  Result<std::optional<int64_t>> same_attempt(const JobKey& key, TimeUs attempt_submit);
  // Whether a run of key's job id reported before key's (a lower run) is still to be judged
  // (queued without a verdict, not dead-lettered). A report whose attempt slurmdbd's rows
  // do not show yet waits for it: two reports read onto one row are then judged in the
  // order they came, and the later one meets the earlier's verdict (same_attempt) instead
  // of racing it to the archive.
  Result<bool> earlier_run_waiting(const JobKey& key);
  // Whether the archive has the attempt of job_id whose accounting row was submitted at
  // attempt_submit and ended at attempt_end: a run judged on that row, or a run not judged
  // yet (queued, or recorded without a verdict such as an opt-out) that was reported after
  // that end. The sweep leaves such attempts alone.
  Result<bool> knows_attempt(const std::string& cluster, const std::string& job_id, TimeUs attempt_submit,
                             TimeUs attempt_end);
  // Removes a run that same_attempt found to be a second report of an attributed attempt:
  // the attempt keeps its one run, and the job id its newest verdict.
  Status drop_second_report(const JobKey& key);
  // archived -> done: the run's comment is written (and read back).
  Status mark_done(const JobKey& key, TimeUs now);
  // Several runs at once, in one transaction (one fsync for a batch of comments written
  // together): all are done, or none.
  Status mark_all_done(const std::vector<JobKey>& keys, TimeUs now);
  // Finishes a job without a verdict, keeping why (e.g. the user opted out).
  Status mark_not_attributed(const JobKey& key, const std::string& why, TimeUs now);
  // Runs not yet done and not dead-lettered.
  Result<int64_t> pending_count();

  // ---- the archive (verdict_archive.cpp): each run's verdict, the first one kept ----
  // Stores the verdict, its events and coverage, and the submit time of the accounting row
  // it was judged on (unknown when judged from the hook's facts alone); a run archived
  // once keeps its first verdict.
  Status archive(const JobKey& key, const Verdict& verdict, const std::vector<Event>& events, TimeUs now,
                 std::optional<TimeUs> attempt_submit = std::nullopt, const ArchivedEvidence* evidence = nullptr);
  // An attempt of another scheduler judged through the attribution API (attributiond/api):
  // recorded as a finished run of (request.cluster, request.job_id) with its verdict,
  // events, evidence and scheduler in one transaction; nothing is queued, no Slurm field
  // is written. The same attempt (the verdict's attempt number) handed in again is not
  // archived twice: the run that holds it answers, only to `only_owner` when given (an
  // ordinary caller; VERDICT_E_FORBIDDEN for another's).
  Result<ExternalArchived> archive_external(const v1::JobEnded& request, const std::string& scheduler,
                                            const Verdict& verdict, const std::vector<Event>& events,
                                            const ArchivedEvidence* evidence, TimeUs now,
                                            std::optional<uint32_t> only_owner = std::nullopt);
  // The run that holds that attempt of another scheduler, when one does (archive_external's
  // duplicate, found before anything is judged); VERDICT_E_FORBIDDEN as archive_external.
  Result<std::optional<ExternalArchived>> find_external(const std::string& cluster, const std::string& job_id,
                                                        const std::string& scheduler, int attempt,
                                                        std::optional<uint32_t> only_owner);
  // Re-attribution: replaces a finished run's verdict (events, coverage, history) with
  // `verdict`, keeping the one it replaces as a version (the first revision also keeps the
  // original as version 0), and queues the run for its comment to be rewritten. Returns
  // false, changing nothing, when the run is not finished (queued, or its comment not yet
  // written): its first verdict is still on its way.
  Result<bool> revise(const JobKey& key, const Verdict& verdict, const std::vector<Event>& events,
                      const std::string& why, TimeUs now);

  // ---- lookup (verdict_archive.cpp): what the store holds for one run ----
  // One run of the job id; without run, its newest.
  Result<std::optional<JobRecord>> lookup(const std::string& cluster, const std::string& job_id,
                                          std::optional<int64_t> run = std::nullopt);
  // The raw evidence archived with a run (read on the read-only connection); none when
  // the run kept none (archived before it was kept, or head.raw_evidence_max_kib 0).
  Result<std::optional<ArchivedEvidence>> evidence(const JobKey& key);
  // Every verdict the run has had, oldest first; empty for a run never revised.
  Result<std::vector<VerdictVersion>> versions(const JobKey& key);

  // ---- the SQLite engine's escape hatch: not part of the contract above ----
  // The named queries (fleet_queries.h, archive_queries.h, retention.h) reach the file
  // through these. A second engine has to replace the two, and every query written against
  // store::Database (dashboard_queries.h too), with its own.

  // Runs fn(db::Database&) on the store's connection under its lock: what writes (the
  // remediation records) and what decides on the history the workers just wrote.
  template <typename Fn>
  auto with_db(Fn&& fn) {
    std::lock_guard lock(mutex_);
    return fn(db_);
  }
  // Runs fn(db::Database&) on the store's read-only connection, under a lock of its own:
  // listings and reports (fleet_queries.h) read here. They never take the queue's lock,
  // and WAL lets the writer commit while a read is open, so no read, however slow, delays
  // a SubmitJobEnded past the epilog's deadline.
  template <typename Fn>
  auto with_read_db(Fn&& fn) {
    std::lock_guard lock(read_mutex_);
    return fn(read_db_);
  }

 private:
  // The SQLite engine's own: its connections and the steps its public methods share.
  JobStore(store::Database db, store::Database read_db) : db_(std::move(db)), read_db_(std::move(read_db)) {}
  Result<std::optional<ExternalArchived>> find_external_locked(const std::string& cluster, const std::string& job_id,
                                                               const std::string& scheduler, int attempt,
                                                               std::optional<uint32_t> only_owner);
  // enqueue's work inside the caller's transaction (mutex_ held).
  Result<bool> enqueue_in_transaction(const v1::JobEnded& request, const std::string& cluster, TimeUs now);
  // archive()'s writes, under the lock and inside the caller's transaction.
  Status archive_row(const JobKey& key, const Verdict& verdict, const std::vector<Event>& events, TimeUs now,
                     std::optional<TimeUs> attempt_submit, const ArchivedEvidence* evidence);
  std::mutex mutex_;  // the writing connection, shared by the RPC threads and the workers
  store::Database db_;
  std::mutex read_mutex_;  // the reading connection, shared by the readers
  store::Database read_db_;
  // db_'s checkpoints, off the writers' path; stopped before the connections close.
  std::unique_ptr<store::WalCheckpointer> checkpointer_;
};

}  // namespace attrib::store
