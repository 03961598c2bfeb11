// attributiond: the attrib daemon. Role `head` accepts JobEnded messages, attributes
// each job and writes the verdict to the archive and to Slurm. Role `node` runs on each
// compute node and serves Collect: the node's own evidence, extracted at the edge.
#include <csignal>
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "attributiond/head/head_role.h"
#include "attributiond/node/node_role.h"
#include "attributiond/ops/allocator.h"
#include "attributiond/ops/journal_sink.h"
#include "attributiond/ops/stop_signals.h"
#include "attributiond/ops/systemd_notify.h"
#include "collectors/registry.h"
#include "common/command_line.h"
#include "common/config.h"

namespace {

attrib::Result<std::vector<std::unique_ptr<attrib::collectors::Collector>>> make_collectors(
    const attrib::common::Config& config) {
  std::vector<std::unique_ptr<attrib::collectors::Collector>> out;
  for (const auto& c : config.collectors) {
    auto collector = attrib::collectors::create_collector(c.kind, c.options);
    if (!collector)
      return attrib::Error{collector.error().code, config.path + ":" + std::to_string(c.line) + ": collector '" +
                                                       c.kind + "': " + collector.error().message};
    out.push_back(std::move(*collector));
  }
  return out;
}

int fail(const attrib::Error& error) {
  spdlog::critical("{} [{}]", error.message, error.code);
  return 1;
}

// Under systemd with StandardError=journal, log to the journal directly: structured
// fields (job, node, collector) and real priorities instead of text on a stream.
void use_journal_when_stderr_is_journal() {
  if (!attrib::ops::stderr_is_journal()) return;
  auto logger =
      std::make_shared<spdlog::logger>("attributiond", std::make_shared<attrib::ops::JournalSink>("attributiond"));
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
  if (auto done = attrib::common::parse_command_line(app, argc, argv)) return *done;

  if (reference) {
    std::cout << attrib::common::config_reference_markdown() << "\n"
              << attrib::collectors::options_reference_markdown();
    return 0;
  }
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%f %^%l%$ %v");
  use_journal_when_stderr_is_journal();

  auto config = attrib::common::load_config(config_path);
  if (!config) return fail(config.error());
  auto pack = attrib::rules::load_rule_pack(
      {config->rules_pack_dir, {config->rules_site_dirs.begin(), config->rules_site_dirs.end()}});
  if (!pack) return fail(pack.error());
  auto collectors = make_collectors(*config);
  if (!collectors) return fail(collectors.error());
  spdlog::info("rule pack {} {} from {}", attrib::rules::pack_version(**pack), attrib::rules::pack_hash(**pack),
               config->rules_pack_dir);
  if (check_only) {
    std::printf("%s: configuration, rule pack and %zu collector(s) OK\n", config_path.c_str(), collectors->size());
    return 0;
  }
  attrib::ops::keep_freed_memory_for_reuse();
  // Before any thread starts: only the main thread takes SIGTERM/SIGINT.
  sigset_t stop_signals = attrib::ops::block_stop_signals();
  // READY=1/WATCHDOG=1/STOPPING=1 for Type=notify units; no-ops outside systemd.
  attrib::ops::SystemdNotifier systemd;
  auto run = role == "node" ? attrib::node::run_node_role : attrib::head::run_head_role;
  if (auto s = run(*config, *pack, std::move(*collectors), systemd, stop_signals); !s) return fail(s.error());
  return 0;
}
