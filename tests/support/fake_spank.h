// Link-time fakes of the functions slurmstepd/srun provide to SPANK plugins. Tests set
// `fake` (context, items, environment) and read what the plugin did (env, log lines).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

extern "C" {
#include <slurm/spank.h>
}

namespace fake_spank {

struct State {
  spank_context_t context = S_CTX_REMOTE;
  std::optional<uint32_t> job_id = 42;
  // Not an array task, as slurmstepd says it: the job's own id and NO_VAL.
  std::optional<uint32_t> array_job_id = 42;
  std::optional<uint32_t> array_task_id = 0xfffffffe;
  std::optional<uint32_t> step_id = 0;
  std::optional<uint32_t> global_rank = 3;
  std::optional<int> local_rank = 1;
  std::optional<int> pid = 4321;
  std::optional<int> exit_status;  // raw wait status
  uid_t uid = 0;
  gid_t gid = 0;
  std::map<std::string, std::string> env;  // the job/task environment
  std::vector<std::string> registered_options;
  std::vector<spank_option> options;  // as registered, to invoke callbacks
  std::vector<std::string> errors;
  std::vector<std::string> debugs;
};

extern State fake;
void reset();

// Calls the callback of the registered option `name` as Slurm would.
int invoke_option(const std::string& name, const char* optarg);

}  // namespace fake_spank

// The plugin's callbacks (defined in spank/spank_attrib.cpp).
extern "C" {
int slurm_spank_init(spank_t, int, char**);
int slurm_spank_init_post_opt(spank_t, int, char**);
int slurm_spank_task_init(spank_t, int, char**);
int slurm_spank_task_post_fork(spank_t, int, char**);
int slurm_spank_task_exit(spank_t, int, char**);
}
