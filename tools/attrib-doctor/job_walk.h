// attrib-doctor --job ID: one job through every stage -- its hook report (spooled, quarantined
// or received), the queue, collection per node and source, the verdict, the comment in
// slurmdbd -- and where it stopped.
#pragma once

#include <string>

#include "common/config.h"
#include "tools/attrib-doctor/findings.h"

namespace attrib::doctor {

void walk_job(const common::Config& config, const std::string& job_id, Findings& out);

}  // namespace attrib::doctor
