#include "rules/evidence/corpus_eval.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/whole_file.h"
#include "rules/evidence/bundle.h"
#include "rules/evidence/grep_baseline.h"
#include "rules/rule_definitions.h"

namespace attrib::rules {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

Error incident_error(const fs::path& file, const std::string& message) {
  return Error{kCorpusIncident, file.string() + ": " + message};
}

Result<json> read_json(const fs::path& file) {
  auto text = read_whole_file(file);
  if (!text) return incident_error(file, "cannot be read");
  try {
    return json::parse(*text);
  } catch (const json::exception& e) {
    return incident_error(file, std::string("not JSON: ") + e.what());
  }
}

Result<std::string> string_field(const fs::path& file, const json& object, const std::string& key,
                                 const std::string& path) {
  if (!object.contains(key) || !object[key].is_string() || object[key].get<std::string>().empty())
    return incident_error(file, path + key + ": expected a non-empty string");
  return object[key].get<std::string>();
}

// A truth is a verdict domain a rule may assign (the vocabulary the rule pack is checked
// against), or UNATTRIBUTED for a cause never established.
bool known_domain(const std::string& d) { return detail::is_root_domain(d) || d == "UNATTRIBUTED"; }

Result<IncidentTruth> read_truth(const fs::path& file) {
  auto parsed = read_json(file);
  if (!parsed) return parsed.error();
  const json& j = *parsed;
  if (!j.is_object()) return incident_error(file, "expected an object");
  IncidentTruth t;
  auto source = string_field(file, j, "source", "");
  if (!source) return source.error();
  t.source = *source;
  if (j.contains("title") && j["title"].is_string()) t.title = j["title"].get<std::string>();
  if (!j.contains("truth") || !j["truth"].is_object()) return incident_error(file, "truth: expected an object");
  const json& truth = j["truth"];
  auto domain = string_field(file, truth, "domain", "truth.");
  if (!domain) return domain.error();
  if (!known_domain(*domain)) return incident_error(file, "truth.domain: unknown domain '" + *domain + "'");
  t.domain = *domain;
  if (truth.contains("node") && !truth["node"].is_null()) {
    if (!truth["node"].is_string()) return incident_error(file, "truth.node: expected a string or null");
    t.node = truth["node"].get<std::string>();
  }
  auto confidence = string_field(file, truth, "confidence", "truth.");
  if (!confidence) return confidence.error();
  if (*confidence != "confirmed_fix" && *confidence != "maintainer_diagnosis" && *confidence != "never_established")
    return incident_error(file, "truth.confidence: expected confirmed_fix, maintainer_diagnosis or never_established");
  t.confidence = *confidence;
  for (const char* key : {"resolution", "hard"}) {
    auto text = string_field(file, j, key, "");
    if (!text) return text.error();
  }
  if (j.contains("held_out")) {
    if (!j["held_out"].is_boolean()) return incident_error(file, "held_out: expected true or false");
    t.held_out = j["held_out"].get<bool>();
  }
  if (!j.contains("acceptable") || !j["acceptable"].is_array())
    return incident_error(file, "acceptable: expected a list of domains");
  for (const auto& a : j["acceptable"]) {
    if (!a.is_string() || !detail::is_root_domain(a.get<std::string>()))
      return incident_error(file, "acceptable: expected a list of concrete domains (AMBIGUOUS and UNATTRIBUTED are "
                                  "right only for a cause never established), got " + a.dump());
    t.acceptable.push_back(a.get<std::string>());
  }
  if (!t.acceptable.empty()) {
    auto disputed = string_field(file, j, "disputed", "");
    if (!disputed)
      return incident_error(file, "disputed: an acceptable domain needs the thread's dispute (who argues for what)");
    t.disputed = *disputed;
  }
  if ((t.confidence == "never_established") != (t.domain == "UNATTRIBUTED"))
    return incident_error(file, "truth.domain: UNATTRIBUTED exactly when truth.confidence is never_established");
  return t;
}

bool names(const IncidentTruth& truth, const std::string& domain) {
  if (truth.confidence == "never_established" && (domain == "UNATTRIBUTED" || domain == "AMBIGUOUS")) return true;
  return domain == truth.domain ||
         std::find(truth.acceptable.begin(), truth.acceptable.end(), domain) != truth.acceptable.end();
}

bool concrete(const std::string& domain) { return domain != "AMBIGUOUS" && domain != "UNATTRIBUTED"; }

}  // namespace

bool verdict_correct(const IncidentResult& r) { return names(r.truth, r.verdict.domain); }
bool baseline_correct(const IncidentResult& r) { return names(r.truth, r.baseline_domain); }
bool confidently_wrong(const IncidentResult& r) {
  return !verdict_correct(r) && concrete(r.verdict.domain) && r.verdict.confidence != "low";
}

std::vector<fs::path> list_incidents(const fs::path& root) { return list_bundles_with(root, "incident.json"); }

Result<IncidentResult> evaluate_incident(const fs::path& dir, std::shared_ptr<const RulePack> pack) {
  IncidentResult r;
  r.name = dir.filename().string();
  auto truth = read_truth(dir / "incident.json");
  if (!truth) return truth.error();
  r.truth = std::move(*truth);
  auto bundle = open_bundle(dir);
  if (!bundle) return bundle.error();
  auto verdict = replay_bundle(*bundle, std::move(pack));
  if (!verdict) return verdict.error();
  r.verdict = std::move(*verdict);
  GrepBaseline baseline;
  auto read = read_bundle_lines(*bundle, [&](const LogLine& line) { baseline.feed(line.text); });
  if (!read) return read.error();
  r.baseline_domain = baseline.domain();
  return r;
}

EvalSummary summarize(const std::vector<IncidentResult>& results) {
  EvalSummary s;
  for (const auto& r : results) {
    ++s.incidents;
    const bool right = verdict_correct(r);
    if (right) ++s.correct;
    if (confidently_wrong(r)) ++s.confidently_wrong;
    if (r.verdict.domain == "AMBIGUOUS") ++s.ambiguous;
    if (r.verdict.domain == "UNATTRIBUTED") ++s.unattributed;
    if (r.verdict.confidence == "low") ++s.low;
    auto& level = s.by_confidence[r.verdict.confidence.empty() ? "none" : r.verdict.confidence];
    ++level.first;
    if (right) ++level.second;
    if (right && r.truth.node && concrete(r.verdict.domain)) {
      ++s.node_known;
      const auto& nodes = r.verdict.affected_nodes;
      if (std::find(nodes.begin(), nodes.end(), *r.truth.node) != nodes.end()) ++s.node_right;
    }
    if (baseline_correct(r)) {
      ++s.baseline_correct;
    } else if (concrete(r.baseline_domain)) {
      ++s.baseline_wrong;
    }
    if (!r.truth.acceptable.empty()) ++s.disputed;
    if (r.truth.held_out) {
      ++s.held_out;
      if (right) ++s.held_out_correct;
      if (confidently_wrong(r)) ++s.held_out_confidently_wrong;
      if (baseline_correct(r)) ++s.held_out_baseline_correct;
    }
    ++s.confusion[r.truth.domain][r.verdict.domain];
  }
  return s;
}

Result<EvalFloor> read_eval_floor(const fs::path& file) {
  auto parsed = read_json(file);
  if (!parsed) return parsed.error();
  EvalFloor floor;
  for (auto [key, target] : {std::pair{"correct_at_least", &floor.correct_at_least},
                             std::pair{"confidently_wrong_at_most", &floor.confidently_wrong_at_most}}) {
    if (!parsed->is_object() || !parsed->contains(key) || !(*parsed)[key].is_number_unsigned())
      return incident_error(file, std::string(key) + ": expected a non-negative integer");
    *target = (*parsed)[key].get<size_t>();
  }
  return floor;
}

std::vector<std::string> check_eval_floor(const EvalSummary& summary, const EvalFloor& floor) {
  std::vector<std::string> out;
  if (summary.correct < floor.correct_at_least)
    out.push_back("correct " + std::to_string(summary.correct) + " is below the floor of " +
                  std::to_string(floor.correct_at_least));
  if (summary.confidently_wrong > floor.confidently_wrong_at_most)
    out.push_back("confidently wrong " + std::to_string(summary.confidently_wrong) + " is above the ceiling of " +
                  std::to_string(floor.confidently_wrong_at_most));
  if (summary.disputed * 6 > summary.incidents)
    out.push_back(std::to_string(summary.disputed) + " of " + std::to_string(summary.incidents) +
                  " incidents accept another domain; at most one in six may (only where the thread disputes the cause)");
  return out;
}

}  // namespace attrib::rules
