#include "tools/attrib-rules/mine.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include <nlohmann/json.hpp>

#include "attributiond/store/archive_queries.h"
#include "attributiond/store/job_store.h"
#include "common/evidence_archive.h"
#include "core/clock.h"
#include "core/json_text.h"
#include "core/terminal_text.h"
#include "rules/evidence/bundle.h"
#include "rules/evidence/bundle_export.h"
#include "rules/engine.h"
#include "rules/evidence/template_miner.h"

namespace attrib::rules_tool {
namespace {

namespace fs = std::filesystem;

struct Mined {
  size_t runs = 0;
  size_t runs_without_evidence = 0;
  size_t baseline_runs = 0;
};

// attrib's own records: the SPANK plugin's task records and the accounting collector's
// "job <id> ended ..." / "step <id> (<name>) ended ..." lines. Their kinds are known and
// the job's state is in its facts; what is missing there is a cause, not a rule.
bool attrib_record(const LogLine& line) {
  if (line.source == "spank") return true;
  return line.source == "slurm" && (line.text.rfind("job ", 0) == 0 || line.text.rfind("step ", 0) == 0) &&
         line.text.find(" ended ") != std::string::npos;
}

// Feeds the run's lines that the pack does not explain to the miner: lines no extraction
// rule matched, and the lines of the verdict's unexplained events. A baseline run feeds
// its unmatched lines as baseline.
Status mine_run(store::JobStore& store, const store::ArchivedRun& run,
                const std::shared_ptr<const rules::RulePack>& pack, bool baseline, rules::TemplateMiner& miner,
                bool* had_evidence) {
  *had_evidence = false;
  auto evidence = store.evidence(run.key);
  if (!evidence) return evidence.error();
  if (!evidence->has_value()) return ok_status();
  auto files = common::unpack_evidence((*evidence)->blob);
  if (!files) return files.error();
  auto bundle = rules::open_archived_bundle(std::move(*files));
  if (!bundle) return bundle.error();
  std::vector<LogLine> lines;
  rules::Extractor extractor(pack);
  auto read = rules::read_bundle_lines(*bundle, [&](const LogLine& line) {
    extractor.feed(line);
    lines.push_back(line);
  });
  if (!read) return read.error();
  std::set<std::string> matched;
  for (const Event& e : extractor.finish()) matched.insert(e.line);
  std::set<std::string> unexplained;
  const auto verdict = nlohmann::json::parse(run.verdict_json, nullptr, false);
  if (verdict.is_object() && verdict.contains("unexplained") && verdict["unexplained"].is_array())
    for (const auto& e : verdict["unexplained"]) unexplained.insert(json_string_or(e, "line"));
  const std::set<std::string> hosts(bundle->job.nodes.begin(), bundle->job.nodes.end());
  const std::string attempt = run.key.job_id + " run " + std::to_string(run.key.run);
  for (const LogLine& line : lines) {
    if (matched.count(line.text) && !unexplained.count(line.text)) continue;
    if (attrib_record(line)) continue;
    const bool before_end = !bundle->job.end || !line.time || *line.time <= *bundle->job.end;
    const rules::MinedLine mined{line.text, line.node, line.source, attempt, before_end};
    if (baseline)
      miner.add_baseline(mined, hosts);
    else
      miner.add(mined, hosts);
  }
  *had_evidence = true;
  return ok_status();
}

std::string percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? "-" : std::to_string(part * 100 / whole) + "%";
}

}  // namespace

namespace {

// The attempts mined (UNATTRIBUTED or low confidence) and the baseline (successful
// attempts, newest first) whose lines rank background noise down.
struct RunsToMine {
  std::vector<store::ArchivedRun> targets;
  std::vector<store::ArchivedRun> baseline;
};

// The rule skeletons proposed, by the rank of their template (nullopt: none fits it).
using Skeletons = std::vector<std::optional<std::string>>;

Result<RunsToMine> select_runs(store::JobStore& store, const MineOptions& options) {
  store::RunFilter targets;
  targets.since = options.since;
  targets.domains = {"UNATTRIBUTED"};
  targets.or_low_confidence = true;
  store::RunFilter successes;
  successes.since = options.since;
  successes.domains = {"NONE"};
  successes.limit = options.baseline;
  successes.newest_first = true;
  auto target_runs = store.with_read_db([&](store::Database& db) { return store::archived_runs(db, targets); });
  auto baseline_runs =
      options.baseline == 0
          ? Result<std::vector<store::ArchivedRun>>(std::vector<store::ArchivedRun>{})
          : store.with_read_db([&](store::Database& db) { return store::archived_runs(db, successes); });
  if (!target_runs) return target_runs.error();
  if (!baseline_runs) return baseline_runs.error();
  return RunsToMine{std::move(*target_runs), std::move(*baseline_runs)};
}

// Feeds every run's unexplained lines to the miner; a run that cannot be read is reported
// and left out.
Mined mine_runs(store::JobStore& store, const RunsToMine& runs, const std::shared_ptr<const rules::RulePack>& pack,
                rules::TemplateMiner& miner) {
  Mined mined;
  for (const auto* list : {&runs.targets, &runs.baseline}) {
    const bool baseline = list == &runs.baseline;
    for (const store::ArchivedRun& run : *list) {
      bool had_evidence = false;
      if (auto s = mine_run(store, run, pack, baseline, miner, &had_evidence); !s) {
        std::fprintf(stderr, "attrib-rules mine: job %s run %lld: %s\n", run.key.job_id.c_str(),
                     static_cast<long long>(run.key.run), s.error().message.c_str());
        continue;
      }
      if (baseline) {
        mined.baseline_runs += had_evidence ? 1 : 0;
      } else {
        ++mined.runs;
        if (!had_evidence) ++mined.runs_without_evidence;
      }
    }
  }
  return mined;
}

Skeletons propose_skeletons(const std::vector<rules::LineTemplate>& ranked, size_t propose) {
  Skeletons skeletons;
  for (size_t i = 0; i < ranked.size() && i < propose; ++i)
    skeletons.push_back(rules::rule_skeleton(ranked[i], "site.mined_" + std::to_string(i + 1)));
  return skeletons;
}

// --out: where the skeleton of the template ranked i + 1 is written.
fs::path skeleton_path(const std::string& out_dir, size_t i) {
  return fs::path(out_dir) / ("mined-" + std::to_string(i + 1) + ".yaml");
}

void write_skeletons(const std::string& out_dir, const Skeletons& skeletons) {
  fs::create_directories(out_dir);
  for (size_t i = 0; i < skeletons.size(); ++i)
    if (skeletons[i]) std::ofstream(skeleton_path(out_dir, i)) << *skeletons[i];
}

store::MinedTemplateRow template_row(const rules::LineTemplate& t, size_t i, TimeUs now, const Skeletons& skeletons) {
  store::MinedTemplateRow row{static_cast<int64_t>(i + 1),
                              now,
                              t.text(),
                              static_cast<int64_t>(t.attempts.size()),
                              static_cast<int64_t>(t.nodes.size()),
                              static_cast<int64_t>(t.occurrences),
                              static_cast<int64_t>(t.before_end),
                              static_cast<int64_t>(t.baseline_attempts.size()),
                              {},
                              t.examples.empty() ? "" : t.examples.front().line,
                              i < skeletons.size() && skeletons[i] ? *skeletons[i] : ""};
  for (const std::string& id : t.attempts) {
    if (row.attempt_ids.size() == 50) break;
    row.attempt_ids.push_back(id);
  }
  return row;
}

// --save: the templates into the archive, replacing the last, for the dashboard's
// Unexplained panel.
Status save_templates(store::JobStore& store, const std::vector<rules::LineTemplate>& ranked,
                      const Skeletons& skeletons) {
  std::vector<store::MinedTemplateRow> rows;
  const TimeUs now = wall_clock_us();
  for (size_t i = 0; i < ranked.size(); ++i) rows.push_back(template_row(ranked[i], i, now, skeletons));
  return store.with_db([&](store::Database& db) { return store::save_mined_templates(db, rows); });
}

nlohmann::json template_json(const rules::LineTemplate& t, size_t i, const Skeletons& skeletons) {
  nlohmann::json examples = nlohmann::json::array();
  for (const auto& e : t.examples) examples.push_back({{"line", e.line}, {"attempt", e.attempt}, {"node", e.node}});
  nlohmann::json row = {{"rank", i + 1},
                        {"template", t.text()},
                        {"attempts", t.attempts.size()},
                        {"attempt_ids", t.attempts},
                        {"nodes", t.nodes},
                        {"sources", t.sources},
                        {"lines", t.occurrences},
                        {"before_end", t.before_end},
                        {"successful_attempts", t.baseline_attempts.size()},
                        {"examples", examples}};
  if (i < skeletons.size() && skeletons[i]) row["rule_skeleton"] = *skeletons[i];
  return row;
}

// --json: schema attrib.mined_templates.v1.
std::string report_json(const std::vector<rules::LineTemplate>& ranked, const Skeletons& skeletons,
                        const Mined& mined, size_t lines) {
  nlohmann::json templates = nlohmann::json::array();
  for (size_t i = 0; i < ranked.size(); ++i) templates.push_back(template_json(ranked[i], i, skeletons));
  return json_text({{"schema", "attrib.mined_templates.v1"},
                    {"attempts", mined.runs},
                    {"attempts_without_evidence", mined.runs_without_evidence},
                    {"baseline_attempts", mined.baseline_runs},
                    {"lines", lines},
                    {"templates", templates}});
}

// One template ranked i + 1 as text: its counts and text, then an example line.
std::string template_text(const rules::LineTemplate& t, size_t i) {
  char row[160];
  std::snprintf(row, sizeof row, "%3zu. %zu attempts, %zu nodes, %llu lines (%s before the end), %zu successful: ",
                i + 1, t.attempts.size(), t.nodes.size(), static_cast<unsigned long long>(t.occurrences),
                percent(t.before_end, t.occurrences).c_str(), t.baseline_attempts.size());
  std::string out = row + t.text() + "\n";
  if (!t.examples.empty())
    out += "     e.g. job " + t.examples.front().attempt + " on " + t.examples.front().node + ": " +
           t.examples.front().line + "\n";
  return out;
}

// The report as text: what was mined, the templates, then each skeleton (with --out, where
// it was written).
std::string report_text(const std::vector<rules::LineTemplate>& ranked, const Skeletons& skeletons,
                        const Mined& mined, size_t lines, const std::string& out_dir) {
  std::string out = "Mined " + std::to_string(lines) + " lines no rule explains, from " +
                    std::to_string(mined.runs - mined.runs_without_evidence) +
                    " UNATTRIBUTED or low-confidence attempts with raw evidence (" +
                    std::to_string(mined.runs_without_evidence) +
                    " without); baseline: " + std::to_string(mined.baseline_runs) + " successful attempts.\n";
  for (size_t i = 0; i < ranked.size(); ++i) out += template_text(ranked[i], i);
  for (size_t i = 0; i < skeletons.size(); ++i) {
    if (!skeletons[i]) continue;
    if (!out_dir.empty()) {
      out += "Proposed rule for template " + std::to_string(i + 1) + ": " + skeleton_path(out_dir, i).string() + "\n";
      continue;
    }
    out += "\n# ---- proposed rule for template " + std::to_string(i + 1) + " ----\n" + *skeletons[i];
  }
  return out;
}

}  // namespace

int run_mine(const std::shared_ptr<const rules::RulePack>& pack, const MineOptions& options) {
  auto opened = store::JobStore::open(options.database, store::StoreAccess::Tool);
  if (!opened) {
    std::fprintf(stderr, "attrib-rules mine: %s\n", opened.error().message.c_str());
    return 2;
  }
  store::JobStore& store = **opened;
  auto runs = select_runs(store, options);
  if (!runs) {
    std::fprintf(stderr, "attrib-rules mine: %s\n", runs.error().message.c_str());
    return 2;
  }
  rules::TemplateMiner miner;
  const Mined mined = mine_runs(store, *runs, pack, miner);

  std::vector<rules::LineTemplate> ranked = miner.ranked();
  if (ranked.size() > options.top) ranked.resize(options.top);
  const Skeletons skeletons = propose_skeletons(ranked, options.propose);
  if (!options.out_dir.empty()) write_skeletons(options.out_dir, skeletons);
  if (options.save) {
    if (auto s = save_templates(store, ranked, skeletons); !s) {
      std::fprintf(stderr, "attrib-rules mine: saving the templates: %s\n", s.error().message.c_str());
      return 2;
    }
  }
  if (options.json) {
    std::cout << report_json(ranked, skeletons, mined, miner.lines()) << "\n";
    return 0;
  }
  std::cout << terminal_safe(report_text(ranked, skeletons, mined, miner.lines(), options.out_dir));
  return 0;
}

}  // namespace attrib::rules_tool
