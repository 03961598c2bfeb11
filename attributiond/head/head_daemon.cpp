#include "attributiond/head/head_daemon.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "attributiond/head/sweep.h"
#include "attributiond/ops/grpc_server.h"
#include "attributiond/store/retention.h"
#include "common/grpc_limits.h"
#include "common/spool.h"
#include "core/clock.h"
#include "core/error_codes.h"
#include "core/failpoint.h"
#include "slurm/node_drainer.h"
#include "slurm/slurmdbd_client.h"

namespace attrib::head {
namespace {

constexpr TimeUs kSecond = 1000000;

// Under MUNGE every call proves its uid, so any local user may connect: attrib-show
// shows ordinary users their own jobs. Without auth the socket keeps the umask's mode.
void open_unix_socket_to_users(const std::string& address, const common::AuthConfig& auth) {
  static const std::string kUnix = "unix://";
  if (!auth.enabled() || address.rfind(kUnix, 0) != 0) return;
  std::error_code ec;
  std::filesystem::permissions(address.substr(kUnix.size()), std::filesystem::perms(0666),
                               std::filesystem::perm_options::replace, ec);
  if (ec) spdlog::warn("cannot open {} to local users: {}", address, ec.message());
}

}  // namespace

HeadDaemon::HeadDaemon(common::Config config, std::unique_ptr<store::JobStore> store,
                       std::shared_ptr<const rules::RulePack> pack,
                       std::vector<std::unique_ptr<collectors::Collector>> collectors, AccountingFactory accounting)
    : config_(std::move(config)),
      store_(std::move(store)),
      pack_(std::move(pack)),
      collectors_(std::move(collectors)),
      accounting_factory_(std::move(accounting)) {
  if (config_.remediation.mode != "off") set_node_drainer(slurm::make_slurm_drainer());
  ops::register_info(registry_, "head", rules::pack_version(*pack_), rules::pack_hash(*pack_));
  ops::register_head_gauges(
      registry_,
      [this]() -> std::optional<double> {
        auto pending = store_->pending_count();
        if (!pending) return std::nullopt;
        return static_cast<double>(*pending);
      },
      [this]() -> std::optional<double> {
        return static_cast<double>(common::list_spool_files(config_.head.spool_dir).size());
      },
      []() -> std::optional<double> { return static_cast<double>(slurm::slurmdbd_requests()); });
}

HeadDaemon::~HeadDaemon() { stop(); }

void HeadDaemon::set_node_drainer(std::unique_ptr<slurm::NodeDrainer> drainer) {
  remediator_ =
      std::make_unique<fleet::Remediator>(config_.remediation, fleet::fleet_policy(config_.fleet), std::move(drainer));
}

Status HeadDaemon::start() {
  auto authenticator = common::Authenticator::create(config_.auth);
  if (!authenticator) return authenticator.error();
  authenticator_ = *authenticator;
  if (config_.head.agents.enabled())
    agents_ = std::make_unique<pipeline::AgentFanout>(config_.head.agents, *authenticator, rules::pack_hash(*pack_));
  service_ = std::make_unique<AttributionService>(
      *store_, config_.cluster, [this] { wake(); }, *authenticator, &metrics_, fleet::fleet_policy(config_.fleet));
  if (remediator_ && remediator_->enabled())
    spdlog::warn("remediation.mode {}: nodes blamed by trusted verdicts are {} (docs/fleet.md)",
                 config_.remediation.mode, config_.remediation.mode == "drain" ? "drained" : "reported, not drained");
  service_->set_retention(config_.archive);
  auto sinks = sinks::make_verdict_sinks(config_.sinks);
  if (!sinks) return sinks.error();
  sinks_ = std::move(*sinks);
  attributor_ = std::make_unique<api::Attributor>(config_, pack_, *store_, &sinks_, &metrics_);
  service_->set_attributor(attributor_.get());
  // An admin's attrib-show --attribute / --backfill: a slurmdbd connection per call.
  service_->set_backfill(
      [this](const std::string& cluster, const std::string& job_id, TimeUs since) -> Result<SweepCount> {
        std::unique_ptr<slurm::Accounting> accounting = accounting_factory_();
        const TimeUs now = wall_clock_us();
        auto attempts = job_id.empty() ? accounting->ended_attempts(cluster, since, now)
                                       : accounting->job_attempts(cluster, job_id);
        if (!attempts) return attempts.error();
        auto count = queue_unknown_attempts(*store_, *attempts, cluster, now);
        if (count && count->queued > 0)
          metrics_.jobs_accepted.labels({ops::hook_label(v1::HOOK_KIND_SWEEP), "backfill"}).inc(count->queued);
        return count;
      });
  auto server = ops::start_grpc_server(config_.head.listen, *service_, common::kMaxGrpcMessageBytes);
  if (!server) return server.error();
  server_ = std::move(*server);
  for (const auto& address : config_.head.listen) {
    open_unix_socket_to_users(address, config_.auth);
    spdlog::info("listening on {}", address);
  }
  if (!config_.head.metrics_listen.empty()) {
    auto metrics = ops::serve_metrics(config_.head.metrics_listen, registry_);
    if (!metrics) return metrics.error();
    metrics_server_ = std::move(*metrics);
    spdlog::info("metrics on http://{}/metrics (port {})", config_.head.metrics_listen, metrics_server_->port());
  }
  if (!config_.head.dashboard_listen.empty()) {
    dashboard::DashboardOptions options{
        config_.head.dashboard_listen,      config_.head.database, config_.head.dashboard_session_ttl_s,
        fleet::fleet_policy(config_.fleet), config_.cluster,       *authenticator};
    auto dashboard = dashboard::DashboardServer::start(options);
    if (!dashboard) return dashboard.error();
    dashboard_server_ = std::move(*dashboard);
    spdlog::info("dashboard on http://{}/ (port {})", common::loopback_default_address(config_.head.dashboard_listen),
                 dashboard_server_->port());
  }
  if (!config_.api.listen.empty()) {
    auto api = api::ApiHttpServer::start(
        {config_.api.listen, config_.api.token_file, config_.api.max_request_bytes, *authenticator}, *attributor_);
    if (!api) return api.error();
    api_server_ = std::move(*api);
    spdlog::info("attribution API on http://{}/v1/attribute (port {})",
                 common::loopback_default_address(config_.api.listen), api_server_->port());
  }

  std::error_code ec;
  std::filesystem::create_directories(config_.head.spool_dir, ec);
  stop_event_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (stop_event_.get() < 0)
    return Error{kSpoolIo, std::string("eventfd for the spool watch: ") + std::strerror(errno)};
  // The watch before the first drain: a file renamed in between raises an event, and
  // nothing waits for the next full scan (spool_loop).
  spool_watch_ = UniqueFd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  spool_watching_ = watch_spool();
  drain_spool();  // jobs that ended while we were down come first
  threads_.emplace_back([this] { spool_loop(); });
  if (config_.head.sweep) threads_.emplace_back([this] { sweep_loop(); });
  threads_.emplace_back([this] { prune_loop(); });
  for (int i = 0; i < config_.head.workers; ++i) threads_.emplace_back([this] { worker_loop(); });
  return ok_status();
}

void HeadDaemon::stop() {
  if (stopping_.exchange(true)) return;
  if (stop_event_.get() >= 0) {
    const uint64_t one = 1;
    (void)!::write(stop_event_.get(), &one, sizeof one);
  }
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  wake();
  for (auto& t : threads_) t.join();
  threads_.clear();
  api_server_.reset();      // before the sinks and the attributor it calls
  sinks_.clear();           // the webhook's sender; what it has not sent stays in its spool
  metrics_server_.reset();  // its gauges read the store
  dashboard_server_.reset();
}

bool HeadDaemon::healthy() { return store_ && store_->pending_count().ok(); }

void HeadDaemon::wake() {
  std::lock_guard lock(mutex_);
  wakeup_.notify_all();
}

void HeadDaemon::drain_spool() {
  // Every file is read and checked first, then up to kSpoolBatch of them are queued in one
  // transaction: a burst of job ends costs one fsync, not one a job. A file is removed only
  // after its batch has committed; until then it is the job's durable copy.
  constexpr size_t kSpoolBatch = 256;
  std::vector<std::filesystem::path> files;
  std::vector<v1::JobEnded> messages;  // checked (checked_hook_report), one a file
  for (const auto& file : common::list_spool_files(config_.head.spool_dir)) {
    // Only root and the SlurmUser hand in jobs: the spool directory is theirs alone, and a
    // file someone else wrote (a directory left open to others) is not taken as a report.
    struct stat owner {};
    if (::stat(file.c_str(), &owner) != 0) continue;  // taken meanwhile (attrib-epilog-send)
    if (authenticator_ && !authenticator_->is_cluster_daemon(owner.st_uid)) {
      spdlog::error("spool: {} was written by uid {}, neither root nor the SlurmUser ({}); moved to bad/",
                    file.string(), owner.st_uid, config_.auth.slurm_user);
      quarantine(file);
      continue;
    }
    auto message = common::read_spool_file(file);
    if (!message) {
      spdlog::error("spool: {}; moved to bad/", message.error().message);
      quarantine(file);
      continue;
    }
    auto checked = checked_hook_report(*message, config_.cluster);
    if (!checked) {
      // Never queueable, however often it is read: kept for the admin, out of the way.
      spdlog::error("spool: job {}: {}; moved to bad/", message->job_id(), checked.error().message);
      quarantine(file);
      continue;
    }
    files.push_back(file);
    messages.push_back(std::move(*checked));
    if (files.size() == kSpoolBatch) queue_spooled(files, messages);
  }
  queue_spooled(files, messages);
}

void HeadDaemon::queue_spooled(std::vector<std::filesystem::path>& files, std::vector<v1::JobEnded>& messages) {
  if (files.empty()) return;
  auto queued = store_->enqueue_all(messages, wall_clock_us());
  if (!queued) {
    // The files stay until the queue has their jobs: read again at the next scan.
    spdlog::error("spool: {} jobs (job {} first) not queued, will retry: {}", files.size(), messages.front().job_id(),
                  queued.error().message);
  } else {
    failpoint("queue.committed");  // queued, the spool files not removed: read again at the restart
    bool any_new = false;
    for (size_t k = 0; k < files.size(); ++k) {
      const v1::JobEnded& message = messages[k];
      spdlog::info("spool: job {}: {} (hook {}, nodes {})", message.job_id(),
                   (*queued)[k] ? "queued" : "already queued", v1::HookKind_Name(message.hook()), message.node_list());
      ((*queued)[k] ? metrics_.jobs_accepted : metrics_.jobs_duplicate)
          .labels({ops::hook_label(message.hook()), "spool"})
          .inc();
      std::error_code ec;
      std::filesystem::remove(files[k], ec);
      any_new = any_new || (*queued)[k];
    }
    if (any_new) wake();
  }
  files.clear();
  messages.clear();
}

void HeadDaemon::quarantine(const std::filesystem::path& file) {
  if (auto s = common::quarantine_spool_file(file); !s) spdlog::error("spool: {}", s.error().message);
  metrics_.spool_quarantined.get().inc();
}

bool HeadDaemon::watch_spool() {
  if (spool_watch_.get() < 0) return false;
  if (::inotify_add_watch(spool_watch_.get(), config_.head.spool_dir.c_str(), IN_MOVED_TO) >= 0) return true;
  spdlog::warn("spool: cannot watch {}: {}; scanned every {} s", config_.head.spool_dir, std::strerror(errno),
               config_.head.spool_scan_interval_s);
  return false;
}

void HeadDaemon::spool_loop() {
  // attrib-epilog (epilog.delivery spool) hands every job over as a file renamed into the
  // spool: picked up as soon as it is renamed into place (inotify IN_MOVED_TO, watched
  // since start(); a file written in place may be half-written), and by a full scan every
  // head.spool_scan_interval_s as well (a file left while the watch could not be set: the
  // directory missing, or the head down).
  const auto interval = std::chrono::seconds(config_.head.spool_scan_interval_s);
  auto next_scan = std::chrono::steady_clock::now() + interval;
  while (!stopping_) {
    bool appeared = false;
    if (!spool_watching_ && spool_watch_.get() >= 0) {
      spool_watching_ = watch_spool();
      appeared = spool_watching_;  // a file renamed in before the watch raised no event: scan now
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_scan - std::chrono::steady_clock::now());
    pollfd fds[2] = {{stop_event_.get(), POLLIN, 0}, {spool_watching_ ? spool_watch_.get() : -1, POLLIN, 0}};
    const int ready = ::poll(fds, 2, appeared ? 0 : static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (stopping_) break;
    if (ready > 0 && (fds[1].revents & POLLIN) != 0) {
      alignas(inotify_event) char events[4096];
      while (::read(spool_watch_.get(), events, sizeof events) > 0) appeared = true;  // which file: the scan finds it
    }
    if (appeared || std::chrono::steady_clock::now() >= next_scan) {
      drain_spool();
      if (!appeared) next_scan = std::chrono::steady_clock::now() + interval;
    }
  }
}

void HeadDaemon::every(std::chrono::seconds first, std::chrono::seconds interval, const std::function<void()>& task) {
  // On its own clock, whatever else wakes the daemon's threads (each queued job does).
  auto next = std::chrono::steady_clock::now() + first;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wakeup_.wait_until(lock, next, [&] { return stopping_.load() || std::chrono::steady_clock::now() >= next; });
    if (stopping_) break;
    next = std::chrono::steady_clock::now() + interval;
    lock.unlock();
    task();
    lock.lock();
  }
}

void HeadDaemon::sweep_loop() {
  // The first sweep looks head.sweep_lookback_s back; each later one goes back over the
  // last head.scope_max_wait_s too, because slurmdbd records a job's end some time after
  // its end time (a row that does not show its end yet is not listed, and found again
  // then; one that shows it is listed, final or not, and the worker waits for the whole
  // row; the archive makes re-listing harmless). A failed sweep does not advance. Only
  // attempts that ended at least head.sweep_settle_s ago: their hooks' reports come first.
  std::unique_ptr<slurm::Accounting> accounting = accounting_factory_();
  TimeUs since = wall_clock_us() - static_cast<TimeUs>(config_.head.sweep_lookback_s) * kSecond;
  const std::chrono::seconds interval(config_.head.sweep_interval_s);
  every(interval, interval, [&] {
    const TimeUs now = wall_clock_us();
    const TimeUs until = now - static_cast<TimeUs>(config_.head.sweep_settle_s) * kSecond;
    if (until <= since) return;
    auto queued = sweep_once(*store_, *accounting, config_.cluster, since, until, now);
    if (!queued) {
      spdlog::warn("sweep of slurmdbd failed, retried next time: {}", queued.error().message);
      return;
    }
    since = std::max(since, until - static_cast<TimeUs>(config_.head.scope_max_wait_s) * kSecond);
    if (queued->queued > 0) {
      metrics_.jobs_accepted.labels({ops::hook_label(v1::HOOK_KIND_SWEEP), "sweep"}).inc(queued->queued);
      wake();
    }
  });
}

void HeadDaemon::prune_loop() {
  // Once at start, then every archive.prune_interval_s.
  every(std::chrono::seconds(0), std::chrono::seconds(config_.archive.prune_interval_s), [&] {
    const TimeUs now = wall_clock_us();
    auto pruned = store::prune_archive(*store_, store::retention_policy(config_.archive, config_.head, now), now);
    if (!pruned) {
      spdlog::warn("archive retention failed, tried again next time: {}", pruned.error().message);
      return;
    }
    metrics_.archive_pruned.labels({"evidence"}).inc(static_cast<double>(pruned->evidence_pruned));
    metrics_.archive_pruned.labels({"runs"}).inc(static_cast<double>(pruned->runs_pruned));
    metrics_.archive_used_bytes.get().set(static_cast<double>(pruned->bytes_after));
    if (pruned->evidence_pruned + pruned->runs_pruned > 0)
      spdlog::info("archive retention: raw evidence of {} runs and {} whole runs pruned; {} -> {} bytes in use",
                   pruned->evidence_pruned, pruned->runs_pruned, pruned->bytes_before, pruned->bytes_after);
    if (pruned->over_cap)
      spdlog::warn("archive retention: {} bytes in use, over archive.max_bytes {}, and nothing more may go",
                   pruned->bytes_after, config_.archive.max_bytes);
  });
}

void HeadDaemon::worker_loop() {
  std::unique_ptr<slurm::Accounting> accounting = accounting_factory_();
  pipeline::AttributionContext context{config_.head,  config_.cluster, pack_,    collectors_,
                                       agents_.get(), *store_,         &metrics_};
  context.remediator = remediator_.get();
  context.sinks = &sinks_;
  context.fleet = &config_.fleet;
  // Comments of judged jobs wait here to be written to slurmdbd together, in one
  // transaction read back in one request (write_staged_comments): a burst costs slurmdbd
  // about one request a job for its comments instead of four. They are written as soon as
  // no other job is due, so a lone job waits for nothing; in a burst, when kBatch are
  // waiting or the first has waited kHold. The jobs stay busy (no other worker takes
  // them) until then.
  constexpr size_t kBatch = 64;
  constexpr TimeUs kHold = kSecond / 2;
  std::vector<pipeline::StagedComment> staged;
  // Releases the jobs an attempt or a batch is through with (a staged one stays busy), and
  // holds back those the queue could not record.
  auto settle = [&](const std::vector<std::pair<store::JobKey, pipeline::Outcome>>& outcomes) {
    std::lock_guard lock(mutex_);
    for (const auto& [key, outcome] : outcomes) {
      if (outcome == pipeline::Outcome::Staged) continue;
      busy_.erase(key);
      if (outcome == pipeline::Outcome::Held)
        held_[key] = wall_clock_us() + static_cast<TimeUs>(config_.head.retry_backoff_s) * kSecond;
    }
  };
  auto write_staged = [&] {
    if (staged.empty()) return;
    std::vector<pipeline::StagedComment> batch = std::move(staged);
    staged.clear();
    std::vector<std::pair<store::JobKey, pipeline::Outcome>> outcomes;
    auto failed = [&](const char* what) {  // as an attempt's exception, for each job of the batch
      spdlog::error("writing {} comments failed with an exception: {}", batch.size(), what);
      outcomes.clear();
      for (const auto& waiting : batch)
        outcomes.emplace_back(waiting.job.key,
                              pipeline::retry_after_failure(context, waiting.job, wall_clock_us(), "exception", what));
      accounting = accounting_factory_();  // its connection may be mid-request
    };
    try {
      outcomes = pipeline::write_staged_comments(context, *accounting, batch, wall_clock_us());
    } catch (const std::exception& e) {
      failed(e.what());
    } catch (...) {
      failed("unknown exception");
    }
    settle(outcomes);
  };
  while (!stopping_) {
    std::optional<store::QueuedJob> job;
    {
      std::unique_lock lock(mutex_);
      const TimeUs now = wall_clock_us();
      std::erase_if(held_, [&](const auto& entry) { return entry.second <= now; });
      std::set<store::JobKey> skipped = busy_;
      for (const auto& [key, until] : held_) skipped.insert(key);
      auto next = store_->next_due(now, skipped);
      if (!next) spdlog::error("queue: {}", next.error().message);
      if (next && next->has_value()) {
        job = std::move(**next);
        busy_.insert(job->key);
      } else if (staged.empty()) {
        // Poll at the scope interval: rescheduled jobs become due without a wake-up.
        wakeup_.wait_for(lock, std::chrono::milliseconds(std::min(config_.head.scope_poll_interval_ms, 1000)));
        continue;
      }
    }
    if (!job) {  // nothing else due: the waiting comments go now
      write_staged();
      continue;
    }
    // One job never takes the worker (and the daemon) down: whatever it throws is that
    // attempt's failure, retried with backoff and given up after head.max_failures.
    pipeline::Outcome outcome = pipeline::Outcome::Done;
    try {
      outcome = pipeline::attribute_once(context, *accounting, *job, wall_clock_us(), &staged);
    } catch (const std::exception& e) {
      spdlog::error("job {}: attempt failed with an exception: {}", job->key.job_id, e.what());
      outcome = pipeline::retry_after_failure(context, *job, wall_clock_us(), "exception", e.what());
      accounting = accounting_factory_();  // its connection may be mid-request
    } catch (...) {
      spdlog::error("job {}: attempt failed with an unknown exception", job->key.job_id);
      outcome = pipeline::retry_after_failure(context, *job, wall_clock_us(), "exception", "unknown exception");
      accounting = accounting_factory_();
    }
    settle({{job->key, outcome}});
    if (!staged.empty() && (staged.size() >= kBatch || wall_clock_us() - staged.front().staged_at >= kHold))
      write_staged();
  }
  write_staged();  // a stopping head still writes what it judged
}

}  // namespace attrib::head
