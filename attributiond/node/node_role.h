// attributiond --role node: a compute node's agent. Serves Collect (this node's evidence,
// extracted at the edge) to the head until SIGTERM/SIGINT.
#pragma once

#include <csignal>
#include <memory>
#include <vector>

#include "attributiond/ops/systemd_notify.h"
#include "collectors/collector.h"
#include "common/config.h"
#include "core/result.h"
#include "rules/engine.h"

namespace attrib::node {

// stop_signals: from ops::block_stop_signals(), called before any thread started.
Status run_node_role(const common::Config& config, std::shared_ptr<const rules::RulePack> pack,
                     std::vector<std::unique_ptr<collectors::Collector>> collectors, ops::SystemdNotifier& systemd,
                     const sigset_t& stop_signals);

}  // namespace attrib::node
