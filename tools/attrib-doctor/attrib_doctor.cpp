// attrib-doctor: tells an admin whether attribution will work on this cluster and what to
// fix, one line per check (docs/admin-guide.md, "Troubleshooting"). Run on the head as root
// or the SlurmUser. Exit 0 when no check FAILs, 1 otherwise, 2 for bad usage.
#include <cstdio>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "common/command_line.h"
#include "common/config.h"
#include "core/clock.h"
#include "core/json_text.h"
#include "tools/attrib-doctor/agent_checks.h"
#include "tools/attrib-doctor/findings.h"
#include "tools/attrib-doctor/head_checks.h"
#include "tools/attrib-doctor/job_walk.h"
#include "tools/attrib-doctor/slurm_checks.h"
#include "tools/attrib-doctor/source_checks.h"
#include "tools/attrib-doctor/spool_checks.h"

namespace {

struct Options {
  std::string config_path = "/etc/attrib/attrib.yaml";
  std::optional<std::string> node;
  std::optional<std::string> job;
  bool json = false;
  bool send_test = false;
};

attrib::doctor::Findings run_checks(const Options& options) {
  using namespace attrib::doctor;
  Findings out;
  auto config = attrib::common::load_config(options.config_path);
  if (!config) {
    out.fail("config", options.config_path, config.error().message, "fix the file (attributiond --check tells all)");
    return out;
  }
  const attrib::TimeUs now = attrib::wall_clock_us();
  out.ok("config", config->path, "loads; cluster " + config->cluster);
  const std::optional<Identity> slurm_user = check_slurm(*config, out);
  check_spool(*config, slurm_user, now, out);
  check_munge(*config, out);
  check_head_and_archive(*config, now, out);
  check_agents(*config, options.node, out);
  check_metric_sources(*config, options.node.value_or("localhost"), now, out);
  check_webhook(*config, options.send_test, out);
  if (options.job) walk_job(*config, *options.job, out);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attrib-doctor: checks that attribution will work here, and says what to fix"};
  Options options;
  app.add_option("-c,--config", options.config_path, "attrib's configuration file")->capture_default_str();
  app.add_option("--node", options.node, "check this compute node's agent only (default: every configured agent)");
  app.add_option("--job", options.job, "walk this job through every stage and say where it stopped");
  app.add_flag("--json", options.json, "print the findings as JSON (for monitoring)");
  app.add_flag("--send-test", options.send_test, "POST one test message to the verdict webhook");
  if (auto done = attrib::common::parse_command_line(app, argc, argv)) return *done;
  // The findings are the output; the libraries' own progress lines would only bury them
  // (their warnings and errors still go to stderr).
  spdlog::set_level(spdlog::level::warn);

  const attrib::doctor::Findings findings = run_checks(options);
  if (options.json)
    std::printf("%s\n", attrib::json_text(findings.json()).c_str());
  else
    std::fputs(findings.text().c_str(), stdout);
  return findings.failed() ? 1 : 0;
}
