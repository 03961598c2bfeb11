#include "attributiond/store/schema_migrations.h"

#include <vector>

#include "attributiond/store/store_rows.h"
#include "common/auth.h"

namespace attrib::store::detail {
namespace {

// Append-only: never edit a shipped migration, add a new one.
const std::vector<std::string> kMigrations = {
    R"sql(
CREATE TABLE jobs (
  cluster         TEXT NOT NULL,
  job_id          TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('queued', 'archived', 'done')),
  request         BLOB NOT NULL,            -- attrib.v1.JobEnded as received
  received_us     INTEGER NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_us INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT NOT NULL DEFAULT '',
  verdict_json    TEXT,                     -- verdict v1, set once when archived
  domain          TEXT,
  archived_us     INTEGER,
  done_us         INTEGER,
  PRIMARY KEY (cluster, job_id)
);
CREATE INDEX jobs_due ON jobs (status, next_attempt_us, received_us);
CREATE TABLE events (
  cluster   TEXT NOT NULL,
  job_id    TEXT NOT NULL,
  event_id  TEXT NOT NULL,
  kind      TEXT NOT NULL,
  rule      TEXT NOT NULL,
  node      TEXT NOT NULL,
  source    TEXT NOT NULL,
  time_us   INTEGER,
  seq       INTEGER NOT NULL,
  trusted   INTEGER NOT NULL,
  line      TEXT NOT NULL,
  fields    TEXT NOT NULL,
  count     INTEGER NOT NULL,
  PRIMARY KEY (cluster, job_id, event_id),
  FOREIGN KEY (cluster, job_id) REFERENCES jobs (cluster, job_id)
);
CREATE TABLE coverage (
  cluster  TEXT NOT NULL,
  job_id   TEXT NOT NULL,
  node     TEXT NOT NULL,
  source   TEXT NOT NULL,
  status   TEXT NOT NULL,
  lines    INTEGER NOT NULL,
  events   INTEGER NOT NULL,
  detail   TEXT NOT NULL,
  PRIMARY KEY (cluster, job_id, node, source),
  FOREIGN KEY (cluster, job_id) REFERENCES jobs (cluster, job_id)
);
)sql",
    // 2: fleet history (fleet_queries.h): one row per archived verdict, naming the node
    // and GPU its root cause blames ('' when none), and every remediation decision.
    R"sql(
CREATE TABLE history (
  cluster         TEXT NOT NULL,
  job_id          TEXT NOT NULL,
  time_us         INTEGER NOT NULL,        -- job end (hook time, archive time when unknown)
  user_name       TEXT NOT NULL,
  uid             INTEGER NOT NULL,
  state           TEXT NOT NULL,
  domain          TEXT NOT NULL,
  rule            TEXT NOT NULL,           -- root cause rule; '' without a root cause
  action          TEXT NOT NULL,
  node            TEXT NOT NULL,           -- root cause node; '' without a root cause
  gpu             TEXT NOT NULL,           -- PCI address of the blamed GPU; '' when none
  affected_nodes  TEXT NOT NULL,           -- comma-separated
  trusted         INTEGER NOT NULL,        -- the root cause event is trusted
  PRIMARY KEY (cluster, job_id),
  FOREIGN KEY (cluster, job_id) REFERENCES jobs (cluster, job_id)
);
CREATE INDEX history_node ON history (node, time_us);
CREATE INDEX history_time ON history (time_us);
CREATE TABLE remediation (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  time_us  INTEGER NOT NULL,
  cluster  TEXT NOT NULL,
  node     TEXT NOT NULL,
  job_id   TEXT NOT NULL,
  rule     TEXT NOT NULL,
  action   TEXT NOT NULL,   -- drained | would_drain | skipped_* | failed
  reason   TEXT NOT NULL,   -- the Slurm reason text
  detail   TEXT NOT NULL
);
CREATE INDEX remediation_node ON remediation (node, time_us);
CREATE INDEX remediation_time ON remediation (time_us, action);
)sql",
    // 3: failures are counted apart from accounting polls and back off exponentially; a job
    // that keeps failing (or whose stored request cannot be decoded) is dead-lettered
    // (failed_us set): kept with its reason for attrib-show --failed, no longer retried.
    R"sql(
ALTER TABLE jobs ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN failed_us INTEGER;
)sql",
    // 4: listings (ListVerdicts, the dashboard) filter by owner in SQL, over an index, and
    // page by (time, cluster, job) keys (page.h). owner_uid: who besides admins may read
    // the row, the job's uid or its user name resolved when the hook sent no uid; NULL
    // when unknown (admins only). Written with the verdict; rows archived before are
    // filled at open (backfill_owners). history_failures serves the default listing
    // (every domain but NONE), history_domain one domain; both partial jobs indexes hold
    // only archived jobs, so queueing a job writes neither.
    R"sql(
ALTER TABLE history ADD COLUMN owner_uid INTEGER;
ALTER TABLE jobs ADD COLUMN owner_uid INTEGER;
CREATE INDEX history_owner ON history (owner_uid, time_us, cluster, job_id, domain);
CREATE INDEX history_failures ON history (time_us, cluster, job_id) WHERE domain != 'NONE';
CREATE INDEX history_domain ON history (domain, time_us, cluster, job_id);
CREATE INDEX jobs_archived ON jobs (received_us, cluster, job_id) WHERE verdict_json IS NOT NULL;
CREATE INDEX jobs_owner ON jobs (owner_uid, received_us, cluster, job_id) WHERE verdict_json IS NOT NULL;
)sql",
    // 5: one row per job attempt (docs/admin-guide.md, "Attempts"). A job id reported
    // again after its first report was attributed (a requeued job's next attempt, a reused
    // id) is a new run of the id: run is part of every key. attempt_submit_us is the
    // submit time of the accounting row the run was judged on (slurm::attempt_row), so a
    // second report of the same attempt (another hook, a re-sent spool) is recognised as
    // one. hooks lists the hook kinds whose reports a queued run holds (",1,2,"; since then
    // with each report's hook time, JobStore::enqueue): a second
    // report of a kind it already has, made at another time, is a later attempt's.
    // SQLite cannot change a primary key: the tables are rebuilt, rows copied as run 0.
    R"sql(
ALTER TABLE history RENAME TO history_v4;
ALTER TABLE coverage RENAME TO coverage_v4;
ALTER TABLE events RENAME TO events_v4;
ALTER TABLE jobs RENAME TO jobs_v4;
CREATE TABLE jobs (
  cluster           TEXT NOT NULL,
  job_id            TEXT NOT NULL,
  run               INTEGER NOT NULL DEFAULT 0,
  status            TEXT NOT NULL CHECK (status IN ('queued', 'archived', 'done')),
  request           BLOB NOT NULL,
  received_us       INTEGER NOT NULL,
  attempts          INTEGER NOT NULL DEFAULT 0,
  next_attempt_us   INTEGER NOT NULL DEFAULT 0,
  last_error        TEXT NOT NULL DEFAULT '',
  verdict_json      TEXT,
  domain            TEXT,
  archived_us       INTEGER,
  done_us           INTEGER,
  failures          INTEGER NOT NULL DEFAULT 0,
  failed_us         INTEGER,
  owner_uid         INTEGER,
  attempt_submit_us INTEGER,
  hooks             TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (cluster, job_id, run)
);
INSERT INTO jobs (cluster, job_id, run, status, request, received_us, attempts, next_attempt_us, last_error,
                  verdict_json, domain, archived_us, done_us, failures, failed_us, owner_uid)
  SELECT cluster, job_id, 0, status, request, received_us, attempts, next_attempt_us, last_error, verdict_json,
         domain, archived_us, done_us, failures, failed_us, owner_uid FROM jobs_v4;
CREATE TABLE events (
  cluster   TEXT NOT NULL,
  job_id    TEXT NOT NULL,
  run       INTEGER NOT NULL DEFAULT 0,
  event_id  TEXT NOT NULL,
  kind      TEXT NOT NULL,
  rule      TEXT NOT NULL,
  node      TEXT NOT NULL,
  source    TEXT NOT NULL,
  time_us   INTEGER,
  seq       INTEGER NOT NULL,
  trusted   INTEGER NOT NULL,
  line      TEXT NOT NULL,
  fields    TEXT NOT NULL,
  count     INTEGER NOT NULL,
  PRIMARY KEY (cluster, job_id, run, event_id),
  FOREIGN KEY (cluster, job_id, run) REFERENCES jobs (cluster, job_id, run)
);
INSERT INTO events SELECT cluster, job_id, 0, event_id, kind, rule, node, source, time_us, seq, trusted, line,
                          fields, count FROM events_v4;
CREATE TABLE coverage (
  cluster  TEXT NOT NULL,
  job_id   TEXT NOT NULL,
  run      INTEGER NOT NULL DEFAULT 0,
  node     TEXT NOT NULL,
  source   TEXT NOT NULL,
  status   TEXT NOT NULL,
  lines    INTEGER NOT NULL,
  events   INTEGER NOT NULL,
  detail   TEXT NOT NULL,
  PRIMARY KEY (cluster, job_id, run, node, source),
  FOREIGN KEY (cluster, job_id, run) REFERENCES jobs (cluster, job_id, run)
);
INSERT INTO coverage SELECT cluster, job_id, 0, node, source, status, lines, events, detail FROM coverage_v4;
CREATE TABLE history (
  cluster         TEXT NOT NULL,
  job_id          TEXT NOT NULL,
  run             INTEGER NOT NULL DEFAULT 0,
  time_us         INTEGER NOT NULL,
  user_name       TEXT NOT NULL,
  uid             INTEGER NOT NULL,
  state           TEXT NOT NULL,
  domain          TEXT NOT NULL,
  rule            TEXT NOT NULL,
  action          TEXT NOT NULL,
  node            TEXT NOT NULL,
  gpu             TEXT NOT NULL,
  affected_nodes  TEXT NOT NULL,
  trusted         INTEGER NOT NULL,
  owner_uid       INTEGER,
  PRIMARY KEY (cluster, job_id, run),
  FOREIGN KEY (cluster, job_id, run) REFERENCES jobs (cluster, job_id, run)
);
INSERT INTO history SELECT cluster, job_id, 0, time_us, user_name, uid, state, domain, rule, action, node, gpu,
                           affected_nodes, trusted, owner_uid FROM history_v4;
DROP TABLE history_v4;
DROP TABLE coverage_v4;
DROP TABLE events_v4;
DROP TABLE jobs_v4;
CREATE INDEX jobs_due ON jobs (status, next_attempt_us, received_us);
CREATE INDEX jobs_archived ON jobs (received_us, cluster, job_id) WHERE verdict_json IS NOT NULL;
CREATE INDEX jobs_owner ON jobs (owner_uid, received_us, cluster, job_id) WHERE verdict_json IS NOT NULL;
CREATE INDEX history_node ON history (node, time_us);
CREATE INDEX history_time ON history (time_us);
CREATE INDEX history_owner ON history (owner_uid, time_us, cluster, job_id, domain);
CREATE INDEX history_failures ON history (time_us, cluster, job_id) WHERE domain != 'NONE';
CREATE INDEX history_domain ON history (domain, time_us, cluster, job_id);
)sql",
    // 6: when slurmdbd was last found unreachable for this run, and when it first answered
    // after that: the wait for a final accounting record counts from its return, not from
    // the hook's report (an outage must not use up the wait and leave the job judged on
    // the row slurmctld left before the job ended).
    R"sql(
ALTER TABLE jobs ADD COLUMN accounting_down_us INTEGER;
ALTER TABLE jobs ADD COLUMN accounting_back_us INTEGER;
)sql",
    // 7: the raw evidence of each archived run (common/evidence_archive.h: bundle v1 files,
    // packed and zstd-compressed), so that a job can be exported as collected and judged
    // again. complete: it replays to the archived verdict (nothing over the cap, no node
    // judged from its agent's events alone).
    R"sql(
CREATE TABLE evidence (
  cluster       TEXT NOT NULL,
  job_id        TEXT NOT NULL,
  run           INTEGER NOT NULL,
  raw_bytes     INTEGER NOT NULL,
  stored_bytes  INTEGER NOT NULL,
  lines         INTEGER NOT NULL,
  dropped_lines INTEGER NOT NULL,
  complete      INTEGER NOT NULL,
  note          TEXT NOT NULL,
  blob          BLOB NOT NULL,
  PRIMARY KEY (cluster, job_id, run),
  FOREIGN KEY (cluster, job_id, run) REFERENCES jobs (cluster, job_id, run) ON DELETE CASCADE
);
)sql",
    // 8: when retention dropped a run's raw evidence (store/retention.h): such a run is
    // reported, not judged again, by attrib-reattribute. jobs_finished serves pruning's
    // oldest-first scans.
    R"sql(
ALTER TABLE jobs ADD COLUMN evidence_pruned_us INTEGER;
CREATE INDEX jobs_finished ON jobs (COALESCE(done_us, failed_us, archived_us, received_us));
)sql",
    // 9: re-attribution (attrib-reattribute --apply) keeps every verdict a run has had:
    // version 0 is the one the run was first judged with, each later one a re-judging of
    // its raw evidence under another pack, with that pack's hash. revised_us: when the run
    // was last revised (its comment is then rewritten, and nothing acts on the verdict).
    R"sql(
CREATE TABLE verdict_versions (
  cluster         TEXT NOT NULL,
  job_id          TEXT NOT NULL,
  run             INTEGER NOT NULL,
  version         INTEGER NOT NULL,
  time_us         INTEGER NOT NULL,
  ruleset_version TEXT NOT NULL,
  ruleset_hash    TEXT NOT NULL,
  domain          TEXT NOT NULL,
  rule            TEXT NOT NULL,
  confidence      TEXT NOT NULL,
  why             TEXT NOT NULL,
  verdict_json    TEXT NOT NULL,
  PRIMARY KEY (cluster, job_id, run, version),
  FOREIGN KEY (cluster, job_id, run) REFERENCES jobs (cluster, job_id, run) ON DELETE CASCADE
);
ALTER TABLE jobs ADD COLUMN revised_us INTEGER;
)sql",
    // 10: the templates of what no rule explains, as `attrib-rules mine --save` last found
    // them (replaced whole at each save), for the dashboard's "Unexplained" panel.
    R"sql(
CREATE TABLE mined_templates (
  rank        INTEGER PRIMARY KEY,
  mined_us    INTEGER NOT NULL,
  template    TEXT NOT NULL,
  attempts    INTEGER NOT NULL,
  nodes       INTEGER NOT NULL,
  lines       INTEGER NOT NULL,
  before_end  INTEGER NOT NULL,
  successful  INTEGER NOT NULL,
  attempt_ids TEXT NOT NULL,
  example     TEXT NOT NULL,
  skeleton    TEXT NOT NULL
);
)sql",
    // 11: who ran each attempt. Slurm's, reported by the hooks and the sweep; another
    // scheduler's, judged through the attribution API (attributiond/api, docs/api.md).
    R"sql(
ALTER TABLE jobs ADD COLUMN scheduler TEXT NOT NULL DEFAULT 'slurm';
)sql",
    // 12: the queue's own order as an index (next_due's WHERE and ORDER BY; next_due names
    // it, since without ANALYZE statistics SQLite prefers jobs_due and sorts): a pick walks
    // it to the first job no worker holds. Before, every pick sorted all due jobs, which a
    // burst of ten thousand queued job ends made milliseconds a pick (docs/benchmarks.md).
    R"sql(
CREATE INDEX jobs_due_order ON jobs (next_attempt_us, received_us, job_id, run)
  WHERE status IN ('queued', 'archived') AND failed_us IS NULL;
)sql",
    // 13: the last retention pass (one row, replaced by each): when, and what it dropped,
    // for attrib-doctor and GetArchiveStats (a head whose pruning stopped fills its disk).
    R"sql(
CREATE TABLE archive_prunes (
  id              INTEGER PRIMARY KEY CHECK (id = 1),
  at_us           INTEGER NOT NULL,
  runs_pruned     INTEGER NOT NULL,
  evidence_pruned INTEGER NOT NULL,
  bytes_after     INTEGER NOT NULL
);
)sql",
};

// Verdicts archived before the history table existed get their rows once, at open.
Status backfill_history(store::Database& db) {
  store::Transaction tx(db);
  if (auto s = tx.began(); !s) return s;
  auto missing = db.prepare(
      "SELECT j.cluster, j.job_id, j.run, j.request, j.verdict_json, COALESCE(j.archived_us, j.received_us) "
      "FROM jobs j LEFT JOIN history h ON h.cluster = j.cluster AND h.job_id = j.job_id AND h.run = j.run "
      "WHERE j.verdict_json IS NOT NULL AND h.job_id IS NULL");
  int64_t added = 0;
  while (missing.step()) {
    v1::JobEnded request;
    request.ParseFromString(missing.text_at(3));  // a corrupt request only loses user and time
    auto json = nlohmann::json::parse(missing.text_at(4), nullptr, false);
    if (json.is_discarded()) continue;
    auto verdict = verdict_from_json(json);
    if (!verdict) continue;  // unreadable verdicts stay out of the history, not out of the archive
    const JobKey key{missing.text_at(0), missing.text_at(1), missing.int_at(2)};
    if (auto s = insert_history(db, key, *verdict, request, missing.int_at(5)); !s) return s;
    ++added;
  }
  if (!missing.error().empty()) return db_error(missing);
  if (added == 0) return ok_status();  // the transaction rolls back: nothing was written
  return tx.commit();
}

// Owners of the rows archived before owner_uid existed (migration 4): the uid the history
// row holds, else its user name resolved once per name; the archived job takes its history
// row's. A row whose owner stays unknown is for admins only, as it was before. Once the
// rows are filled this finds nothing (owner_uid IS NULL is an index range).
Status backfill_owners(store::Database& db) {
  store::Transaction tx(db);
  if (auto s = tx.began(); !s) return s;
  if (auto s = db.exec("UPDATE history SET owner_uid = uid WHERE owner_uid IS NULL AND uid != 0"); !s) return s;
  std::vector<std::string> names;
  {
    auto unowned = db.prepare("SELECT DISTINCT user_name FROM history WHERE owner_uid IS NULL AND user_name != ''");
    while (unowned.step()) names.push_back(unowned.text_at(0));
    if (!unowned.error().empty()) return db_error(unowned);
  }
  auto named = db.prepare("UPDATE history SET owner_uid = ? WHERE owner_uid IS NULL AND uid = 0 AND user_name = ?");
  for (const std::string& name : names) {
    auto owner = common::job_owner_uid(0, name);
    if (!owner) continue;
    named.reset().bind(1, static_cast<int64_t>(*owner)).bind(2, name);
    if (auto s = named.run(); !s) return s;
  }
  if (auto s =
          db.exec("UPDATE jobs SET owner_uid = (SELECT h.owner_uid FROM history h WHERE h.cluster = jobs.cluster AND "
                  "h.job_id = jobs.job_id AND h.run = jobs.run) WHERE owner_uid IS NULL AND verdict_json IS NOT NULL");
      !s)
    return s;
  return tx.commit();
}

}  // namespace

Status migrate_schema(Database& db) {
  if (auto s = db.migrate(kMigrations); !s) return s;
  if (auto s = backfill_history(db); !s) return Error{kDbMigrate, "history backfill: " + s.error().message};
  if (auto s = backfill_owners(db); !s) return Error{kDbMigrate, "owner backfill: " + s.error().message};
  return ok_status();
}

Status check_schema_current(const std::string& path) {
  auto reader = store::Database::open_read_only(path);
  if (!reader) return reader.error();
  auto version = reader->schema_version();
  if (!version) return version.error();
  const auto expected = static_cast<int64_t>(kMigrations.size());
  if (*version == expected) return ok_status();
  return Error{kDbSchemaNotCurrent,
               path + " has schema version " + std::to_string(*version) + ", this tool reads version " +
                   std::to_string(expected) +
                   (*version < expected ? ": start the attributiond of this release on it first (it migrates "
                                          "the archive; a tool never does)"
                                        : ": use the tools of the attributiond that writes it")};
}

}  // namespace attrib::store::detail
