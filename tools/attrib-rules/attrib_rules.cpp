// attrib-rules: check a rule pack and its golden fixtures; export its patterns.
//   validate         load the pack (+ site dirs): schema, regexes, fields, references, examples
//   test             validate, then replay every golden fixture and compare with expected.json
//   export-patterns  one extraction regex per line (RE2 syntax; ripgrep reads it with -f)
//   eval             accuracy on a corpus of real incidents, next to a grep baseline
//   kinds            every event kind with its role: root cause, symptom, benign
//   catalog          per emitter (NCCL, rdma-core, ...): its source's failure messages the pack knows
//   mine             templates of what no rule explains in the archive, with rule skeletons
// Exit codes: 0 ok, 1 a check failed, 2 usage.
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include <CLI/CLI.hpp>

#include "rules/evidence/corpus_eval.h"
#include "rules/evidence/emitter_catalog.h"
#include "rules/engine.h"
#include "rules/evidence/golden.h"
#include "rules/pack_location.h"
#include "rules/pack_patterns.h"
#include "common/command_line.h"
#include "common/config.h"
#include "common/time_spec.h"
#include "core/clock.h"
#include "tools/attrib-rules/mine.h"

namespace {

attrib::Result<std::shared_ptr<const attrib::rules::RulePack>> load(const std::string& pack_dir,
                                                                    const std::vector<std::string>& site_dirs) {
  attrib::rules::LoadOptions options;
  options.pack_dir = pack_dir;
  for (const auto& s : site_dirs) options.site_dirs.emplace_back(s);
  return attrib::rules::load_rule_pack(options);
}

void print_stats(const attrib::rules::RulePack& pack) {
  const auto stats = attrib::rules::pack_stats(pack);
  std::printf("pack %s %s %s: %zu files, %zu extraction rules, %zu correlation rules, %zu examples passed\n",
              stats.name.c_str(), stats.version.c_str(), attrib::rules::pack_hash(pack).c_str(), stats.files.size(),
              stats.extraction_rules, stats.correlation_rules, stats.examples);
  std::printf("candidate scan: %zu rules by prefilter literal, %zu by regex, %zu on every line; %zu block rules\n",
              stats.scan_literal_rules, stats.scan_regex_rules, stats.scan_fallbacks.size(), stats.block_rules);
  // Not an error: such a rule works, RE2 just runs on every line of its sources.
  for (const auto& note : stats.scan_fallbacks) std::printf("  every line: %s\n", note.c_str());
}

int run_tests(const std::shared_ptr<const attrib::rules::RulePack>& pack, const std::string& fixtures, bool verbose) {
  if (fixtures.empty()) return 0;
  size_t passed = 0, failed = 0, pending = 0;
  const auto dirs = attrib::rules::list_golden_fixtures(fixtures);
  if (dirs.empty()) {
    std::fprintf(stderr, "attrib-rules: no fixture (a directory with expected.json) under %s\n", fixtures.c_str());
    return 1;
  }
  for (const auto& dir : dirs) {
    auto result = attrib::rules::check_golden_fixture(dir, pack);
    const std::string name = dir.filename().string();
    if (!result) {
      std::printf("ERROR   %s: %s %s\n", name.c_str(), result.error().code.c_str(), result.error().message.c_str());
      ++failed;
      continue;
    }
    const bool ok = result->mismatches.empty();
    if (!result->pending.empty()) {
      if (ok) {
        std::printf("FIXED   %s: passes now; remove \"pending\" from its expected.json\n", name.c_str());
        ++failed;
      } else {
        std::printf("PENDING %s: %s\n", name.c_str(), result->pending.c_str());
        ++pending;
      }
    } else if (ok) {
      std::printf("PASS    %s\n", name.c_str());
      ++passed;
    } else {
      std::printf("FAIL    %s\n", name.c_str());
      ++failed;
    }
    if (!ok && (result->pending.empty() || verbose))
      for (const auto& m : result->mismatches) std::printf("          %s\n", m.c_str());
  }
  std::printf("fixtures: %zu passed, %zu failed, %zu pending\n", passed, failed, pending);
  return failed == 0 ? 0 : 1;
}

std::string percent(size_t part, size_t whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / whole);
  return text;
}

std::string verdict_cell(const attrib::Verdict& v) {
  return v.domain + (v.confidence.empty() || v.confidence == "high" ? "" : " (" + v.confidence + ")");
}

std::string acceptable_cell(const attrib::rules::IncidentTruth& t) {
  std::string out;
  for (const auto& a : t.acceptable) out += (out.empty() ? "" : ", ") + a;
  return out.empty() ? "-" : out;
}

// Column heads short enough for a terminal; the legend says what each stands for.
std::string short_domain(const std::string& domain) {
  static const std::map<std::string, std::string> names = {
      {"AMBIGUOUS", "AMB"},     {"APPLICATION", "APP"}, {"CONFIGURATION", "CONF"}, {"GPU_DRIVER", "DRV"},
      {"GPU_HARDWARE", "GPU"},  {"HOST_HARDWARE", "HHW"}, {"HOST_OS", "HOS"},      {"NETWORK", "NET"},
      {"NVLINK_FABRIC", "NVL"}, {"SCHEDULER", "SCHED"}, {"STORAGE", "STOR"},       {"UNATTRIBUTED", "UNATT"},
      {"NONE", "NONE"}};
  const auto it = names.find(domain);
  return it == names.end() ? domain : it->second;
}

// Rows: the truth's domain; columns: the verdict's. Only domains that occur are shown.
void print_confusion(const attrib::rules::EvalSummary& s) {
  std::set<std::string> columns;
  for (const auto& [truth, row] : s.confusion)
    for (const auto& [verdict, n] : row) columns.insert(verdict);
  std::printf("confusion (rows: truth, columns: verdict):\n%-15s", "");
  for (const auto& c : columns) std::printf(" %5s", short_domain(c).c_str());
  std::printf("\n");
  for (const auto& [truth, row] : s.confusion) {
    std::printf("%-15s", truth.c_str());
    for (const auto& c : columns) {
      const auto it = row.find(c);
      if (it == row.end()) {
        std::printf(" %5s", ".");
      } else {
        std::printf(" %5zu", it->second);
      }
    }
    std::printf("\n");
  }
  std::string legend;
  for (const auto& c : columns) legend += (legend.empty() ? "" : ", ") + short_domain(c) + " " + c;
  std::printf("(%s)\n", legend.c_str());
}

int run_eval(const std::shared_ptr<const attrib::rules::RulePack>& pack, const std::string& corpus,
             const std::string& floor_file, bool markdown, bool verbose) {
  namespace r = attrib::rules;
  const auto dirs = r::list_incidents(corpus);
  if (dirs.empty()) {
    std::fprintf(stderr, "attrib-rules: no incident (a directory with incident.json) under %s\n", corpus.c_str());
    return 1;
  }
  std::vector<r::IncidentResult> results;
  size_t broken = 0;
  for (const auto& dir : dirs) {
    auto result = r::evaluate_incident(dir, pack);
    if (!result) {
      std::printf("ERROR %s: %s %s\n", dir.filename().c_str(), result.error().code.c_str(),
                  result.error().message.c_str());
      ++broken;
      continue;
    }
    results.push_back(std::move(*result));
  }
  if (markdown) {
    std::printf("| incident | truth | confidence | acceptable | attrib | grep | source |\n|---|---|---|---|---|---|---|\n");
    for (const auto& x : results)
      std::printf("| `%s` | %s | %s | %s | %s%s | %s%s | %s |\n", x.name.c_str(), x.truth.domain.c_str(),
                  x.truth.confidence.c_str(), acceptable_cell(x.truth).c_str(), verdict_cell(x.verdict).c_str(),
                  r::verdict_correct(x) ? "" : " (miss)", x.baseline_domain.c_str(),
                  r::baseline_correct(x) ? "" : " (miss)", x.truth.source.c_str());
    return broken == 0 ? 0 : 1;
  }
  const auto s = r::summarize(results);
  std::printf("corpus %s: %zu incidents\n", corpus.c_str(), s.incidents);
  std::printf("attrib: correct %zu (%s), confidently wrong %zu (%s), AMBIGUOUS %zu (%s), UNATTRIBUTED %zu (%s), "
              "low confidence %zu; culprit node named %zu of %zu\n",
              s.correct, percent(s.correct, s.incidents).c_str(), s.confidently_wrong,
              percent(s.confidently_wrong, s.incidents).c_str(), s.ambiguous, percent(s.ambiguous, s.incidents).c_str(),
              s.unattributed, percent(s.unattributed, s.incidents).c_str(), s.low, s.node_right, s.node_known);
  std::string levels;
  for (const auto& [level, counts] : s.by_confidence)
    levels += (levels.empty() ? "" : ", ") + level + " " + std::to_string(counts.second) + " of " +
              std::to_string(counts.first) + " right";
  std::printf("by confidence: %s\n", levels.c_str());
  if (s.held_out > 0)
    std::printf("held out (never used to write rules): correct %zu of %zu, confidently wrong %zu; grep correct %zu\n",
                s.held_out_correct, s.held_out, s.held_out_confidently_wrong, s.held_out_baseline_correct);
  std::printf("grep:   correct %zu (%s), wrong %zu (%s; it is never unsure)\n", s.baseline_correct,
              percent(s.baseline_correct, s.incidents).c_str(), s.baseline_wrong,
              percent(s.baseline_wrong, s.incidents).c_str());
  print_confusion(s);
  for (const auto& x : results) {
    const bool right = r::verdict_correct(x);
    if (right && !verbose) continue;
    std::printf("%-5s %s: truth %s%s, attrib %s%s, grep %s\n", right ? "OK" : (r::confidently_wrong(x) ? "WRONG" : "MISS"),
                x.name.c_str(), x.truth.domain.c_str(),
                x.truth.acceptable.empty() ? "" : (" (or " + acceptable_cell(x.truth) + ")").c_str(),
                verdict_cell(x.verdict).c_str(),
                x.verdict.root_cause ? (" by " + x.verdict.root_cause->rule).c_str() : "", x.baseline_domain.c_str());
  }
  int rc = broken == 0 ? 0 : 1;
  if (!floor_file.empty()) {
    auto floor = r::read_eval_floor(floor_file);
    if (!floor) {
      std::fprintf(stderr, "attrib-rules: %s %s\n", floor.error().code.c_str(), floor.error().message.c_str());
      return 1;
    }
    for (const auto& failure : r::check_eval_floor(s, *floor)) {
      std::printf("BELOW FLOOR: %s (%s)\n", failure.c_str(), floor_file.c_str());
      rc = 1;
    }
    if (rc == 0 && (s.correct > floor->correct_at_least || s.confidently_wrong < floor->confidently_wrong_at_most))
      std::printf("better than the floor: raise it in %s to %zu correct, %zu confidently wrong\n", floor_file.c_str(),
                  s.correct, s.confidently_wrong);
  }
  return rc;
}

// Coverage per emitter (rules/emitter_catalog.h): fails when a catalog names an extractor
// the pack does not have, so the figures cannot claim what the pack does not do.
int run_catalog(const attrib::rules::RulePack& pack, const std::string& pack_dir, bool details) {
  namespace r = attrib::rules;
  auto catalogs = r::read_emitter_catalogs(pack_dir);
  if (!catalogs) {
    std::fprintf(stderr, "attrib-rules: %s %s\n", catalogs.error().code.c_str(), catalogs.error().message.c_str());
    return 1;
  }
  if (catalogs->empty()) {
    std::fprintf(stderr, "attrib-rules: no emitter catalog under %s/data/emitters\n", pack_dir.c_str());
    return 1;
  }
  std::printf("%-14s %-34s %8s %6s %8s %5s %9s\n", "emitter", "read at", "messages", "known", "left out", "todo",
              "families");
  int rc = 0;
  for (const auto& catalog : *catalogs) {
    const auto c = r::emitter_coverage(catalog, pack);
    constexpr std::string_view kGithub = "https://github.com/";
    std::string repo = c.repository;
    if (repo.rfind(kGithub, 0) == 0) repo = repo.substr(kGithub.size());
    std::printf("%-14s %-34s %8zu %6zu %8zu %5zu %4zu of %zu known\n", c.emitter.c_str(),
                (repo + "@" + c.tag).c_str(), c.messages, c.known, c.left_out, c.todo, c.families_known, c.families);
    if (details) {
      for (const auto& [reason, count] : c.left_out_reasons) std::printf("    left out %zu: %s\n", count, reason.c_str());
      std::string families;
      for (const auto& f : c.todo_families) families += (families.empty() ? "" : ", ") + f;
      if (!families.empty()) std::printf("    families no rule knows yet: %s\n", families.c_str());
    }
    for (const auto& missing : c.missing_extractors) {
      std::printf("    NO SUCH EXTRACTOR: %s\n", missing.c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace

// ripgrep (-f) and grep compile all patterns into one regex, where a capture name used by
// two rules (`(?P<pci>`) is an error: export plain groups, which match the same lines.
static std::string unnamed_groups(const std::string& regex) {
  std::string out;
  out.reserve(regex.size());
  for (size_t i = 0; i < regex.size(); ++i) {
    size_t backslashes = 0;
    for (size_t k = i; k > 0 && regex[k - 1] == '\\'; --k) ++backslashes;
    if (backslashes % 2 == 0 && regex.compare(i, 4, "(?P<") == 0) {
      const size_t close = regex.find('>', i + 4);
      if (close != std::string::npos) {
        out += '(';
        i = close;
        continue;
      }
    }
    out += regex[i];
  }
  return out;
}

int main(int argc, char** argv) {
  CLI::App app{"attrib-rules: validate and test a rule pack"};
  app.require_subcommand(1);
  std::string pack_dir = attrib::rules::default_pack_dir();
  std::vector<std::string> site_dirs;
  std::string fixtures;
  bool verbose = false;
  const auto pack_options = [&](CLI::App* sub) {
    sub->add_option("--pack", pack_dir, "rule pack directory")->capture_default_str();
    sub->add_option("--site", site_dirs, "site rule directory (repeatable)");
  };
  CLI::App* validate = app.add_subcommand("validate", "load the pack: schema, regexes, fields, references, examples");
  pack_options(validate);
  CLI::App* test = app.add_subcommand("test", "validate, then replay every golden fixture and compare");
  pack_options(test);
  test->add_option("--fixtures", fixtures, "directory of golden fixtures (<scenario>/job.json, expected.json, ...)");
  test->add_flag("-v,--verbose", verbose, "also show why pending fixtures fail");
  CLI::App* patterns = app.add_subcommand("export-patterns", "print every extraction regex, one per line");
  pack_options(patterns);
  std::string corpus, floor_file;
  bool markdown = false;
  CLI::App* eval = app.add_subcommand("eval", "accuracy on a corpus of real incidents, next to a grep baseline");
  pack_options(eval);
  eval->add_option("corpus", corpus, "directory of incidents (<name>/incident.json, job.json, <host>/<source>.log)")
      ->required();
  eval->add_option("--floor", floor_file, "fail when below this floor.json (correct_at_least, confidently_wrong_at_most)");
  eval->add_flag("--markdown", markdown, "print one table row per incident instead");
  eval->add_flag("-v,--verbose", verbose, "list every incident, not only the misses");
  CLI::App* catalog = app.add_subcommand(
      "catalog", "per emitter: how many failure messages its source has, how many the pack knows, what is left out");
  pack_options(catalog);
  bool catalog_details = false;
  catalog->add_flag("--details", catalog_details, "also list why messages are left out and the families no rule knows");
  CLI::App* kinds = app.add_subcommand("kinds", "every event kind with its role: root cause, symptom, benign");
  pack_options(kinds);
  attrib::rules_tool::MineOptions mine_options;
  std::string mine_config = "/etc/attrib/attrib.yaml", mine_since;
  CLI::App* mine = app.add_subcommand(
      "mine", "templates of the lines no rule explains in the archive's UNATTRIBUTED and low-confidence attempts");
  pack_options(mine);
  mine->add_option("-c,--config", mine_config, "configuration file (for head.database)")->capture_default_str();
  mine->add_option("--database", mine_options.database, "the head's archive (overrides head.database)");
  mine->add_option("--since", mine_since, "only attempts archived since an age (7d, 24h) or an ISO 8601 date/time");
  mine->add_option("--top", mine_options.top, "templates listed")->capture_default_str();
  mine->add_option("--propose", mine_options.propose, "rule skeletons proposed, for the best templates")
      ->capture_default_str();
  mine->add_option("--baseline", mine_options.baseline,
                   "successful attempts (newest) whose lines rank background noise down; 0: none")
      ->capture_default_str();
  mine->add_option("--out", mine_options.out_dir, "write the skeletons there as mined-<n>.yaml (a --site directory)");
  mine->add_flag("--json", mine_options.json, "print the templates as JSON (schema attrib.mined_templates.v1)");
  mine->add_flag("--save", mine_options.save,
                 "also store the templates in the archive, for the dashboard's Unexplained panel (replacing the last)");
  if (auto done = attrib::common::parse_command_line(app, argc, argv)) return *done == 0 ? 0 : 2;

  auto pack = load(pack_dir, site_dirs);
  if (!pack) {
    std::fprintf(stderr, "attrib-rules: %s %s\n", pack.error().code.c_str(), pack.error().message.c_str());
    return 1;
  }
  if (patterns->parsed()) {
    for (const auto& p : attrib::rules::extraction_patterns(**pack)) {
      std::cout << unnamed_groups(p.regex) << "\n";
      if (!p.block_end.empty()) std::cout << unnamed_groups(p.block_end) << "\n";  // a block's last line is matched too
    }
    return 0;
  }
  if (catalog->parsed()) return run_catalog(**pack, pack_dir, catalog_details);
  if (eval->parsed()) return run_eval(*pack, corpus, floor_file, markdown, verbose);
  if (mine->parsed()) {
    if (mine_options.database.empty()) {
      auto config = attrib::common::load_config(mine_config);
      if (!config) {
        std::fprintf(stderr, "attrib-rules mine: %s (or pass --database)\n", config.error().message.c_str());
        return 2;
      }
      mine_options.database = config->head.database;
    }
    if (!mine_since.empty()) {
      auto parsed = attrib::common::parse_time_spec(mine_since, attrib::wall_clock_us());
      if (!parsed) {
        std::fprintf(stderr, "attrib-rules mine: --since: %s\n", parsed.error().message.c_str());
        return 2;
      }
      mine_options.since = *parsed;
    }
    return attrib::rules_tool::run_mine(*pack, mine_options);
  }
  if (kinds->parsed()) {
    int orphans = 0;
    for (const auto& role : attrib::rules::kind_roles(**pack)) {
      std::printf("%s\n", role.kind.c_str());
      for (const auto& root : role.roots) std::printf("  root of %s\n", root.c_str());
      if (!role.explained_by.empty())
        std::printf("  symptom of %zu rules (%s%s)\n", role.explained_by.size(), role.explained_by.front().c_str(),
                    role.explained_by.size() > 1 ? ", ..." : "");
      if (role.benign) std::printf("  benign\n");
      if (role.roots.empty() && role.explained_by.empty() && !role.benign) {
        std::printf("  NO ROLE: neither a root, a symptom nor declared benign\n");
        ++orphans;
      }
    }
    return orphans == 0 ? 0 : 1;
  }
  print_stats(**pack);
  if (test->parsed()) return run_tests(*pack, fixtures, verbose);
  return 0;
}
