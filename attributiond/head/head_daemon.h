// The head role: gRPC server, spool drain and attribution workers over one JobStore.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "attributiond/api/api_http_server.h"
#include "attributiond/api/attributor.h"
#include "attributiond/dashboard/dashboard_server.h"
#include "attributiond/fleet/remediation.h"
#include "attributiond/head/attribution_service.h"
#include "attributiond/ops/daemon_metrics.h"
#include "attributiond/ops/metrics_server.h"
#include "attributiond/pipeline/attribution.h"
#include "attributiond/sinks/verdict_sink.h"
#include "core/unique_fd.h"
#include "slurm/accounting.h"

namespace attrib::head {

using AccountingFactory = std::function<std::unique_ptr<slurm::Accounting>()>;

class HeadDaemon {
 public:
  HeadDaemon(common::Config config, std::unique_ptr<store::JobStore> store, std::shared_ptr<const rules::RulePack> pack,
             std::vector<std::unique_ptr<collectors::Collector>> collectors, AccountingFactory accounting);
  ~HeadDaemon();

  // Binds the listen addresses, drains the spool once and starts the workers.
  Status start();
  // Stops accepting, lets workers finish their current job, joins every thread.
  void stop();
  // Replaces the libslurm drainer of remediation.mode dry-run/drain (tests); before start().
  void set_node_drainer(std::unique_ptr<slurm::NodeDrainer> drainer);

  // For the systemd watchdog: the durable queue answers (a wedged or lost database
  // means no job can be accepted or attributed).
  bool healthy();
  // The port GET /metrics is served on (head.metrics_listen; useful with port 0), or 0.
  int metrics_port() const { return metrics_server_ ? metrics_server_->port() : 0; }
  const ops::MetricsRegistry& metrics_registry() const { return registry_; }
  // The port of the web dashboard (head.dashboard_listen; useful with port 0), or 0.
  int dashboard_port() const { return dashboard_server_ ? dashboard_server_->port() : 0; }
  // The port of the attribution API's POST /v1/attribute (api.listen), or 0.
  int api_port() const { return api_server_ ? api_server_->port() : 0; }

 private:
  void worker_loop();
  void spool_loop();
  bool watch_spool();  // adds the inotify watch on the spool directory; false (logged) when it cannot
  void drain_spool();
  // Queues messages[k] (read from files[k]) in one transaction, then removes the files;
  // clears both.
  void queue_spooled(std::vector<std::filesystem::path>& files, std::vector<v1::JobEnded>& messages);
  void quarantine(const std::filesystem::path& file);  // a spool file never to be queued: bad/
  // Runs task after `first`, then every `interval`, until stop().
  void every(std::chrono::seconds first, std::chrono::seconds interval, const std::function<void()>& task);
  void sweep_loop();
  void prune_loop();
  void wake();

  common::Config config_;
  std::unique_ptr<store::JobStore> store_;
  std::shared_ptr<const rules::RulePack> pack_;
  std::vector<std::unique_ptr<collectors::Collector>> collectors_;
  AccountingFactory accounting_factory_;
  std::unique_ptr<pipeline::AgentFanout> agents_;
  std::unique_ptr<AttributionService> service_;
  std::shared_ptr<const common::Authenticator> authenticator_;
  std::unique_ptr<fleet::Remediator> remediator_;  // null with remediation.mode off
  std::vector<std::unique_ptr<sinks::VerdictSink>> sinks_;  // made by start(); stopped after the workers
  std::unique_ptr<grpc::Server> server_;
  // Declared before the threads and the server that update and read them.
  ops::MetricsRegistry registry_;
  ops::HeadMetrics metrics_{registry_};
  std::unique_ptr<ops::HttpServer> metrics_server_;
  std::unique_ptr<dashboard::DashboardServer> dashboard_server_;
  std::unique_ptr<api::Attributor> attributor_;  // made by start(), after the sinks it delivers to
  std::unique_ptr<api::ApiHttpServer> api_server_;  // api.listen; stopped before the attributor

  std::mutex mutex_;
  std::condition_variable wakeup_;
  std::set<store::JobKey> busy_;
  // Jobs whose next step the queue could not record (Outcome::Held), until when.
  std::map<store::JobKey, TimeUs> held_;
  std::atomic<bool> stopping_{false};
  UniqueFd stop_event_;  // an eventfd: stop() wakes the spool loop out of its poll
  UniqueFd spool_watch_;  // inotify on head.spool_dir, set in start() before the first drain
  bool spool_watching_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace attrib::head
