#include "attributiond/node/node_role.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "attributiond/node/node_collect_service.h"
#include "attributiond/ops/daemon_metrics.h"
#include "attributiond/ops/grpc_server.h"
#include "attributiond/ops/metrics_server.h"
#include "attributiond/ops/stop_signals.h"
#include "common/grpc_limits.h"
#include "core/hostname.h"

namespace attrib::node {

Status run_node_role(const common::Config& config, std::shared_ptr<const rules::RulePack> pack,
                     std::vector<std::unique_ptr<collectors::Collector>> collectors, ops::SystemdNotifier& systemd,
                     const sigset_t& stop_signals) {
  std::string node = config.node.name.empty() ? short_hostname() : config.node.name;
  ops::MetricsRegistry registry;
  ops::register_info(registry, "node", rules::pack_version(*pack), rules::pack_hash(*pack));
  ops::NodeMetrics metrics(registry);
  auto authenticator = common::Authenticator::create(config.auth);
  if (!authenticator) return authenticator.error();
  NodeCollectService service(node, std::move(pack), std::move(collectors), *authenticator, &metrics);
  auto server = ops::start_grpc_server(config.node.listen, service, common::kMaxGrpcMessageBytes);
  if (!server) return server.error();
  std::unique_ptr<ops::HttpServer> metrics_server;
  if (!config.node.metrics_listen.empty()) {
    auto started = ops::serve_metrics(config.node.metrics_listen, registry);
    if (!started) return started.error();
    metrics_server = std::move(*started);
    spdlog::info("metrics on http://{}/metrics", config.node.metrics_listen);
  }
  spdlog::info("attributiond (node agent for {}) listening on {}", node, fmt::join(config.node.listen, ", "));
  systemd.ready(fmt::format("node agent for {} listening on {}", node, fmt::join(config.node.listen, ", ")));
  // No queue or database to probe here: the pings only prove the process still runs
  // threads (a deadlocked or stopped agent is restarted).
  systemd.start_watchdog([] { return true; });
  ops::wait_for_stop(stop_signals);
  systemd.stopping("stopping");
  (*server)->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return ok_status();
}

}  // namespace attrib::node
