// attributiond --role head (the default): the cluster's attribution daemon. Runs the
// HeadDaemon over the configured archive until SIGTERM/SIGINT, then lets the workers
// finish the jobs in progress.
#pragma once

#include <csignal>
#include <memory>
#include <vector>

#include "attributiond/ops/systemd_notify.h"
#include "collectors/collector.h"
#include "common/config.h"
#include "core/result.h"
#include "rules/engine.h"

namespace attrib::head {

// stop_signals: from ops::block_stop_signals(), called before any thread started.
Status run_head_role(const common::Config& config, std::shared_ptr<const rules::RulePack> pack,
                     std::vector<std::unique_ptr<collectors::Collector>> collectors, ops::SystemdNotifier& systemd,
                     const sigset_t& stop_signals);

}  // namespace attrib::head
