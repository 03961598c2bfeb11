// attrib-doctor's checks of the Slurm side, asked of the running slurmctld and slurmdbd:
// the hook slurmctld runs, the comment field it stores, the SPANK plugin it loads, and a
// dry-run write of the configured comment field.
#pragma once

#include <optional>

#include "common/config.h"
#include "slurm/ctl_config.h"
#include "tools/attrib-doctor/findings.h"
#include "tools/attrib-doctor/run_as.h"

namespace attrib::doctor {

// Every Slurm check; returns the SlurmUser (who runs the hook) when slurmctld answered.
std::optional<Identity> check_slurm(const common::Config& config, Findings& out);

// The pieces, for their tests (ctl: what slurmctld said).
void check_hooks(const slurm::CtlConfig& ctl, const Identity& slurm_user, Findings& out);
void check_comment_storage(const common::Config& config, const slurm::CtlConfig& ctl, Findings& out);
void check_plugstack(const slurm::CtlConfig& ctl, Findings& out);

}  // namespace attrib::doctor
