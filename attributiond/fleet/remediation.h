// Opt-in remediation (docs/fleet.md): after a verdict is archived, the head daemon may
// drain the node it blames through slurmctld. Off by default; dry-run records and logs
// what it would do and changes nothing in Slurm.
//
// Triggers: a verdict that recommends DRAIN_NODE with a trusted root cause
// (remediation.on_verdict), or a verdict that makes its node or GPU a repeat offender
// (remediation.on_repeat_offender). Safety, in this order:
//   - never from a hook: only the head's workers call this, after archive;
//   - never twice: one decision per (cluster, job, node), kept in the `remediation` table;
//   - systemic guard: a verdict inside a systemic event (offender_policy.h) drains nothing;
//   - a node slurmctld already has DRAIN/DRAINING/DRAINED (by attrib or an admin) is left
//     alone, its reason untouched;
//   - rate limit: at most remediation.max_drains_per_hour drains in any hour.
// Every decision, skips and failures included, is a row in the `remediation` table.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "attributiond/fleet/offender_policy.h"
#include "attributiond/store/job_store.h"
#include "common/config.h"
#include "core/result.h"
#include "slurm/node_drainer.h"

namespace attrib::fleet {

// The Slurm reason: "attrib: job <id> rule <rule> <DOMAIN>[ <suffix>]", at most 255 bytes.
std::string drain_reason(const std::string& job_id, const std::string& rule, const std::string& domain,
                         const std::string& suffix = "");

class Remediator {
 public:
  // drainer may be null only with mode off.
  Remediator(common::RemediationConfig config, FleetPolicy policy, std::unique_ptr<slurm::NodeDrainer> drainer);

  // Decides for one archived job (read back from the store's history) and records the
  // decision; safe to call again for the same job (a retried attempt): a job decided once
  // is not decided again. Returns the record written, if any.
  Result<std::optional<store::RemediationRecord>> after_verdict(store::JobStore& jobs, const store::JobKey& key,
                                                                TimeUs now);

  bool enabled() const { return config_.mode != "off"; }

 private:
  common::RemediationConfig config_;
  FleetPolicy policy_;
  std::unique_ptr<slurm::NodeDrainer> drainer_;
  std::mutex mutex_;  // one decision at a time: the rate limit and never-twice read then write
};

}  // namespace attrib::fleet
