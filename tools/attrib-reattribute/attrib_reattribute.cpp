// attrib-reattribute: judge archived jobs again under a candidate rule pack and print what
// would change; --apply stores the new verdicts as new versions, and the head rewrites
// their Slurm comments (docs/admin-guide.md, "Upgrading the rule pack").
//
// Reads and writes the head's archive directly (head.database), as an admin on the head
// host: the daemon may run meanwhile (SQLite WAL), and a revised run is picked up by its
// workers within a second for the comment; with the daemon down, when it starts.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "common/command_line.h"
#include "common/config.h"
#include "common/time_spec.h"
#include "core/clock.h"
#include "core/json_text.h"
#include "core/terminal_text.h"
#include "rules/engine.h"
#include "tools/attrib-reattribute/reattribution.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Judge archived jobs again under a candidate rule pack from their raw evidence, and print the verdicts that "
      "change (old -> new domain, rule, confidence) with totals per transition. --apply stores them as new "
      "versions and has the head rewrite their Slurm comments."};
  std::string pack_dir, config_path = "/etc/attrib/attrib.yaml", database, since, domain, cluster;
  std::vector<std::string> site_dirs, jobs;
  bool json = false, apply = false;
  app.add_option("--pack", pack_dir, "the candidate rule pack directory")->required();
  app.add_option("--site", site_dirs, "site rule directories loaded over the pack (repeatable)");
  app.add_option("-c,--config", config_path, "configuration file (for head.database)")->capture_default_str();
  app.add_option("--database", database, "the head's archive (overrides the config's head.database)");
  app.add_option("--since", since, "only runs archived since an age (7d, 24h) or an ISO 8601 date/time");
  app.add_option("--domain", domain, "only runs whose current verdict has this domain (e.g. UNATTRIBUTED)");
  app.add_option("--jobs", jobs, "only these job ids (every run of each; repeatable or comma-separated)")
      ->delimiter(',');
  app.add_option("--cluster", cluster, "only this cluster's jobs");
  app.add_flag("--json", json, "print the report as JSON (schema attrib.reattribution.v1)");
  app.add_flag("--apply", apply,
               "store the changed verdicts as new versions (history keeps every version with its pack's hash) and "
               "queue their comments to be rewritten by the head");
  if (auto done = attrib::common::parse_command_line(app, argc, argv)) return *done;

  if (database.empty()) {
    auto config = attrib::common::load_config(config_path);
    if (!config) {
      std::fprintf(stderr, "attrib-reattribute: %s (or pass --database)\n", config.error().message.c_str());
      return 2;
    }
    database = config->head.database;
  }
  if (!std::filesystem::exists(database)) {
    std::fprintf(stderr, "attrib-reattribute: no archive at %s\n", database.c_str());
    return 2;
  }
  attrib::reattribute::Selection selection;
  selection.domain = domain;
  selection.jobs = jobs;
  selection.cluster = cluster;
  if (!since.empty()) {
    auto parsed = attrib::common::parse_time_spec(since, attrib::wall_clock_us());
    if (!parsed) {
      std::fprintf(stderr, "attrib-reattribute: --since: %s\n", parsed.error().message.c_str());
      return 2;
    }
    selection.since = *parsed;
  }

  attrib::rules::LoadOptions load;
  load.pack_dir = pack_dir;
  for (const auto& s : site_dirs) load.site_dirs.emplace_back(s);
  auto pack = attrib::rules::load_rule_pack(load);
  if (!pack) {
    std::fprintf(stderr, "attrib-reattribute: rule pack: %s %s\n", pack.error().code.c_str(),
                 pack.error().message.c_str());
    return 2;
  }
  auto store = attrib::store::JobStore::open(database, attrib::store::StoreAccess::Tool);
  if (!store) {
    std::fprintf(stderr, "attrib-reattribute: %s\n", store.error().message.c_str());
    return 2;
  }
  auto report = attrib::reattribute::rejudge(**store, selection, *pack);
  if (!report) {
    std::fprintf(stderr, "attrib-reattribute: %s\n", report.error().message.c_str());
    return 2;
  }
  int applied = 0;
  if (apply) {
    auto stored = attrib::reattribute::apply(**store, *report, attrib::wall_clock_us());
    if (!stored) {
      std::fprintf(stderr, "attrib-reattribute: %s\n", stored.error().message.c_str());
      return 2;
    }
    applied = *stored;
  }
  if (json) {
    std::cout << attrib::json_text(attrib::reattribute::report_json(*report)) << "\n";
    return 0;
  }
  std::cout << attrib::terminal_safe(attrib::reattribute::report_text(*report));
  if (apply)
    std::cout << "Applied: " << applied
              << " runs revised; the head rewrites their Slurm comments (attrib-show <job> shows the new verdict).\n";
  else if (!report->transitions.empty())
    std::cout << "Nothing stored: run again with --apply to store these verdicts.\n";
  return 0;
}
