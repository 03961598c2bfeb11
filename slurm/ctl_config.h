// What the running slurmctld says about the parts of its configuration attrib depends on
// (the hook it runs, the comment field it stores, the SPANK plugin stack, its user), and
// the cluster's node names: asked over slurmctld's own RPC, as `scontrol show config`
// prints it, never read from a file on this host, which may differ from what runs.
// For `attrib-doctor`, run by an admin; not for hooks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace attrib::slurm {

struct CtlConfig {
  std::string version;     // slurmctld's, "22.05.8"
  std::string slurm_user;  // SlurmUser
  uint32_t slurm_uid = 0;
  std::vector<std::string> epilog_slurmctld;  // EpilogSlurmctld (24.11 takes several)
  std::string job_comp_type;                  // JobCompType, "jobcomp/script"
  std::string job_comp_loc;                   // JobCompLoc: the script, for jobcomp/script
  std::string accounting_storage_type;        // "accounting_storage/slurmdbd"
  bool stores_job_comment = false;            // AccountingStoreFlags has job_comment
  std::string plugstack;                      // PlugStackConfig
  std::string plugin_dir;                     // PluginDir (colon-separated)
};

// slurmctld's configuration; kSlurmctldConfig when it does not answer.
Result<CtlConfig> load_ctl_config();

// Every node slurmctld knows, by name.
Result<std::vector<std::string>> cluster_node_names();

// The Slurm release these libraries were built against, "22.05" (major.minor): what a
// SPANK plugin built here must match.
std::string built_slurm_release();

}  // namespace attrib::slurm
