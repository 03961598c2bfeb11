// Accuracy on a corpus of real incidents (tests/corpus/real, docs/accuracy.md): each
// incident is an evidence bundle plus incident.json with the truth from its public
// thread. `attrib-rules eval` replays every bundle through the pack and scores it next to
// the grep baseline (rules/grep_baseline.h).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/verdict.h"
#include "rules/engine.h"

namespace attrib::rules {

// incident.json: {"source", "title", "truth": {"domain", "node", "confidence"},
// "resolution", "hard", "acceptable": [domains], "disputed": why (only with acceptable
// domains), optional "held_out": true}.
//
// Scoring is strict (docs/accuracy.md): a verdict is right when it names the truth's
// domain; another domain only where the thread itself disputes the cause (`acceptable`
// with `disputed` saying who argues for what, in at most one incident in six); and
// UNATTRIBUTED or AMBIGUOUS only where no cause was ever established.
struct IncidentTruth {
  std::string source;
  std::string title;
  std::string domain;
  std::optional<std::string> node;  // the culprit node, when the thread names one
  std::string confidence;           // confirmed_fix | maintainer_diagnosis | never_established
  std::vector<std::string> acceptable;  // concrete domains the thread argues for besides `domain`
  std::string disputed;                 // who in the thread argues for which cause
  // "held_out": true: gathered after the pack was written and never used to write a rule,
  // so its score says how the pack does on failures it has not seen.
  bool held_out = false;
};

struct IncidentResult {
  std::string name;  // the incident directory's name
  IncidentTruth truth;
  Verdict verdict;
  std::string baseline_domain;  // what the grep baseline says
};

// Right: the verdict names the truth's domain or one the thread disputes for, or says no
// cause (UNATTRIBUTED, AMBIGUOUS) where none was ever established.
bool verdict_correct(const IncidentResult& r);
bool baseline_correct(const IncidentResult& r);
// Confidently wrong: a wrong concrete domain (not AMBIGUOUS or UNATTRIBUTED) that the
// verdict does not mark low.
bool confidently_wrong(const IncidentResult& r);

// Every sub-directory of root that holds an incident.json, sorted by name.
std::vector<std::filesystem::path> list_incidents(const std::filesystem::path& root);

// Reads incident.json (CORPUS_E_INCIDENT naming file and field when it is wrong), replays
// the bundle and runs the baseline over the same lines.
Result<IncidentResult> evaluate_incident(const std::filesystem::path& dir, std::shared_ptr<const RulePack> pack);

struct EvalSummary {
  size_t incidents = 0;
  size_t correct = 0;
  size_t confidently_wrong = 0;
  size_t ambiguous = 0;
  size_t unattributed = 0;
  size_t low = 0;            // verdicts marked low confidence
  size_t node_known = 0;     // correct verdicts of incidents whose truth names a node
  size_t node_right = 0;     // ... that name that node among their affected nodes
  size_t baseline_correct = 0;
  size_t baseline_wrong = 0;  // a wrong concrete domain (the baseline is never unsure)
  size_t disputed = 0;        // incidents whose thread disputes the cause (acceptable domains)
  size_t held_out = 0, held_out_correct = 0, held_out_confidently_wrong = 0, held_out_baseline_correct = 0;
  // verdict confidence -> {verdicts, of which right}: how far each level can be trusted
  std::map<std::string, std::pair<size_t, size_t>> by_confidence;
  // truth domain -> verdict domain -> incidents
  std::map<std::string, std::map<std::string, size_t>> confusion;
};
EvalSummary summarize(const std::vector<IncidentResult>& results);

// The recorded floor (tests/corpus/real/floor.json: {"correct_at_least": N,
// "confidently_wrong_at_most": M}): accuracy only ratchets up.
struct EvalFloor {
  size_t correct_at_least = 0;
  size_t confidently_wrong_at_most = 0;
};
Result<EvalFloor> read_eval_floor(const std::filesystem::path& file);
// Empty when the summary meets the floor and at most one incident in six is disputed;
// otherwise what fell below it (a corpus that accepts many domains scores itself).
std::vector<std::string> check_eval_floor(const EvalSummary& summary, const EvalFloor& floor);

}  // namespace attrib::rules
