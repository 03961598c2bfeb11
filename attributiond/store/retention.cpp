#include "attributiond/store/retention.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error_codes.h"

namespace attrib::store {
namespace {

// When a run finished: its comment written, else its dead-lettering, else its verdict.
constexpr const char* kFinished = "COALESCE(j.done_us, j.failed_us, j.archived_us, j.received_us)";
// Runs nothing works on any more (see retention.h): never a queued or in-flight one.
constexpr const char* kFinishedRun = "(j.status = 'done' OR j.failed_us IS NOT NULL)";

Error step_error(const Statement& stmt) { return Error{kDbStep, stmt.error()}; }

Result<int64_t> pragma(Database& db, const char* name) {
  auto stmt = db.prepare(std::string("PRAGMA ") + name);
  if (!stmt.step()) return step_error(stmt);
  return stmt.int_at(0);
}

// Pages in use, in bytes: what the file would shrink to; freed pages are reused first.
Result<uint64_t> used_bytes(Database& db) {
  auto pages = pragma(db, "page_count");
  auto free_pages = pragma(db, "freelist_count");
  auto page_size = pragma(db, "page_size");
  if (!pages) return pages.error();
  if (!free_pages) return free_pages.error();
  if (!page_size) return page_size.error();
  return static_cast<uint64_t>((*pages - *free_pages) * *page_size);
}

struct Candidate {
  JobKey key;
  uint64_t stored_bytes = 0;
};

Result<std::vector<Candidate>> select_keys(Database& db, const std::string& sql, std::optional<TimeUs> before,
                                           int limit) {
  auto stmt = db.prepare(sql);
  int index = 1;
  if (before) stmt.bind(index++, *before);
  stmt.bind(index, static_cast<int64_t>(limit));
  std::vector<Candidate> keys;
  while (stmt.step())
    keys.push_back({{stmt.text_at(0), stmt.text_at(1), stmt.int_at(2)}, static_cast<uint64_t>(stmt.int_at(3))});
  if (!stmt.error().empty()) return step_error(stmt);
  return keys;
}

// The oldest finished runs with raw evidence (finished before `before` when given).
Result<std::vector<Candidate>> evidence_candidates(Database& db, std::optional<TimeUs> before, int limit) {
  std::string sql = std::string("SELECT e.cluster, e.job_id, e.run, e.stored_bytes FROM evidence e JOIN jobs j ") +
                    "ON j.cluster = e.cluster AND j.job_id = e.job_id AND j.run = e.run WHERE " + kFinishedRun +
                    (before ? std::string(" AND ") + kFinished + " < ?" : "") + " ORDER BY " + kFinished +
                    ", e.cluster, e.job_id, e.run LIMIT ?";
  return select_keys(db, sql, before, limit);
}

// The oldest finished runs that finished before `before`.
Result<std::vector<Candidate>> run_candidates(Database& db, TimeUs before, int limit) {
  std::string sql = std::string("SELECT j.cluster, j.job_id, j.run, 0 FROM jobs j WHERE ") + kFinishedRun + " AND " +
                    kFinished + " < ? ORDER BY " + kFinished + ", j.cluster, j.job_id, j.run LIMIT ?";
  return select_keys(db, sql, before, limit);
}

// Runs `sql` (binding a key's cluster, job_id, run, then `extra` when given) for each key.
Status for_each_key(Database& db, const std::string& sql, const std::vector<Candidate>& keys,
                    std::optional<int64_t> extra = std::nullopt) {
  auto stmt = db.prepare(sql);
  if (!stmt.ok()) return step_error(stmt);
  for (const Candidate& c : keys) {
    const int first = extra ? 2 : 1;
    if (extra) stmt.bind(1, *extra);
    stmt.bind(first, c.key.cluster).bind(first + 1, c.key.job_id).bind(first + 2, c.key.run);
    if (auto s = stmt.run(); !s) return s;
    stmt.reset();
  }
  return ok_status();
}

Status drop_evidence(JobStore& store, const std::vector<Candidate>& keys, TimeUs now) {
  return store.with_db([&](Database& db) -> Status {
    Transaction tx(db);
    if (auto s = tx.began(); !s) return s;
    if (auto s = for_each_key(db, "DELETE FROM evidence WHERE cluster = ? AND job_id = ? AND run = ?", keys); !s)
      return s;
    if (auto s = for_each_key(db, "UPDATE jobs SET evidence_pruned_us = ? WHERE cluster = ? AND job_id = ? AND run = ?",
                              keys, now);
        !s)
      return s;
    return tx.commit();
  });
}

Status drop_runs(JobStore& store, const std::vector<Candidate>& keys) {
  return store.with_db([&](Database& db) -> Status {
    Transaction tx(db);
    if (auto s = tx.began(); !s) return s;
    for (const char* table : {"events", "coverage", "history", "evidence", "verdict_versions", "jobs"}) {
      if (auto s = for_each_key(
              db, std::string("DELETE FROM ") + table + " WHERE cluster = ? AND job_id = ? AND run = ?", keys);
          !s)
        return s;
    }
    return tx.commit();
  });
}

Result<uint64_t> current_bytes(JobStore& store) {
  return store.with_db([](Database& db) { return used_bytes(db); });
}

// The pass just made, as the last one (archive_prunes).
Status record_prune(JobStore& store, const PruneReport& report, TimeUs now) {
  return store.with_db([&](Database& db) -> Status {
    auto stmt = db.prepare(
        "INSERT OR REPLACE INTO archive_prunes (id, at_us, runs_pruned, evidence_pruned, bytes_after) "
        "VALUES (1, ?, ?, ?, ?)");
    stmt.bind(1, now);
    stmt.bind(2, static_cast<int64_t>(report.runs_pruned));
    stmt.bind(3, static_cast<int64_t>(report.evidence_pruned));
    stmt.bind(4, static_cast<int64_t>(report.bytes_after));
    return stmt.run();
  });
}

}  // namespace

RetentionPolicy retention_policy(const common::ArchiveConfig& archive, const common::HeadConfig& head, TimeUs now) {
  constexpr TimeUs kDay = 86400LL * 1000000;
  const auto days_ago = [&](int days) -> std::optional<TimeUs> {
    if (days <= 0) return std::nullopt;
    return now - static_cast<TimeUs>(days) * kDay;
  };
  RetentionPolicy policy;
  policy.evidence_before = days_ago(archive.evidence_retention_days);
  policy.runs_before = days_ago(archive.retention_days);
  policy.max_bytes = static_cast<uint64_t>(archive.max_bytes);
  policy.keep_runs_after = now - static_cast<TimeUs>(head.sweep_lookback_s + head.scope_max_wait_s) * 1000000;
  return policy;
}

Result<PruneReport> prune_archive(JobStore& store, const RetentionPolicy& policy, TimeUs now) {
  PruneReport report;
  auto before = current_bytes(store);
  if (!before) return before.error();
  report.bytes_before = *before;
  const int batch = std::max(policy.batch, 1);

  // By age: evidence, then runs (never one finished after keep_runs_after).
  while (policy.evidence_before) {
    auto keys = store.with_db([&](Database& db) { return evidence_candidates(db, policy.evidence_before, batch); });
    if (!keys) return keys.error();
    if (keys->empty()) break;
    if (auto s = drop_evidence(store, *keys, now); !s) return s.error();
    report.evidence_pruned += keys->size();
  }
  if (policy.runs_before) {
    const TimeUs cutoff = std::min(*policy.runs_before, policy.keep_runs_after);
    while (true) {
      auto keys = store.with_db([&](Database& db) { return run_candidates(db, cutoff, batch); });
      if (!keys) return keys.error();
      if (keys->empty()) break;
      if (auto s = drop_runs(store, *keys); !s) return s.error();
      report.runs_pruned += keys->size();
    }
    // The remediation log ages with the runs whose verdicts it acted on.
    auto remediation = store.with_db([&](Database& db) -> Result<int64_t> {
      auto count = db.prepare("SELECT count(*) FROM remediation WHERE time_us < ?");
      count.bind(1, cutoff);
      if (!count.step()) return step_error(count);
      const int64_t n = count.int_at(0);
      auto stmt = db.prepare("DELETE FROM remediation WHERE time_us < ?");
      stmt.bind(1, cutoff);
      if (auto s = stmt.run(); !s) return s.error();
      return n;
    });
    if (!remediation) return remediation.error();
    report.remediation_pruned = static_cast<uint64_t>(*remediation);
  }

  // By size: the oldest evidence (just enough of it), then the oldest runs.
  while (policy.max_bytes > 0) {
    auto used = current_bytes(store);
    if (!used) return used.error();
    if (*used <= policy.max_bytes) break;
    const uint64_t excess = *used - policy.max_bytes;
    auto keys = store.with_db([&](Database& db) { return evidence_candidates(db, std::nullopt, batch); });
    if (!keys) return keys.error();
    if (!keys->empty()) {
      uint64_t covered = 0;
      size_t take = 0;
      while (take < keys->size() && covered < excess) covered += (*keys)[take++].stored_bytes;
      keys->resize(take);
      if (auto s = drop_evidence(store, *keys, now); !s) return s.error();
      report.evidence_pruned += keys->size();
      continue;
    }
    auto runs = store.with_db([&](Database& db) { return run_candidates(db, policy.keep_runs_after, batch); });
    if (!runs) return runs.error();
    if (runs->empty()) {
      report.over_cap = true;
      break;
    }
    if (auto s = drop_runs(store, *runs); !s) return s.error();
    report.runs_pruned += runs->size();
  }

  auto after = current_bytes(store);
  if (!after) return after.error();
  report.bytes_after = *after;
  if (auto s = record_prune(store, report, now); !s) return s.error();
  return report;
}

Result<ArchiveStats> archive_stats(JobStore& store) {
  return store.with_read_db([](Database& db) -> Result<ArchiveStats> {
    ArchiveStats stats;
    auto pages = pragma(db, "page_count");
    auto page_size = pragma(db, "page_size");
    auto used = used_bytes(db);
    if (!pages) return pages.error();
    if (!page_size) return page_size.error();
    if (!used) return used.error();
    stats.file_bytes = static_cast<uint64_t>(*pages * *page_size);
    stats.used_bytes = *used;
    auto version = pragma(db, "user_version");
    if (!version) return version.error();
    stats.schema_version = *version;
    auto last_prune = db.prepare("SELECT at_us FROM archive_prunes WHERE id = 1");
    if (last_prune.step()) stats.last_prune = last_prune.int_at(0);

    auto runs = db.prepare(
        "SELECT count(*), sum(status != 'done' AND failed_us IS NULL), sum(failed_us IS NOT NULL), "
        "sum(evidence_pruned_us IS NOT NULL), min(received_us), max(received_us) FROM jobs");
    if (!runs.step()) return step_error(runs);
    stats.runs = runs.int_at(0);
    stats.queued = runs.int_at(1);
    stats.dead_lettered = runs.int_at(2);
    stats.evidence_pruned = runs.int_at(3);
    if (!runs.is_null(4)) stats.oldest_run = runs.int_at(4);
    if (!runs.is_null(5)) stats.newest_run = runs.int_at(5);

    auto evidence = db.prepare(
        "SELECT count(*), sum(e.stored_bytes), sum(e.raw_bytes), min(j.received_us) FROM evidence e JOIN jobs j "
        "ON j.cluster = e.cluster AND j.job_id = e.job_id AND j.run = e.run");
    if (!evidence.step()) return step_error(evidence);
    stats.evidence_runs = evidence.int_at(0);
    stats.evidence_stored_bytes = static_cast<uint64_t>(evidence.int_at(1));
    stats.evidence_raw_bytes = static_cast<uint64_t>(evidence.int_at(2));
    if (!evidence.is_null(3)) stats.oldest_evidence = evidence.int_at(3);
    return stats;
  });
}

}  // namespace attrib::store
