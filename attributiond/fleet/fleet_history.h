// Fleet history: which nodes and GPUs archived verdicts blamed, and the repeat-offender
// policy over that history (docs/fleet.md).
//
// The job verdict and a node's reputation are separate things: every archived verdict
// gets one row in the `history` table (written in the same transaction as the verdict,
// JobStore::archive), but only a trusted root cause in one of the policy's offender
// domains counts against the node it names. AMBIGUOUS, UNATTRIBUTED and NONE verdicts
// name no root cause and never count; one weak attribution never condemns a node.
//
// Every query takes a db::Database& so a reader (attrib-show via the daemon, the
// dashboard with its own read-only connection to the same WAL file) can use its own
// connection. Times are microseconds since the epoch (UTC).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/types.h"
#include "attributiond/store/sqlite.h"

namespace attrib::head {

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
  TimeUs time_us = 0;  // when the job ended (when it was archived if the end is unknown)
  bool trusted = false;                // the root cause rests on trusted (root-written) evidence
  bool counts_for_reputation = false;  // trusted and in one of the policy's offender domains
  std::string action;                  // the verdict's recommended_action, e.g. DRAIN_NODE
};

struct Offender {
  std::string node;
  std::string gpu;  // "" for the node as a whole
  int verdicts = 0;  // counted verdicts inside the window
  TimeUs first_us = 0, last_us = 0;
  std::vector<std::string> job_ids;  // oldest first
  // Why: "" for trusted hardware/fabric verdicts; "app_class_xid" for a GPU whose
  // application-class Xids (13/31/43/45, APPLICATION per job) recur across the jobs of
  // several users: each job alone looks like its own bug, together they point at the GPU.
  std::string basis;
};

// When a node (or one GPU) becomes a repeat offender, and when a burst of blame is a
// fleet-wide event instead (config keys fleet.*).
struct FleetPolicy {
  int offender_threshold = 2;                   // counted verdicts within the window
  int64_t offender_window_s = 14 * 86400;
  std::vector<std::string> offender_domains = {"GPU_HARDWARE", "HOST_HARDWARE", "NVLINK_FABRIC"};
  int systemic_nodes = 16;                      // more distinct nodes than this within ...
  int64_t systemic_window_s = 3600;             // ... this long is one systemic event
  // The rule that blames one GPU for an application-class Xid (domain APPLICATION); the
  // same GPU in offender_threshold such jobs of at least two users is an offender too.
  std::vector<std::string> app_class_gpu_rules = {"gpu.xid_job_fatal"};
};

// A burst of counted blame over more than systemic_nodes distinct nodes. Verdicts inside
// it mark no node: a fabric or facility event would otherwise condemn the whole fleet.
struct SystemicEvent {
  TimeUs from_us = 0, to_us = 0;  // first and last counted verdict of the burst
  int nodes = 0;                  // distinct nodes blamed in it
  std::string domain;             // the domains involved, sorted, comma-separated
};

struct OffenderReport {
  std::vector<Offender> offenders;     // node-level entries (gpu "") and per-GPU entries, sorted by (node, gpu)
  std::vector<SystemicEvent> systemic;  // oldest first
};

// One archived verdict, for listings (attrib-show --since, the dashboard).
struct VerdictRow {
  std::string cluster, job_id;
  std::string user;
  uint32_t uid = 0;
  std::string state;
  std::string domain;
  std::string rule;            // root cause rule; "" for AMBIGUOUS, UNATTRIBUTED, NONE
  std::string action;          // recommended_action
  std::string node;            // root cause node; "" when the verdict blames none
  std::string gpu;
  std::string affected_nodes;  // the verdict's affected_nodes, comma-separated
  TimeUs time_us = 0;
  bool trusted = false;
};

struct DomainCount {
  std::string domain;
  int64_t jobs = 0;
};

// One remediation decision (remediation.h), kept forever in the `remediation` table.
struct RemediationRecord {
  int64_t id = 0;
  TimeUs time_us = 0;
  std::string cluster, node, job_id, rule;
  std::string action;  // drained | would_drain | skipped_already_drained | skipped_rate_limited |
                       // skipped_systemic | failed
  std::string reason;  // the Slurm reason text set (or that would have been set)
  std::string detail;  // why: the trigger (verdict / repeat offender), the skip or the error
};

// True when a verdict of this domain and trust counts against the node it blames.
bool counts_for_reputation(const std::string& domain, bool trusted, const FleetPolicy& policy);

// The verdicts that blamed node since since_us, oldest first. counts_for_reputation is
// computed with policy (the daemon's fleet.* keys; the defaults otherwise).
Result<std::vector<BlameRow>> node_history(db::Database& db, const std::string& node, TimeUs since_us,
                                           const FleetPolicy& policy = FleetPolicy{});
// The row of one job (cluster, job_id) when its verdict blamed a node; none otherwise.
Result<std::optional<BlameRow>> job_blame(db::Database& db, const std::pair<std::string, std::string>& key,
                                          const FleetPolicy& policy = FleetPolicy{});
// The same for every node, oldest first.
Result<std::vector<BlameRow>> blame_since(db::Database& db, TimeUs since_us,
                                          const FleetPolicy& policy = FleetPolicy{});

// Repeat offenders and systemic events within [now - offender_window, now].
Result<OffenderReport> repeat_offenders(db::Database& db, const FleetPolicy& policy, TimeUs now_us);
// The policy itself, over rows already read (any order; only counting rows matter).
OffenderReport evaluate_offenders(const std::vector<BlameRow>& rows, const FleetPolicy& policy, TimeUs now_us);

// Archived verdicts since since_us, oldest first; domain "" for every domain except NONE
// (successful jobs), or one domain (NONE included when asked for).
Result<std::vector<VerdictRow>> verdicts_since(db::Database& db, TimeUs since_us, const std::string& domain);
// Archived verdicts per domain since since_us (NONE included), by count descending.
Result<std::vector<DomainCount>> domain_counts(db::Database& db, TimeUs since_us);

// Remediation decisions since since_us, oldest first; node "" for every node.
Result<std::vector<RemediationRecord>> remediation_history(db::Database& db, const std::string& node,
                                                           TimeUs since_us);

}  // namespace attrib::head
