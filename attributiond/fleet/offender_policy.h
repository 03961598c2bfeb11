// The repeat-offender policy over the fleet history (docs/fleet.md).
//
// The job verdict and a node's reputation are separate things: every archived verdict
// gets one row in the archive's `history` (attributiond/store/fleet_queries.h), but only
// a trusted root cause in one of the policy's offender domains counts against the node it
// names. AMBIGUOUS, UNATTRIBUTED and NONE verdicts name no root cause and never count;
// one weak attribution never condemns a node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attributiond/store/fleet_queries.h"
#include "common/config.h"
#include "core/result.h"
#include "core/types.h"

namespace attrib::fleet {

struct Offender {
  std::string node;
  std::string gpu;   // "" for the node as a whole
  int verdicts = 0;  // counted verdicts inside the window
  TimeUs first_us = 0, last_us = 0;
  std::vector<std::string> job_ids;  // oldest first
  // Why: "" for trusted hardware/fabric verdicts; "app_class_xid" for a GPU whose
  // application-class Xids (13/31/43/45, APPLICATION per job) recur across the jobs of
  // several users: each job alone looks like its own bug, together they point at the GPU.
  std::string basis;
  // Listed, never acted on: an app_class_xid offender without trusted hardware evidence on
  // that GPU (a counted verdict naming it in the window). Two users' programs, perhaps
  // cooperating, can fault any GPU they land on; only evidence that the fault follows the
  // GPU may drain it.
  bool advisory = false;
};

// When a node (or one GPU) becomes a repeat offender, and when a burst of blame is a
// fleet-wide event instead (config keys fleet.*).
struct FleetPolicy {
  int offender_threshold = 2;  // counted verdicts within the window
  int64_t offender_window_s = 14 * 86400;
  std::vector<std::string> offender_domains = {"GPU_HARDWARE", "HOST_HARDWARE", "NVLINK_FABRIC"};
  int systemic_nodes = 16;           // more distinct nodes than this within ...
  int64_t systemic_window_s = 3600;  // ... this long is one systemic event
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
  // Node-level entries (gpu "") and per-GPU entries, sorted by (node, gpu).
  std::vector<Offender> offenders;
  std::vector<SystemicEvent> systemic;  // oldest first
};

// The policy of the daemon's fleet.* keys.
FleetPolicy fleet_policy(const common::FleetConfig& config);

// True when a verdict of this domain and trust counts against the node it blames.
bool counts_for_reputation(const std::string& domain, bool trusted, const FleetPolicy& policy);

// Repeat offenders and systemic events within [now - offender_window, now].
Result<OffenderReport> repeat_offenders(store::Database& db, const FleetPolicy& policy, TimeUs now_us);
// The policy itself, over rows already read (any order; only counting rows matter).
OffenderReport evaluate_offenders(const std::vector<store::BlameRow>& rows, const FleetPolicy& policy, TimeUs now_us);

}  // namespace attrib::fleet
