#include "attributiond/head/head_daemon.h"

#include <filesystem>

#include <spdlog/spdlog.h>

#include "slurm/node_drainer.h"
#include "common/spool.h"

namespace attrib::head {
namespace {

// gRPC does not create the socket's directory nor remove a stale socket left by a crash.
Status prepare_listen_address(const std::string& address) {
  static const std::string kUnix = "unix://";
  if (address.rfind(kUnix, 0) != 0) return ok_status();
  std::filesystem::path path = address.substr(kUnix.size());
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return Error{"LISTEN_E_DIR", "cannot create " + path.parent_path().string() + ": " + ec.message()};
  std::filesystem::remove(path, ec);
  return ok_status();
}

// Under MUNGE every call proves its uid, so any local user may connect: attrib-show
// shows ordinary users their own jobs. Without auth the socket keeps the umask's mode.
void open_unix_socket_to_users(const std::string& address, const config::AuthConfig& auth) {
  static const std::string kUnix = "unix://";
  if (!auth.enabled() || address.rfind(kUnix, 0) != 0) return;
  std::error_code ec;
  std::filesystem::permissions(address.substr(kUnix.size()), std::filesystem::perms(0666),
                               std::filesystem::perm_options::replace, ec);
  if (ec) spdlog::warn("cannot open {} to local users: {}", address, ec.message());
}

}  // namespace

HeadDaemon::HeadDaemon(config::Config config, std::unique_ptr<JobStore> store,
                       std::shared_ptr<const rules::RulePack> pack,
                       std::vector<std::unique_ptr<collectors::Collector>> collectors, AccountingFactory accounting)
    : config_(std::move(config)),
      store_(std::move(store)),
      pack_(std::move(pack)),
      collectors_(std::move(collectors)),
      accounting_factory_(std::move(accounting)) {
  if (config_.head.agents.enabled())
    agents_ = std::make_unique<AgentFanout>(config_.head.agents, config_.auth, rules::pack_hash(*pack_));
  if (config_.remediation.mode != "off") set_node_drainer(make_slurm_drainer());
  register_info(registry_, "head", rules::pack_version(*pack_), rules::pack_hash(*pack_));
  register_head_gauges(
      registry_,
      [this]() -> std::optional<double> {
        auto pending = store_->pending_count();
        if (!pending) return std::nullopt;
        return static_cast<double>(*pending);
      },
      [this]() -> std::optional<double> { return static_cast<double>(spool::list(config_.head.spool_dir).size()); });
}

HeadDaemon::~HeadDaemon() { stop(); }

void HeadDaemon::set_node_drainer(std::unique_ptr<NodeDrainer> drainer) {
  remediator_ = std::make_unique<Remediator>(config_.remediation, fleet_policy(config_.fleet), std::move(drainer));
}

Status HeadDaemon::start() {
  auto authenticator = auth::Authenticator::create(config_.auth);
  if (!authenticator) return authenticator.error();
  service_ = std::make_unique<AttributionService>(*store_, config_.cluster, [this] { wake(); }, *authenticator,
                                                  &metrics_, fleet_policy(config_.fleet));
  if (remediator_ && remediator_->enabled())
    spdlog::warn("remediation.mode {}: nodes blamed by trusted verdicts are {} (docs/fleet.md)",
                 config_.remediation.mode, config_.remediation.mode == "drain" ? "drained" : "reported, not drained");
  grpc::ServerBuilder builder;
  std::vector<int> ports(config_.head.listen.size(), 0);
  for (size_t i = 0; i < config_.head.listen.size(); ++i) {
    if (auto s = prepare_listen_address(config_.head.listen[i]); !s) return s;
    builder.AddListeningPort(config_.head.listen[i], grpc::InsecureServerCredentials(), &ports[i]);
  }
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  for (size_t i = 0; i < ports.size(); ++i)
    if (!server_ || ports[i] == 0) return Error{"LISTEN_E_BIND", "cannot listen on " + config_.head.listen[i]};
  for (const auto& address : config_.head.listen) {
    open_unix_socket_to_users(address, config_.auth);
    spdlog::info("listening on {}", address);
  }
  if (!config_.head.metrics_listen.empty()) {
    auto metrics = MetricsServer::start(config_.head.metrics_listen, registry_);
    if (!metrics) return metrics.error();
    metrics_server_ = std::move(*metrics);
    spdlog::info("metrics on http://{}/metrics (port {})", config_.head.metrics_listen, metrics_server_->port());
  }
  if (!config_.head.dashboard_listen.empty()) {
    DashboardOptions options{config_.head.dashboard_listen, config_.head.database,
                             config_.head.dashboard_session_ttl_s, fleet_policy(config_.fleet), *authenticator};
    auto dashboard = DashboardServer::start(options);
    if (!dashboard) return dashboard.error();
    dashboard_server_ = std::move(*dashboard);
    spdlog::info("dashboard on http://{}/ (port {})", config::dashboard_address(config_.head.dashboard_listen),
                 dashboard_server_->port());
  }

  std::error_code ec;
  std::filesystem::create_directories(config_.head.spool_dir, ec);
  drain_spool();  // jobs that ended while we were down come first
  threads_.emplace_back([this] { spool_loop(); });
  for (int i = 0; i < config_.head.workers; ++i) threads_.emplace_back([this] { worker_loop(); });
  return ok_status();
}

void HeadDaemon::stop() {
  if (stopping_.exchange(true)) return;
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  wake();
  for (auto& t : threads_) t.join();
  threads_.clear();
  metrics_server_.reset();  // its gauges read the store
  dashboard_server_.reset();
}

bool HeadDaemon::healthy() { return store_ && store_->pending_count().ok(); }

void HeadDaemon::wake() {
  std::lock_guard lock(mutex_);
  wakeup_.notify_all();
}

void HeadDaemon::drain_spool() {
  for (const auto& file : spool::list(config_.head.spool_dir)) {
    auto message = spool::read(file);
    if (!message) {
      spdlog::error("spool: {}; moved to bad/", message.error().message);
      if (auto s = spool::quarantine(file); !s) spdlog::error("spool: {}", s.error().message);
      metrics_.spool_quarantined.get().inc();
      continue;
    }
    auto queued = accept_job(*store_, *message, config_.cluster, wall_clock_us());
    if (!queued) {
      spdlog::error("spool: job {} not queued, will retry: {}", message->job_id(), queued.error().message);
      continue;  // the file stays until the queue has the job
    }
    spdlog::info("spool: job {} {}", message->job_id(), *queued ? "queued" : "already known");
    (*queued ? metrics_.jobs_accepted : metrics_.jobs_duplicate).labels({hook_label(message->hook()), "spool"}).inc();
    std::error_code ec;
    std::filesystem::remove(file, ec);
    if (*queued) wake();
  }
}

void HeadDaemon::spool_loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wakeup_.wait_for(lock, std::chrono::seconds(config_.head.spool_scan_interval_s));
    if (stopping_) break;
    lock.unlock();
    drain_spool();
    lock.lock();
  }
}

void HeadDaemon::worker_loop() {
  std::unique_ptr<Accounting> accounting = accounting_factory_();
  AttributionContext context{config_.head, config_.cluster, pack_, collectors_, agents_.get(), *store_, &metrics_};
  context.remediator = remediator_.get();
  while (!stopping_) {
    std::optional<QueuedJob> job;
    {
      std::unique_lock lock(mutex_);
      auto next = store_->next_due(wall_clock_us(), busy_);
      if (!next) spdlog::error("queue: {}", next.error().message);
      if (next && next->has_value()) {
        job = std::move(**next);
        busy_.insert(job->key);
      } else {
        // Poll at the scope interval: rescheduled jobs become due without a wake-up.
        wakeup_.wait_for(lock, std::chrono::milliseconds(std::min(config_.head.scope_poll_interval_ms, 1000)));
        continue;
      }
    }
    attribute_once(context, *accounting, *job, wall_clock_us());
    std::lock_guard lock(mutex_);
    busy_.erase(job->key);
  }
}

}  // namespace attrib::head
