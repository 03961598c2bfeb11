// attributiond: the attrib daemon. Role `head` accepts JobEnded messages, attributes
// each job and writes the verdict to the archive and to Slurm. Role `node` runs on each
// compute node and serves Collect: the node's own evidence, extracted at the edge.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "collectors/registry.h"
#include "common/config.h"
#include "attributiond/ops/daemon_metrics.h"
#include "attributiond/head/head_daemon.h"
#include "attributiond/ops/journal_sink.h"
#include "attributiond/ops/metrics_server.h"
#include "attributiond/node/node_collect_service.h"
#include "slurm/slurmdbd_accounting.h"
#include "attributiond/ops/systemd_notify.h"

namespace {

attrib::Result<std::vector<std::unique_ptr<attrib::collectors::Collector>>> make_collectors(
    const attrib::config::Config& config) {
  std::vector<std::unique_ptr<attrib::collectors::Collector>> out;
  for (const auto& c : config.collectors) {
    auto collector = attrib::collectors::create_collector(c.kind, c.options);
    if (!collector)
      return attrib::Error{collector.error().code,
                           config.path + ":" + std::to_string(c.line) + ": collector '" + c.kind + "': " +
                               collector.error().message};
    out.push_back(std::move(*collector));
  }
  return out;
}

int fail(const attrib::Error& error) {
  spdlog::critical("{} [{}]", error.message, error.code);
  return 1;
}

std::string short_hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  std::string host(name);
  return host.substr(0, host.find('.'));
}

// Blocks SIGTERM/SIGINT in every thread started after this; wait_for_stop() takes them.
sigset_t block_stop_signals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

void wait_for_stop(const sigset_t& stop_signals) {
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  spdlog::info("signal {}: stopping", signal_number);
}

int run_node_agent(const attrib::config::Config& config, std::shared_ptr<const attrib::rules::RulePack> pack,
                   std::vector<std::unique_ptr<attrib::collectors::Collector>> collectors,
                   attrib::head::SystemdNotifier& systemd) {
  std::string node = config.node.name.empty() ? short_hostname() : config.node.name;
  sigset_t stop_signals = block_stop_signals();
  attrib::metrics::Registry registry;
  attrib::head::register_info(registry, "node", attrib::rules::pack_version(*pack), attrib::rules::pack_hash(*pack));
  attrib::head::NodeMetrics metrics(registry);
  auto authenticator = attrib::auth::Authenticator::create(config.auth);
  if (!authenticator) return fail(authenticator.error());
  attrib::head::NodeCollectService service(node, std::move(pack), std::move(collectors), *authenticator, &metrics);
  grpc::ServerBuilder builder;
  std::vector<int> ports(config.node.listen.size(), 0);
  for (size_t i = 0; i < ports.size(); ++i)
    builder.AddListeningPort(config.node.listen[i], grpc::InsecureServerCredentials(), &ports[i]);
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  for (size_t i = 0; i < ports.size(); ++i)
    if (!server || ports[i] == 0)
      return fail({"LISTEN_E_BIND", "cannot listen on " + config.node.listen[i]});
  std::unique_ptr<attrib::head::MetricsServer> metrics_server;
  if (!config.node.metrics_listen.empty()) {
    auto started = attrib::head::MetricsServer::start(config.node.metrics_listen, registry);
    if (!started) return fail(started.error());
    metrics_server = std::move(*started);
    spdlog::info("metrics on http://{}/metrics", config.node.metrics_listen);
  }
  spdlog::info("attributiond (node agent for {}) listening on {}", node, fmt::join(config.node.listen, ", "));
  systemd.ready(fmt::format("node agent for {} listening on {}", node, fmt::join(config.node.listen, ", ")));
  // No queue or database to probe here: the pings only prove the process still runs
  // threads (a deadlocked or stopped agent is restarted).
  systemd.start_watchdog([] { return true; });
  wait_for_stop(stop_signals);
  systemd.stopping("stopping");
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}

// Under systemd with StandardError=journal, log to the journal directly: structured
// fields (job, node, collector) and real priorities instead of text on a stream.
void use_journal_when_stderr_is_journal() {
  if (!attrib::logging::stderr_is_journal()) return;
  auto logger = std::make_shared<spdlog::logger>(
      "attributiond", std::make_shared<attrib::logging::JournalSink>("attributiond"));
  logger->set_level(spdlog::get_level());
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attributiond: failure attribution for Slurm GPU clusters"};
  std::string config_path = "/etc/attrib/attrib.yaml";
  std::string role = "head";
  bool check_only = false;
  bool reference = false;
  app.add_option("-c,--config", config_path, "configuration file")->capture_default_str();
  app.add_option("--role", role, "head: attribute jobs; node: serve this node's evidence to the head")
      ->check(CLI::IsMember({"head", "node"}))
      ->capture_default_str();
  app.add_flag("--check", check_only, "validate the configuration, rule pack and collectors, then exit");
  app.add_flag("--config-reference", reference, "print every configuration key as Markdown and exit");
  // The collector registry's tables, so --help names every source and its options.
  std::string footer = "\nCollectors (the `collectors` key; full tables: --config-reference):\n";
  for (const auto& kind : attrib::collectors::collector_kinds()) {
    footer += "  " + kind.name + ": " + kind.summary + "\n    options:";
    for (const auto& option : kind.options) footer += " " + option.key;
    footer += "\n";
  }
  app.footer(footer);
  CLI11_PARSE(app, argc, argv);

  if (reference) {
    std::cout << attrib::config::reference_markdown() << "\n" << attrib::collectors::options_reference_markdown();
    return 0;
  }
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%f %^%l%$ %v");
  use_journal_when_stderr_is_journal();

  auto config = attrib::config::load(config_path);
  if (!config) return fail(config.error());
  auto pack = attrib::rules::load_rule_pack({config->rules_pack_dir, {config->rules_site_dirs.begin(),
                                                                        config->rules_site_dirs.end()}});
  if (!pack) return fail(pack.error());
  auto collectors = make_collectors(*config);
  if (!collectors) return fail(collectors.error());
  spdlog::info("rule pack {} {} from {}", attrib::rules::pack_version(**pack), attrib::rules::pack_hash(**pack),
               config->rules_pack_dir);
  if (check_only) {
    std::printf("%s: configuration, rule pack and %zu collector(s) OK\n", config_path.c_str(), collectors->size());
    return 0;
  }
  // READY=1/WATCHDOG=1/STOPPING=1 for Type=notify units; no-ops outside systemd.
  attrib::head::SystemdNotifier systemd;
  if (role == "node") return run_node_agent(*config, *pack, std::move(*collectors), systemd);

  auto store = attrib::head::JobStore::open(config->head.database);
  if (!store) return fail(store.error());

  sigset_t stop_signals = block_stop_signals();

  attrib::head::HeadDaemon daemon(*config, std::move(*store), *pack, std::move(*collectors),
                                  [] { return std::make_unique<attrib::head::SlurmdbdAccounting>(); });
  if (auto s = daemon.start(); !s) return fail(s.error());
  spdlog::info("attributiond (head) ready for cluster {}", config->cluster);
  systemd.ready(fmt::format("head for cluster {} listening on {}", config->cluster,
                            fmt::join(config->head.listen, ", ")));
  systemd.start_watchdog([&daemon] { return daemon.healthy(); });

  wait_for_stop(stop_signals);
  systemd.stopping("stopping: finishing the jobs in progress");
  daemon.stop();
  return 0;
}
