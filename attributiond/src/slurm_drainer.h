// The real NodeDrainer (remediation.h): libslurm's slurm_load_node_single and
// slurm_update_node against slurmctld (SLURM_CONF or /etc/slurm/slurm.conf). The daemon
// must run as root or the SlurmUser for slurmctld to accept the update.
#pragma once

#include <memory>

#include "remediation.h"

namespace attrib::head {

std::unique_ptr<NodeDrainer> make_slurm_drainer();

}  // namespace attrib::head
