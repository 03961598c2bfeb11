// What a Slurm hook knows about a finished job, read from the environment it really
// receives, and the same as attrib.v1.JobEnded's wire bytes, written without libprotobuf.
//
// The hook that slurmctld runs (attrib-epilog) links neither gRPC nor protobuf nor abseil:
// loading them cost 60-80 ms a run (benchmark 3). It encodes the message by hand (a dozen
// fields of three wire types, proto/attrib/v1/attrib.proto) into the spool file the head
// reads with the real parser; a test decodes these bytes with libprotobuf for every field.
//
// EpilogSlurmctld: SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_JOB_EXIT_CODE (raw wait
// status), SLURM_JOB_EXIT_CODE2 ("3:0"), SLURM_JOB_STDOUT/STDERR, no job state; from
// Slurm 23.02 also SLURM_JOB_START_TIME (slurmctld's job_common_env_vars).
// jobcomp/script: JOBID, NODES, JOBSTATE, EXITCODE, START, END, STDOUT, STDERR.
// slurmd Epilog: SLURM_JOB_ID, SLURMD_NODENAME; from Slurm 23.02 SLURM_JOB_START_TIME
// (from the kill request's credential, prep_script_slurmd.c).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/result.h"
#include "core/types.h"

namespace attrib::epilog {

using Environment = std::map<std::string, std::string>;

Environment current_environment();

// attrib.v1.HookKind's numbers.
enum class HookKind : int { Unspecified = 0, EpilogSlurmctld = 1, JobcompScript = 2, EpilogSlurmd = 3 };

// attrib.v1.JobEnded's fields, by the same names.
struct JobReport {
  std::string job_id;
  std::string cluster;
  std::string node_list;
  int32_t exit_code = 0;
  int32_t signal = 0;
  std::string state;
  HookKind hook = HookKind::Unspecified;
  std::map<std::string, std::string> spank_options;
  int64_t hook_time_us = 0;
  std::string user;
  uint32_t uid = 0;
  int64_t start_time_us = 0;
  int64_t end_time_us = 0;
  std::string job_name;
  std::string stdout_path;
  std::string stderr_path;
  std::string slurm_job_id;
  std::optional<uint32_t> het_job_offset;
};

// Error when the environment is not that of a Slurm hook (no job id). Every text is made
// valid UTF-8 (job names, users and paths are the user's bytes; proto3 strings must be).
Result<JobReport> job_report_from_env(const Environment& env, TimeUs now);

// The report as attrib.v1.JobEnded's serialized bytes (proto3: fields at their default
// are left out, as SerializeToString leaves them out).
std::string encode_job_ended(const JobReport& report);

// A readable listing of the report, one "field: value" a line (attrib-epilog --print).
std::string describe(const JobReport& report);

}  // namespace attrib::epilog
