// Turns the environment a Slurm hook really receives into a JobEnded message.
// EpilogSlurmctld: SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_JOB_EXIT_CODE (raw wait
// status), SLURM_JOB_EXIT_CODE2 ("3:0"), SLURM_JOB_STDOUT/STDERR, no job state.
// jobcomp/script: JOBID, NODES, JOBSTATE, EXITCODE, START, END, STDOUT, STDERR.
// slurmd Epilog: SLURM_JOB_ID, SLURMD_NODENAME.
#pragma once

#include <map>
#include <string>

#include "attrib/v1/attrib.pb.h"
#include "core/result.h"
#include "core/types.h"

namespace attrib::epilog {

using Environment = std::map<std::string, std::string>;

Environment current_environment();

// Error when the environment is not that of a Slurm hook (no job id).
Result<v1::JobEnded> job_ended_from_env(const Environment& env, TimeUs now);

}  // namespace attrib::epilog
