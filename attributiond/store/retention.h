// Keeping the archive within its retention (docs/operations.md, "Retention"): raw
// evidence goes first (it is most of the bytes and only re-attribution reads it), then
// whole runs (the job row with its events, coverage, history and evidence).
//
// Only finished runs are ever pruned: done (the comment written, or recorded without a
// verdict) or dead-lettered. A queued run, or one archived with its comment still to
// write, is in flight and never touched, however old. Runs younger than `keep_runs_after`
// are never deleted either: the sweep asks the archive whether it knows an attempt that
// ended inside its lookback, and a deleted run would be queued and judged again.
#pragma once

#include <cstdint>
#include <optional>

#include "attributiond/store/job_store.h"
#include "common/config.h"
#include "core/result.h"

namespace attrib::store {

struct RetentionPolicy {
  std::optional<TimeUs> evidence_before;  // raw evidence of runs finished before this goes
  std::optional<TimeUs> runs_before;      // runs finished before this go whole
  uint64_t max_bytes = 0;                 // 0: no cap; else oldest evidence, then oldest runs, until under
  TimeUs keep_runs_after = 0;             // runs finished after this are never deleted (evidence may go)
  int batch = 200;                        // rows per transaction: the queue's lock is held that long only
};

struct PruneReport {
  uint64_t evidence_pruned = 0;  // runs whose raw evidence was dropped
  uint64_t runs_pruned = 0;      // runs deleted whole
  uint64_t remediation_pruned = 0;
  uint64_t bytes_before = 0;  // used bytes (pages in use), before and after
  uint64_t bytes_after = 0;
  bool over_cap = false;  // still over max_bytes: nothing more may go
};

// The policy the configuration sets at `now`: archive.* ages and cap, and the runs the
// sweep may still look for (head.sweep_lookback_s plus the wait for a final record)
// kept whole.
RetentionPolicy retention_policy(const common::ArchiveConfig& archive, const common::HeadConfig& head, TimeUs now);

// One pass: by age, then by size. Each batch is its own transaction, so the epilog's
// SubmitJobEnded waits one batch at most. The pass is recorded (archive_stats' last_prune).
Result<PruneReport> prune_archive(JobStore& store, const RetentionPolicy& policy, TimeUs now);

// What attrib-show --stats prints (read on the read-only connection).
struct ArchiveStats {
  uint64_t file_bytes = 0;  // the database file (pages, free ones included)
  uint64_t used_bytes = 0;  // pages in use: what archive.max_bytes bounds
  int64_t runs = 0;
  int64_t queued = 0;  // not done and not dead-lettered
  int64_t dead_lettered = 0;
  int64_t evidence_runs = 0;  // runs with raw evidence kept
  uint64_t evidence_stored_bytes = 0;
  uint64_t evidence_raw_bytes = 0;
  int64_t evidence_pruned = 0;       // runs whose raw evidence retention dropped
  std::optional<TimeUs> oldest_run;  // received
  std::optional<TimeUs> newest_run;
  std::optional<TimeUs> oldest_evidence;  // received, of the oldest run with raw evidence
  int64_t schema_version = 0;             // PRAGMA user_version: the migrations applied
  std::optional<TimeUs> last_prune;       // the last retention pass (prune_archive), if any
};
Result<ArchiveStats> archive_stats(JobStore& store);

}  // namespace attrib::store
