#include "slurm/node_drainer.h"

#include <unistd.h>

#include <cerrno>
#include <mutex>

#include "slurm/libslurm.h"
#include "slurm/slurmdbd_client.h"

namespace attrib::slurm {
namespace {

std::string slurm_error(const std::string& what) {
  int err = errno;
  return what + ": " + (err ? slurm_strerror(err) : "unknown error");
}

class SlurmDrainer final : public NodeDrainer {
 public:
  Result<NodeDrainState> state(const std::string& node) override {
    slurm::init_libslurm_once();
    std::lock_guard lock(mutex_);  // libslurm's RPC helpers are not documented thread-safe
    node_info_msg_t* info = nullptr;
    std::string name = node;
    if (slurm_load_node_single(&info, name.data(), SHOW_ALL) != SLURM_SUCCESS)
      return Error{kDrainSlurmctld, slurm_error("cannot read node " + node + " from slurmctld")};
    std::unique_ptr<node_info_msg_t, void (*)(node_info_msg_t*)> owned(info, slurm_free_node_info_msg);
    if (info == nullptr || info->record_count == 0) return Error{kDrainNoNode, "slurmctld knows no node " + node};
    const node_info_t& record = info->node_array[0];
    NodeDrainState state;
    state.drained = (record.node_state & NODE_STATE_DRAIN) != 0;
    if (record.reason != nullptr) state.reason = record.reason;
    return state;
  }

  Status drain(const std::string& node, const std::string& reason) override {
    slurm::init_libslurm_once();
    std::lock_guard lock(mutex_);
    update_node_msg_t message;
    slurm_init_update_node_msg(&message);
    std::string names = node, text = reason;
    message.node_names = names.data();
    message.node_state = NODE_STATE_DRAIN;
    message.reason = text.data();
    message.reason_uid = static_cast<uint32_t>(getuid());  // shown by sinfo -R as the USER
    if (slurm_update_node(&message) != SLURM_SUCCESS)
      return Error{kDrainSlurmctld, slurm_error("slurm_update_node " + node)};
    return ok_status();
  }

 private:
  std::mutex mutex_;
};

}  // namespace

std::unique_ptr<NodeDrainer> make_slurm_drainer() { return std::make_unique<SlurmDrainer>(); }

}  // namespace attrib::slurm
