// Re-attribution (attrib-reattribute): the archived raw evidence of finished runs judged
// again under a candidate rule pack, the changed verdicts listed with totals per
// transition, and, when asked, stored as new versions (JobStore::revise).
//
// A run is only re-judged from evidence that replays to what the daemon saw: its raw
// evidence complete (nothing over head.raw_evidence_max_kib). A run whose raw evidence
// retention pruned, one archived without raw evidence, one whose evidence is incomplete,
// and one not finished yet are reported and never touched.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attributiond/store/job_store.h"
#include "core/result.h"
#include "core/verdict.h"
#include "rules/rule_pack.h"

namespace attrib::reattribute {

struct Selection {
  std::optional<TimeUs> since;    // runs archived since then
  std::string domain;             // runs whose current verdict has this domain
  std::vector<std::string> jobs;  // these job ids (every run of each); empty: any
  std::string cluster;            // empty: any
};

enum class Outcome { Changed, Unchanged, Pruned, NoEvidence, Incomplete, NotFinished, Failed };
std::string to_string(Outcome outcome);

struct Rejudged {
  store::JobKey key;
  Outcome outcome = Outcome::Unchanged;
  std::string old_domain, old_rule, old_confidence;
  std::string new_domain, new_rule, new_confidence;
  std::string detail;              // why it was not re-judged, or what failed
  std::optional<Verdict> verdict;  // the new verdict (Changed)
  bool applied = false;
};

struct Report {
  std::string pack_version;
  std::string pack_hash;
  std::vector<Rejudged> runs;  // in archive order (oldest first)
  std::map<Outcome, int> counts;
  std::map<std::string, int> transitions;  // "OLD -> NEW" domains of the changed runs
};

// Re-judges the selected runs, each replayed from its raw evidence in memory.
Result<Report> rejudge(store::JobStore& store, const Selection& selection,
                       const std::shared_ptr<const rules::RulePack>& pack);

// Stores every Changed run's verdict as a new version; a run that finished changing in
// the meantime (not finished any more) is marked NotFinished. Returns how many were stored.
Result<int> apply(store::JobStore& store, Report& report, TimeUs now);

nlohmann::json report_json(const Report& report);
std::string report_text(const Report& report);

}  // namespace attrib::reattribute
