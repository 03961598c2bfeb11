// The hook's report as the attrib.v1.JobEnded message: the bytes attrib-epilog writes
// (job_report.h), read back by libprotobuf. attrib-epilog-send and the tests use it; the
// hook itself never links protobuf.
#pragma once

#include "attrib/v1/attrib.pb.h"
#include "core/result.h"
#include "core/types.h"
#include "epilog/job_report.h"

namespace attrib::epilog {

// Error when the environment is not that of a Slurm hook (no job id).
Result<v1::JobEnded> job_ended_from_env(const Environment& env, TimeUs now);

}  // namespace attrib::epilog
