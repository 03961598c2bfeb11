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

struct SweepCount {
  int queued = 0;  // attempts newly queued
  int known = 0;   // attempts the archive had
};

// Queues, as reports of hook kind SWEEP, the attempts the archive does not know
// (JobStore::knows_attempt). Idempotent: the same attempts again queue nothing.
Result<SweepCount> queue_unknown_attempts(store::JobStore& store, const std::vector<slurm::JobRecordFacts>& attempts,
                                          const std::string& cluster, TimeUs now);

// The sweep: every attempt of `cluster` that ended in [since, until), its row final or
// not yet (Accounting::ended_attempts).
Result<SweepCount> sweep_once(store::JobStore& store, slurm::Accounting& accounting, const std::string& cluster,
                              TimeUs since, TimeUs until, TimeUs now);

}  // namespace attrib::head
