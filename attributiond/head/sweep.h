// Reconciliation with slurmdbd (the reference system's workload discovery): attempts that
// ended with no report from a hook are queued like reported ones. Without it a job whose
// hook never ran (a backup slurmctld without the hook, a spool left on a host where no
// head runs, a head down longer than the spool kept, jobs that ended before install) was
// never attributed.
#pragma once

#include "attributiond/store/job_store.h"
#include "core/result.h"
#include "slurm/accounting.h"

namespace attrib::head {

// Queues, as a report of hook kind SWEEP, every attempt of `cluster` that ended in
// [since, until) and that the archive does not know (JobStore::knows_attempt). Returns
// how many were queued. Idempotent: a second sweep of the same window queues nothing.
Result<int> sweep_once(store::JobStore& store, slurm::Accounting& accounting, const std::string& cluster,
                       TimeUs since, TimeUs until, TimeUs now);

}  // namespace attrib::head
