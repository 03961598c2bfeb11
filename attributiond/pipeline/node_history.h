// A failed job's nodes' recent past (rule host.unexplained_failures_repeat, docs/rules.md
// "Failures that repeat on a node"): per node of the job, the other jobs that failed there
// within fleet.repeat_failures_window_s with no trusted cause found, from the archive's
// history. What the rules engine gets as JobFacts::repeated_failures: only nodes past
// fleet.repeat_failures_jobs with at least one other user among those jobs (one user's
// resubmitted job failing again is that job's pattern, not the node's).
#pragma once

#include <vector>

#include "attributiond/store/job_store.h"
#include "common/config.h"
#include "core/types.h"

namespace attrib::pipeline {

// Empty when the check is off (0 jobs), the job succeeded or has no end, or the archive
// cannot be read (logged: weak evidence is never worth failing an attribution for).
std::vector<NodeFailureHistory> repeated_failures(store::JobStore& store, const common::FleetConfig& fleet,
                                                  const JobFacts& facts);

}  // namespace attrib::pipeline
