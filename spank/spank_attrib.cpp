// spank_attrib.so: the SPANK glue. It tags every task with ATTRIB_* variables, records
// each task's start and end (exit code or signal) in a node-local spool for the
// `spank_records` collector, and offers --attrib=off / --attrib-evidence.
//
// Never hurt a job: every callback returns 0 whatever happens (a failure is logged in
// the slurmd log and the plugin does less), no exception crosses into slurmstepd, and
// bad plugstack arguments make the plugin inert instead of failing steps.
// Privileges (testbed-facts.md): in slurmstepd every callback runs as root except
// task_init, which runs as the job's user in the task just before exec.
extern "C" {
#include <slurm/spank.h>
}

#include <unistd.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/hostname.h"
#include "spank/plugin_args.h"
#include "spank/record_file.h"
#include "spank/task_record.h"

// The loader looks these up by name; g++ needs them declared extern "C" first, or it
// mangles/omits them and srun aborts with "symbol missing" (testbed-facts.md).
extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
SPANK_PLUGIN(attrib, 1)
// What attrib-doctor reads from this file to tell which Slurm it was built for (slurmstepd
// refuses a plugin built for another release): this prefix, then SLURM_VERSION_NUMBER as
// written in slurm_version.h ("0x160508": 22.05.8); tools/attrib-doctor/plugstack.cpp.
#define ATTRIB_SPANK_TEXT(x) #x
#define ATTRIB_SPANK_NUMBER_TEXT(x) ATTRIB_SPANK_TEXT(x)
extern const char attrib_spank_built_for[];
const char attrib_spank_built_for[] =
    "attrib spank_attrib.so built for Slurm " ATTRIB_SPANK_NUMBER_TEXT(SLURM_VERSION_NUMBER);
}

namespace {

using attrib::spank::PluginArgs;

// Everything one process (srun, sbatch, slurmd or one step's slurmstepd) knows.
// slurm_spank_init resets it: each process loads the plugin once, the unit tests many times.
struct PluginState {
  bool inert = false;  // bad plugstack arguments: do nothing at all
  PluginArgs args;
  bool opt_out_requested = false;                    // --attrib=off
  bool evidence_requested = false;                   // --attrib-evidence
  std::map<int, attrib::spank::TaskRecord> started;  // local task id -> its start record
};
PluginState state;

constexpr int kOptionAttrib = 1;
constexpr int kOptionEvidence = 2;

bool local_context() {
  const spank_context_t context = spank_context();
  return context == S_CTX_LOCAL || context == S_CTX_ALLOCATOR;
}

// On nodes the message goes to the slurmd log; in srun/sbatch/salloc it would reach
// the user's terminal, so there it is only a debug message (users never see chatter).
void report_problem(const std::string& message) {
  if (local_context()) {
    slurm_debug("attrib: %s", message.c_str());
  } else {
    slurm_error("attrib: %s", message.c_str());
  }
}

// The node's name for records and %n: its short hostname, the Slurm NodeName on most
// clusters. Not SLURMD_NODENAME from the job environment: in task_post_fork slurmstepd
// still holds the submitting shell's copy (an srun inside a batch job on n1 hands
// SLURMD_NODENAME=n1 to every node, seen on Slurm 22.05), so it would misfile records.
std::string node_name() {
  std::string name = attrib::short_hostname();
  return name.empty() ? "unknown" : name;
}

bool opted_out() { return state.opt_out_requested && state.args.allow_opt_out; }

std::optional<uint32_t> job_id(spank_t sp) {
  uint32_t id = 0;
  if (spank_get_item(sp, S_JOB_ID, &id) != ESPANK_SUCCESS) return std::nullopt;
  return id;
}

std::optional<uint32_t> step_id(spank_t sp) {
  uint32_t id = 0;
  if (spank_get_item(sp, S_JOB_STEPID, &id) != ESPANK_SUCCESS) return std::nullopt;
  return id;
}

// The job's spool directory is named as attrib names the job: an array task by
// "<array job>_<task>" (the id sacct shows and the daemon attributes), not by the raw
// job id Slurm gives the task internally.
std::string job_dir(spank_t sp, uint32_t job) {
  std::string name = std::to_string(job);
  uint32_t array_job = 0, array_task = 0;
  // Other jobs: slurmstepd answers array id = the job id (or 0) and task id NO_VAL.
  constexpr uint32_t kNoVal = 0xfffffffe;
  if (spank_get_item(sp, S_JOB_ARRAY_ID, &array_job) == ESPANK_SUCCESS && array_job != 0 &&
      spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &array_task) == ESPANK_SUCCESS && array_task != kNoVal)
    name = std::to_string(array_job) + "_" + std::to_string(array_task);
  return attrib::spank::expand_spool_dir(state.args.spool_dir, node_name()) + "/" + name;
}

// The GPU indices Slurm gave the step on this node, from the job's environment as
// slurmstepd built it (the gres plugin sets SLURM_STEP_GPUS for a step, SLURM_JOB_GPUS
// for the batch step); "" when it has none.
std::string step_gpus(spank_t sp) {
  char value[256];
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
    if (spank_getenv(sp, name, value, sizeof value) == ESPANK_SUCCESS && value[0] != '\0') return value;
  }
  return "";
}

// The identity part of a task record, from the items slurmstepd offers for a task.
std::optional<attrib::spank::TaskRecord> task_identity(spank_t sp) {
  attrib::spank::TaskRecord record;
  auto job = job_id(sp);
  auto step = step_id(sp);
  uint32_t global_rank = 0;
  int local_rank = 0;
  pid_t pid = 0;
  if (!job || !step || spank_get_item(sp, S_TASK_GLOBAL_ID, &global_rank) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_TASK_ID, &local_rank) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS) {
    return std::nullopt;
  }
  record.job_id = *job;
  record.step_id = *step;
  record.node = node_name();
  record.global_rank = global_rank;
  record.local_rank = local_rank;
  record.pid = pid;
  record.gpus = step_gpus(sp);
  return record;
}

void write_record(spank_t sp, const attrib::spank::TaskRecord& record) {
  const std::string dir = job_dir(sp, record.job_id);
  attrib::Status written = attrib::spank::ensure_directory(dir, 0755);
  if (written) {
    written = attrib::spank::write_atomically(dir, attrib::spank::record_file_name(record.step_id, record.global_rank),
                                              attrib::spank::record_text(record));
  }
  if (!written) report_problem("task record not written: " + written.error().message);
}

int option_callback(int val, const char* optarg, int remote) {
  if (val == kOptionEvidence) {
    state.evidence_requested = true;
    return 0;
  }
  const std::string value = optarg == nullptr ? "" : optarg;
  if (value == "off") {
    state.opt_out_requested = true;
  } else if (value == "on") {
    state.opt_out_requested = false;
  } else if (!remote) {
    // A typo in the user's own command line: refuse it at submission, as Slurm does
    // for its own options. Remotely nothing may fail a step, so it is ignored there.
    slurm_error("--attrib: expected 'on' or 'off', got '%s'", value.c_str());
    return -1;
  }
  return 0;
}

// Runs `body`, turning any C++ exception into a log line: nothing may unwind into C.
template <typename Body>
int guarded(const char* callback, Body body) {
  try {
    body();
  } catch (const std::exception& e) {
    report_problem(std::string(callback) + ": " + e.what());
  } catch (...) {
    report_problem(std::string(callback) + ": unknown exception");
  }
  return 0;
}

char kAttribName[] = "attrib";
char kAttribArg[] = "on|off";
char kAttribUsage[] =
    "attrib failure attribution for this job: 'off' opts the job out (only where the site allows it).";
char kEvidenceName[] = "attrib-evidence";
char kEvidenceUsage[] =
    "Make the job produce better failure evidence: NCCL_DEBUG=WARN unless set, and PyTorch NCCL "
    "flight-recorder dumps on timeout into the job's attrib spool.";

// Registered in slurm_spank_init of every context: sbatch/salloc ignore the static
// spank_options table (only registered options appear in their --help and are accepted).
struct spank_option kOptions[] = {
    {kAttribName, kAttribArg, kAttribUsage, 1, kOptionAttrib, option_callback},
    {kEvidenceName, nullptr, kEvidenceUsage, 0, kOptionEvidence, option_callback},
};

void register_options(spank_t sp) {
  const spank_context_t context = spank_context();
  // slurmd proper and prolog/epilog take no user options.
  if (context == S_CTX_SLURMD || context == S_CTX_JOB_SCRIPT) return;
  for (struct spank_option& option : kOptions) {
    if (spank_option_register(sp, &option) != ESPANK_SUCCESS) {
      report_problem(std::string("cannot register option --") + option.name);
    }
  }
}

}  // namespace

extern "C" {

int slurm_spank_init(spank_t sp, int ac, char** av) {
  return guarded("init", [&] {
    state = PluginState{};
    // Before the arguments are checked: an inert plugin must still accept the options,
    // or job scripts that use them would be refused at submission.
    register_options(sp);
    std::vector<std::string> args;
    for (int i = 0; i < ac; ++i) args.emplace_back(av[i] == nullptr ? "" : av[i]);
    auto parsed = attrib::spank::parse_plugin_args(args);
    const spank_context_t context = spank_context();
    if (!parsed) {
      state.inert = true;
      // One clear error per slurmd start (slurmd loads the plugin once); each step's
      // slurmstepd and srun only note it at debug level.
      const std::string message = parsed.error().message + "; the plugin is inert, jobs are not affected";
      if (context == S_CTX_SLURMD) {
        slurm_error("attrib: %s", message.c_str());
      } else {
        slurm_debug("attrib: %s", message.c_str());
      }
      return;
    }
    state.args = *parsed;
    if (context == S_CTX_SLURMD) {
      // Created at slurmd start so that the collector can tell "plugin active, no
      // records for this job" (empty) from "no plugin on this node" (unavailable).
      const std::string spool = attrib::spank::expand_spool_dir(state.args.spool_dir, node_name());
      if (auto made = attrib::spank::ensure_directory(spool, 0755); !made) {
        slurm_error("attrib: task spool unusable, records will be missing: %s", made.error().message.c_str());
      }
    }
  });
}

int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  return guarded("init_post_opt", [&] {
    if (state.inert || !spank_remote(sp)) return;
    if (state.opt_out_requested && !state.args.allow_opt_out) {
      slurm_debug("attrib: --attrib=off ignored: the site does not allow opting out (allow_opt_out=no)");
    }
    if (opted_out()) return;
    auto job = job_id(sp);
    if (!job) return;
    const std::string dir = job_dir(sp, *job);
    if (auto made = attrib::spank::ensure_directory(dir, 0755); !made) {
      report_problem(made.error().message);
      return;
    }
    if (state.evidence_requested) {
      // The job's own dumps go to a subdirectory the user owns: the records next to it
      // stay root's, so a user cannot forge a trusted task record.
      uid_t uid = 0;
      gid_t gid = 0;
      const std::string user_dir = dir + "/user";
      if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
          spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
        report_problem("cannot read the job's uid/gid; no evidence directory");
        return;
      }
      if (auto made = attrib::spank::ensure_directory(user_dir, 0700); !made) {
        report_problem(made.error().message);
        return;
      }
      if (chown(user_dir.c_str(), uid, gid) != 0) report_problem("cannot chown " + user_dir);
    }
  });
}

int slurm_spank_task_init(spank_t sp, int, char**) {
  return guarded("task_init", [&] {
    if (state.inert || opted_out()) return;
    auto job = job_id(sp);
    auto step = step_id(sp);
    uint32_t global_rank = 0;
    if (!job || !step || spank_get_item(sp, S_TASK_GLOBAL_ID, &global_rank) != ESPANK_SUCCESS) return;
    spank_setenv(sp, "ATTRIB_JOB_ID", std::to_string(*job).c_str(), 1);
    spank_setenv(sp, "ATTRIB_STEP_ID", attrib::spank::step_label(*step).c_str(), 1);
    spank_setenv(sp, "ATTRIB_RANK", std::to_string(global_rank).c_str(), 1);
    if (!state.evidence_requested) return;
    // overwrite = 0: whatever the user set explicitly wins.
    spank_setenv(sp, "NCCL_DEBUG", "WARN", 0);
    spank_setenv(sp, "TORCH_NCCL_TRACE_BUFFER_SIZE", std::to_string(state.args.nccl_trace_buffer_size).c_str(), 0);
    spank_setenv(sp, "TORCH_NCCL_DUMP_ON_TIMEOUT", "1", 0);
    // PyTorch appends the rank: <dir>/user/nccl_trace_rank_<N>. A step launched from the
    // batch step inherits the batch node's path (set there by this very line): this node's
    // spool replaces it, or a spool per node (spool_dir=.../%n) would gather every rank's
    // dump under the batch node's name. A path the user chose still wins.
    const std::string dump_prefix = job_dir(sp, *job) + "/user/nccl_trace_rank_";
    char inherited[4096] = "";
    const bool set = spank_getenv(sp, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE", inherited, sizeof inherited) == ESPANK_SUCCESS;
    const std::string ours_elsewhere = "/" + std::to_string(*job) + "/user/nccl_trace_rank_";
    const std::string value = inherited;
    const bool ours = value.size() >= ours_elsewhere.size() &&
                      value.compare(value.size() - ours_elsewhere.size(), ours_elsewhere.size(), ours_elsewhere) == 0;
    spank_setenv(sp, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE", dump_prefix.c_str(), !set || ours ? 1 : 0);
  });
}

int slurm_spank_task_post_fork(spank_t sp, int, char**) {
  return guarded("task_post_fork", [&] {
    if (state.inert || opted_out()) return;
    auto record = task_identity(sp);
    if (!record) {
      report_problem("task_post_fork: task items unavailable; no record");
      return;
    }
    record->start_us = attrib::wall_clock_us();
    state.started[record->local_rank] = *record;
    write_record(sp, *record);
  });
}

int slurm_spank_task_exit(spank_t sp, int, char**) {
  return guarded("task_exit", [&] {
    if (state.inert || opted_out()) return;
    auto record = task_identity(sp);
    int raw_status = 0;
    if (!record || spank_get_item(sp, S_TASK_EXIT_STATUS, &raw_status) != ESPANK_SUCCESS) {
      report_problem("task_exit: task items unavailable; no record");
      return;
    }
    // The start time comes from task_post_fork in this same slurmstepd; 0 if that
    // record was never made (then the reader sees start_us 0 and knows).
    auto started = state.started.find(record->local_rank);
    if (started != state.started.end()) record->start_us = started->second.start_us;
    record->end_us = attrib::wall_clock_us();
    record->raw_status = raw_status;
    write_record(sp, *record);
  });
}

}  // extern "C"
