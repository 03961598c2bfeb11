// The archive's fleet tables (docs/fleet.md): `history`, one row per archived verdict and
// the node and GPU its root cause blames (written with the verdict, JobStore::archive),
// and `remediation`, one row per drain decision. The rows and the named queries over
// them; what the rows mean for a node's reputation is attributiond/fleet's policy.
//
// Every query takes a Database& so a reader (attrib-show via the daemon's read-only
// connection, JobStore::with_read_db; the dashboard with its own) can use its own
// connection to the same WAL file. Listings are pages (page.h), filtered in SQL.
// Times are microseconds since the epoch (UTC).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attributiond/store/job_key.h"
#include "attributiond/store/page.h"
#include "attributiond/store/sqlite.h"
#include "core/result.h"
#include "core/types.h"

namespace attrib::store {

// One verdict that blamed a node (its root cause names the node), oldest first in lists.
struct BlameRow {
  std::string cluster, job_id;
  std::string node;
  std::string gpu;     // PCI address dddd:bb:dd.f of the blamed GPU; "" when the verdict names no GPU
  std::string domain;  // the verdict's domain, e.g. GPU_HARDWARE
  std::string rule;    // the root cause's correlation rule
  std::string state;   // the job's terminal state, e.g. FAILED
  std::string user;
  uint32_t uid = 0;
  TimeUs time_us = 0;    // when the job ended (when it was archived if the end is unknown)
  bool trusted = false;  // the root cause rests on trusted (root-written) evidence
  std::string action;    // the verdict's recommended_action, e.g. DRAIN_NODE
};

// One archived verdict, for listings (attrib-show --since, the dashboard).
struct VerdictRow {
  std::string cluster, job_id;
  std::string user;
  uint32_t uid = 0;
  std::string state;
  std::string domain;
  std::string rule;    // root cause rule; "" for AMBIGUOUS, UNATTRIBUTED, NONE
  std::string action;  // recommended_action
  std::string node;    // root cause node; "" when the verdict blames none
  std::string gpu;
  std::string affected_nodes;  // the verdict's affected_nodes, comma-separated
  TimeUs time_us = 0;
  bool trusted = false;
};

struct DomainCount {
  std::string domain;
  int64_t jobs = 0;
};

// One remediation decision (attributiond/fleet/remediation.h), kept forever in the `remediation` table.
struct RemediationRecord {
  int64_t id = 0;
  TimeUs time_us = 0;
  std::string cluster, node, job_id, rule;
  std::string action;  // drained | would_drain | skipped_already_drained | skipped_rate_limited |
                       // skipped_systemic | failed
  std::string reason;  // the Slurm reason text set (or that would have been set)
  std::string detail;  // why: the trigger (verdict / repeat offender), the skip or the error
};

// The newest `limit` verdicts that blamed node since since_us (cluster "" : every
// cluster), listed oldest first.
Result<std::vector<BlameRow>> node_history(Database& db, const std::string& node, TimeUs since_us,
                                           const std::string& cluster, size_t limit);
// Other jobs' failures on one node that found no trusted cause (rule
// host.unexplained_failures_repeat): distinct jobs of `cluster` other than `except_job`
// that ended in [since_us, until_us), failed (any domain but NONE), were UNATTRIBUTED,
// AMBIGUOUS or rest on an untrusted root, and list `node` among their affected nodes;
// and how many distinct users among them other than `uid`.
struct UnexplainedFailures {
  int64_t jobs = 0;
  int64_t other_users = 0;
};
Result<UnexplainedFailures> unexplained_failures_on(Database& db, const std::string& cluster,
                                                    const std::string& node, TimeUs since_us, TimeUs until_us,
                                                    const std::string& except_job, std::optional<uint32_t> uid);
// The row of one job (cluster, job_id) when its verdict blamed a node; none otherwise.
Result<std::optional<BlameRow>> job_blame(Database& db, const JobKey& key);
// The same for every node, oldest first.
Result<std::vector<BlameRow>> blame_since(Database& db, TimeUs since_us);

// One page of archived verdicts (ListVerdicts), ordered by (time, cluster, job).
struct VerdictQuery {
  TimeUs since_us = 0;
  std::string domain;             // "" : every domain except NONE (successful jobs); else one (NONE too)
  std::string cluster;            // "" : every cluster
  std::optional<uint32_t> owner;  // only jobs this uid owns (history.owner_uid): a non-admin's listing
  std::optional<PageKey> after;   // the previous page's `next`; none: the first page
  size_t limit = kMaxPageRows;    // rows per page, capped at kMaxPageRows
};

struct VerdictListPage {
  std::vector<VerdictRow> rows;
  std::optional<PageKey> next;  // set when more rows match: the `after` of the next page
};

Result<VerdictListPage> verdict_page(Database& db, const VerdictQuery& query);
// Archived verdicts per domain (NONE included) since since_us, by count descending; its
// cluster and owner filter as in verdict_page.
Result<std::vector<DomainCount>> domain_counts(Database& db, const VerdictQuery& query);

// The tasks of array job array_job_id ("123": its tasks are archived as "123_<task>"),
// the newest run of each that has a verdict, in task order; owner: only tasks that ran as
// this uid (a non-admin's roll-up). waiting: the tasks queued and not yet judged, counted
// for admins only (without an owner: a queued run's owner is known once it is judged).
struct ArrayTasks {
  std::vector<VerdictRow> judged;
  int64_t waiting = 0;
};
Result<ArrayTasks> array_tasks(Database& db, const std::string& cluster, const std::string& array_job_id,
                               std::optional<uint32_t> owner);

// Remediation decisions since since_us, oldest first; node "" for every node.
Result<std::vector<RemediationRecord>> remediation_history(Database& db, const std::string& node, TimeUs since_us);

// Whether a remediation decision other than `failed` exists for (cluster, job, node):
// a job is decided once per node, a failed attempt may be retried.
Result<bool> remediation_decided(Database& db, const std::string& cluster, const std::string& job_id,
                                 const std::string& node);
// Decisions with this action (e.g. drained) after since_us: the hourly rate limit.
Result<int64_t> remediation_count_since(Database& db, const std::string& action, TimeUs since_us);
// Appends the record and sets its id.
Status insert_remediation(Database& db, RemediationRecord& record);

}  // namespace attrib::store
