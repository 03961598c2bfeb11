// Golden fixture comparison (attrib/rules/golden.h). expected.json keys (description,
// domain, root_cause, recommended_action, confidence, affected_nodes, symptoms and
// coverage are required):
//   description        free text: say what the scenario is
//   domain             exact
//   root_cause         null, or {rule, node, kind, gpu_uuid}: each given key exact
//   recommended_action exact
//   confidence         exact: high | medium | low
//   affected_nodes     exact list (sorted)
//   candidates         exact set of candidate rule ids (AMBIGUOUS)
//   symptoms           {count: symptom entries, kinds: exact set of symptom kinds}
//   unexplained_kinds  exact set of the unexplained events' kinds
//   coverage           rows [{node, source, status}] that must appear in the verdict
//   comment_contains   substring of the Slurm comment
//   pending            the pack lacks a rule for this scenario: a failure is reported as
//                      pending, a pass as an error (remove the marker)
// Unknown keys are errors: a typo must not silently weaken a fixture.
#include "rules/evidence/golden.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "core/whole_file.h"
#include "rules/evidence/bundle.h"

namespace attrib::rules {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

Error expected_error(const fs::path& file, const std::string& message) {
  return Error{kGoldenExpected, file.string() + ": " + message};
}

std::string join(const std::set<std::string>& items) {
  std::string out = "[";
  for (const auto& s : items) out += (out.size() > 1 ? ", " : "") + s;
  return out + "]";
}

Result<std::set<std::string>> string_set(const fs::path& file, const json& value, const std::string& key) {
  if (!value.is_array()) return expected_error(file, key + ": expected a list of strings");
  std::set<std::string> out;
  for (const auto& v : value) {
    if (!v.is_string()) return expected_error(file, key + ": expected a list of strings");
    out.insert(v.get<std::string>());
  }
  return out;
}

void compare_set(std::vector<std::string>& mismatches, const std::string& what, const std::set<std::string>& expected,
                 const std::set<std::string>& actual) {
  if (expected != actual) mismatches.push_back(what + ": expected " + join(expected) + ", got " + join(actual));
}

}  // namespace

std::vector<fs::path> list_golden_fixtures(const fs::path& root) { return list_bundles_with(root, "expected.json"); }

Result<GoldenResult> check_golden_fixture(const fs::path& dir, std::shared_ptr<const RulePack> pack) {
  const fs::path file = dir / "expected.json";
  auto bytes = read_whole_file(file);
  if (!bytes) return expected_error(file, "cannot read");
  json expected;
  try {
    expected = json::parse(*bytes);
  } catch (const json::parse_error& e) {
    return expected_error(file, std::string("not JSON: ") + e.what());
  }
  if (!expected.is_object()) return expected_error(file, "expected a JSON object");
  static const std::set<std::string> kKeys = {
      "description", "domain",     "root_cause",        "recommended_action", "confidence",       "affected_nodes",
      "candidates",  "symptoms",   "unexplained_kinds", "coverage",           "comment_contains", "pending"};
  for (const auto& [key, value] : expected.items())
    if (!kKeys.count(key)) return expected_error(file, "unknown key '" + key + "'");
  // A fixture asserts the whole verdict that matters, so that a rule change that moves
  // the root, the action, the symptoms or the coverage cannot pass unnoticed.
  static const char* const kRequired[] = {"description", "domain",         "root_cause", "recommended_action",
                                          "confidence",  "affected_nodes", "symptoms",   "coverage"};
  for (const char* key : kRequired)
    if (!expected.contains(key)) return expected_error(file, std::string("'") + key + "' is required");

  auto verdict = replay_bundle(dir, pack);
  if (!verdict) return verdict.error();
  GoldenResult result;
  result.name = dir.filename().string();
  result.verdict = std::move(*verdict);
  const Verdict& v = result.verdict;
  auto& m = result.mismatches;
  if (expected.contains("pending")) result.pending = expected["pending"].get<std::string>();

  const auto text = [&](const char* key) {
    return expected[key].is_string() ? expected[key].get<std::string>() : expected[key].dump();
  };
  if (text("domain") != v.domain) m.push_back("domain: expected " + text("domain") + ", got " + v.domain);
  if (text("recommended_action") != v.recommended_action)
    m.push_back("recommended_action: expected " + text("recommended_action") + ", got " + v.recommended_action);
  if (text("confidence") != v.confidence)
    m.push_back("confidence: expected " + text("confidence") + ", got " + v.confidence);

  if (expected.contains("root_cause")) {
    const json& rc = expected["root_cause"];
    if (rc.is_null()) {
      if (v.root_cause) m.push_back("root_cause: expected none, got " + v.root_cause->rule);
    } else if (!rc.is_object()) {
      return expected_error(file, "root_cause: expected null or {rule, node, kind, gpu_uuid}");
    } else if (!v.root_cause) {
      m.push_back("root_cause: expected " + rc.dump() + ", got none");
    } else {
      for (const auto& [key, value] : rc.items()) {
        std::string actual;
        if (key == "rule")
          actual = v.root_cause->rule;
        else if (key == "node")
          actual = v.root_cause->event.node;
        else if (key == "kind")
          actual = v.root_cause->event.kind;
        else if (key == "gpu_uuid")
          actual = v.root_cause->event.fields.value("gpu_uuid", "");
        else
          return expected_error(file, "root_cause: unknown key '" + key + "'");
        if (!value.is_string() || value.get<std::string>() != actual)
          m.push_back("root_cause." + key + ": expected " + value.dump() + ", got " + actual);
      }
    }
  }
  if (expected.contains("affected_nodes")) {
    auto want = string_set(file, expected["affected_nodes"], "affected_nodes");
    if (!want) return want.error();
    compare_set(m, "affected_nodes", *want, std::set<std::string>(v.affected_nodes.begin(), v.affected_nodes.end()));
  }
  if (expected.contains("candidates")) {
    auto want = string_set(file, expected["candidates"], "candidates");
    if (!want) return want.error();
    std::set<std::string> got;
    for (const auto& c : v.candidates) got.insert(c.rule);
    compare_set(m, "candidates", *want, got);
  }
  if (expected.contains("symptoms")) {
    const json& s = expected["symptoms"];
    if (!s.is_object()) return expected_error(file, "symptoms: expected {count, kinds}");
    for (const auto& [key, value] : s.items()) {
      if (key == "count") {
        if (!value.is_number_unsigned()) return expected_error(file, "symptoms.count: expected a number");
        if (value.get<size_t>() != v.symptoms.size())
          m.push_back("symptoms.count: expected " + value.dump() + ", got " + std::to_string(v.symptoms.size()));
      } else if (key == "kinds") {
        auto want = string_set(file, value, "symptoms.kinds");
        if (!want) return want.error();
        std::set<std::string> got;
        for (const auto& sym : v.symptoms) got.insert(sym.event.kind);
        compare_set(m, "symptoms.kinds", *want, got);
      } else {
        return expected_error(file, "symptoms: unknown key '" + key + "'");
      }
    }
  }
  if (expected.contains("unexplained_kinds")) {
    auto want = string_set(file, expected["unexplained_kinds"], "unexplained_kinds");
    if (!want) return want.error();
    std::set<std::string> got;
    for (const auto& e : v.unexplained) got.insert(e.kind);
    compare_set(m, "unexplained_kinds", *want, got);
  }
  if (expected.contains("coverage")) {
    if (!expected["coverage"].is_array()) return expected_error(file, "coverage: expected a list of rows");
    for (const auto& row : expected["coverage"]) {
      if (!row.is_object() || !row.contains("node") || !row.contains("source") || !row.contains("status"))
        return expected_error(file, "coverage: every row needs node, source and status");
      const bool found = std::any_of(v.coverage.begin(), v.coverage.end(), [&](const Coverage& c) {
        return c.node == row["node"].get<std::string>() && c.source == row["source"].get<std::string>() &&
               to_string(c.status) == row["status"].get<std::string>();
      });
      if (!found) m.push_back("coverage: no row " + row.dump());
    }
  }
  if (expected.contains("comment_contains") && v.comment.find(text("comment_contains")) == std::string::npos)
    m.push_back("comment: expected to contain '" + text("comment_contains") + "', got '" + v.comment + "'");
  return result;
}

}  // namespace attrib::rules
