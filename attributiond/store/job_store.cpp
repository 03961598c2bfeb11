#include "attributiond/store/job_store.h"

#include <algorithm>
#include <cctype>

#include "common/auth.h"
#include "core/failpoint.h"
#include "core/json_text.h"

namespace attrib::store {
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

Error db_error(const store::Statement& stmt) { return Error{kDbStep, stmt.error()}; }

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

// The GPU a verdict blames on its root cause node: the only affected GPU there, or the
// one the root cause event names (its raw "0000:3b:00" prefixes the normalised form).
std::string blamed_gpu(const Verdict& verdict, const std::string& node) {
  std::vector<std::string> on_node;
  for (const AffectedGpu& gpu : verdict.affected_gpus)
    if (gpu.node == node) on_node.push_back(gpu.pci);
  if (on_node.size() == 1) return on_node.front();
  const auto& fields = verdict.root_cause->event.fields;
  if (auto pci = fields.find("pci"); pci != fields.end() && pci->is_string() && !pci->get<std::string>().empty()) {
    std::string raw = pci->get<std::string>();
    for (char& c : raw) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const std::string& gpu : on_node)
      if (gpu.rfind(raw, 0) == 0 || gpu.find(raw) != std::string::npos) return gpu;
  }
  return "";
}

// Who besides admins may read a job's rows: its uid, or its user name resolved (an older
// hook sent only the name); none when neither is known.
void bind_owner(store::Statement& stmt, int index, const v1::JobEnded& request) {
  if (auto owner = common::job_owner_uid(request.uid(), request.user()))
    stmt.bind(index, static_cast<int64_t>(*owner));
  else
    stmt.bind_null(index);
}

// One history row per archived verdict (fleet_queries.h). Only a root cause blames a
// node: AMBIGUOUS, UNATTRIBUTED and NONE rows keep node ''.
Status insert_history(store::Database& db, const JobKey& key, const Verdict& verdict, const v1::JobEnded& request,
                      TimeUs archived) {
  TimeUs time = request.end_time_us() > 0    ? request.end_time_us()
                : request.hook_time_us() > 0 ? request.hook_time_us()
                                             : archived;
  std::string node, gpu, rule;
  bool trusted = false;
  if (verdict.root_cause) {
    node = verdict.root_cause->event.node;
    gpu = blamed_gpu(verdict, node);
    rule = verdict.root_cause->rule;
    trusted = verdict.root_cause->event.trusted;
  }
  std::string affected;
  for (const std::string& n : verdict.affected_nodes) affected += (affected.empty() ? "" : ",") + n;
  auto ins = db.prepare(
      "INSERT OR IGNORE INTO history (cluster, job_id, run, time_us, user_name, uid, state, domain, rule, action, "
      "node, gpu, affected_nodes, trusted, owner_uid) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, key.cluster)
      .bind(2, key.job_id)
      .bind(3, key.run)
      .bind(4, time)
      .bind(5, request.user())
      .bind(6, static_cast<int64_t>(request.uid()))
      .bind(7, verdict.terminal_state)
      .bind(8, verdict.domain)
      .bind(9, rule)
      .bind(10, verdict.recommended_action)
      .bind(11, node)
      .bind(12, gpu)
      .bind(13, affected)
      .bind(14, int64_t{trusted});
  bind_owner(ins, 15, request);
  return ins.run();
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

Result<std::unique_ptr<JobStore>> JobStore::open(const std::string& path) {
  auto db = store::Database::open(path);
  if (!db) return db.error();
  if (auto s = db->migrate(kMigrations); !s) return s.error();
  if (auto s = backfill_history(*db); !s) return Error{kDbMigrate, "history backfill: " + s.error().message};
  if (auto s = backfill_owners(*db); !s) return Error{kDbMigrate, "owner backfill: " + s.error().message};
  // Opened after the writer made the file WAL and current: readers never create or migrate.
  auto read_db = store::Database::open_read_only(path);
  if (!read_db) return read_db.error();
  std::unique_ptr<JobStore> store(new JobStore(std::move(*db), std::move(*read_db)));
  auto checkpointer = store::WalCheckpointer::start(store->db_, path);
  if (!checkpointer) return checkpointer.error();
  store->checkpointer_ = std::move(*checkpointer);
  return store;
}

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
  update.bind(1, json_text(to_json(verdict))).bind(2, verdict.domain).bind(3, now);
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
  return ExternalArchived{key, true, json_text(to_json(verdict))};
}

namespace {

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
  const std::string new_json = json_text(to_json(verdict));
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

Result<int64_t> JobStore::pending_count() {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare("SELECT count(*) FROM jobs WHERE status != 'done' AND failed_us IS NULL");
  if (!stmt.step()) return db_error(stmt);
  return stmt.int_at(0);
}

}  // namespace attrib::store
