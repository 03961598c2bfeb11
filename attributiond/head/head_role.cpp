#include "attributiond/head/head_role.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "attributiond/head/head_daemon.h"
#include "attributiond/ops/stop_signals.h"
#include "slurm/slurmdbd_accounting.h"

namespace attrib::head {

Status run_head_role(const common::Config& config, std::shared_ptr<const rules::RulePack> pack,
                     std::vector<std::unique_ptr<collectors::Collector>> collectors, ops::SystemdNotifier& systemd,
                     const sigset_t& stop_signals) {
  auto store = store::JobStore::open(config.head.database);
  if (!store) return store.error();
  // The config table admits only the three names.
  const slurm::CommentField field = slurm::comment_field_named(config.head.comment_field).value();
  HeadDaemon daemon(config, std::move(*store), std::move(pack), std::move(collectors),
                    [field] { return std::make_unique<slurm::SlurmdbdAccounting>(field); });
  if (auto s = daemon.start(); !s) return s;
  spdlog::info("attributiond (head) ready for cluster {}", config.cluster);
  systemd.ready(
      fmt::format("head for cluster {} listening on {}", config.cluster, fmt::join(config.head.listen, ", ")));
  systemd.start_watchdog([&daemon] { return daemon.healthy(); });
  ops::wait_for_stop(stop_signals);
  systemd.stopping("stopping: finishing the jobs in progress");
  daemon.stop();
  return ok_status();
}

}  // namespace attrib::head
