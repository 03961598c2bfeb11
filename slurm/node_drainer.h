// Draining a node through slurmctld, behind an interface so the head's remediation
// (attributiond/fleet/remediation.h) can be observed in tests. make_slurm_drainer() is
// the real one: libslurm's slurm_load_node_single and slurm_update_node against slurmctld
// (SLURM_CONF or /etc/slurm/slurm.conf). The daemon must run as root or the SlurmUser for
// slurmctld to accept the update.
#pragma once

#include <memory>
#include <string>

#include "core/result.h"

namespace attrib::slurm {

// slurmctld's view of a node, as far as draining cares.
struct NodeDrainState {
  bool drained = false;  // DRAIN flag set (draining or drained)
  std::string reason;
};

class NodeDrainer {
 public:
  virtual ~NodeDrainer() = default;
  virtual Result<NodeDrainState> state(const std::string& node) = 0;
  virtual Status drain(const std::string& node, const std::string& reason) = 0;
};

std::unique_ptr<NodeDrainer> make_slurm_drainer();

}  // namespace attrib::slurm
