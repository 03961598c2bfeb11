// attrib-replay <bundle>: offline attribution of an evidence bundle (docs/rules.md
// "Evidence bundles"), through exactly the engine path attributiond uses.
// Exit codes: 0 verdict printed, 2 bad bundle, rule pack or arguments.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/command_line.h"
#include "core/verdict_text.h"
#include "rules/evidence/bundle.h"
#include "rules/pack_location.h"

int main(int argc, char** argv) {
  CLI::App app{"attrib-replay: attribute an evidence bundle offline, exactly as attributiond would"};
  std::string bundle_dir;
  std::string pack_dir = attrib::rules::default_pack_dir();
  std::vector<std::string> site_dirs;
  bool json = false;
  attrib::rules::BundleOptions options;
  app.add_option("bundle", bundle_dir, "bundle directory (job.json + <host>/<source>.log|.jsonl)")->required();
  app.add_flag("--json", json, "print verdict v1 JSON (as attrib-show --json) instead of text");
  app.add_option("--pack", pack_dir, "rule pack directory")->capture_default_str();
  app.add_option("--site", site_dirs, "site rule directory (repeatable)");
  app.add_option("--window-lead", options.window_lead_s,
                 "seconds of evidence before the job start (attributiond's head.window_lead_s)")
      ->capture_default_str();
  app.add_option("--window-grace", options.window_grace_s,
                 "seconds of evidence after the job end (head.window_grace_s)")
      ->capture_default_str();
  if (auto done = attrib::common::parse_command_line(app, argc, argv)) return *done == 0 ? 0 : 2;

  attrib::rules::LoadOptions load;
  load.pack_dir = pack_dir;
  for (const auto& s : site_dirs) load.site_dirs.emplace_back(s);
  auto pack = attrib::rules::load_rule_pack(load);
  if (!pack) {
    std::fprintf(stderr, "attrib-replay: rule pack: %s %s\n", pack.error().code.c_str(), pack.error().message.c_str());
    return 2;
  }
  auto verdict = attrib::rules::replay_bundle(bundle_dir, *pack, options);
  if (!verdict) {
    std::fprintf(stderr, "attrib-replay: %s %s\n", verdict.error().code.c_str(), verdict.error().message.c_str());
    return 2;
  }
  if (json) {
    // Compact, as attributiond archives it: the same evidence gives the same bytes.
    std::cout << attrib::to_json(*verdict).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << attrib::render_verdict_text(*verdict);
  }
  return 0;
}
