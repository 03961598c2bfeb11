#include "slurm/ctl_config.h"

#include <cerrno>
#include <memory>
#include <mutex>

#include "slurm/libslurm.h"
#include "slurm/slurmdbd_client.h"

namespace attrib::slurm {
namespace {

std::string text(const char* value) { return value ? value : ""; }

Error slurmctld_error(const std::string& what) {
  const int err = errno;
  return Error{kSlurmctldConfig, what + ": " + (err ? slurm_strerror(err) : "no answer")};
}

std::mutex rpc_mutex;  // libslurm's RPC helpers are not documented thread-safe

}  // namespace

Result<CtlConfig> load_ctl_config() {
  init_libslurm_once();
  std::lock_guard lock(rpc_mutex);
  slurm_conf_t* raw = nullptr;
  errno = 0;
  if (slurm_load_ctl_conf(0, &raw) != SLURM_SUCCESS || raw == nullptr)
    return slurmctld_error("cannot read slurmctld's configuration");
  std::unique_ptr<slurm_conf_t, void (*)(slurm_conf_t*)> conf(raw, slurm_free_ctl_conf);
  CtlConfig out;
  out.version = text(conf->version);
  out.slurm_user = text(conf->slurm_user_name);
  out.slurm_uid = conf->slurm_user_id;
  out.epilog_slurmctld = epilog_slurmctld_paths(*conf);
  out.job_comp_type = text(conf->job_comp_type);
  out.job_comp_loc = text(conf->job_comp_loc);
  out.accounting_storage_type = text(conf->accounting_storage_type);
  out.stores_job_comment = (conf->conf_flags & kStoreJobCommentFlag) != 0;
  out.plugstack = text(conf->plugstack);
  out.plugin_dir = text(conf->plugindir);
  return out;
}

Result<std::vector<std::string>> cluster_node_names() {
  init_libslurm_once();
  std::lock_guard lock(rpc_mutex);
  node_info_msg_t* raw = nullptr;
  errno = 0;
  if (slurm_load_node(0, &raw, SHOW_ALL) != SLURM_SUCCESS || raw == nullptr)
    return slurmctld_error("cannot list the nodes from slurmctld");
  std::unique_ptr<node_info_msg_t, void (*)(node_info_msg_t*)> nodes(raw, slurm_free_node_info_msg);
  std::vector<std::string> names;
  for (uint32_t i = 0; i < nodes->record_count; ++i)
    if (nodes->node_array[i].name != nullptr) names.emplace_back(nodes->node_array[i].name);
  return names;
}

std::string built_slurm_release() {
  return std::to_string(SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER)) + "." +
         (SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER) < 10 ? "0" : "") +
         std::to_string(SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
}

}  // namespace attrib::slurm
