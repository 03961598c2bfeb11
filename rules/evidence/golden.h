// Golden fixtures: an evidence bundle plus expected.json, the subset of the verdict that
// must hold (docs/rules.md "Golden fixtures"). Used by `attrib-rules test` and CTest.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/verdict.h"
#include "rules/engine.h"

namespace attrib::rules {

struct GoldenResult {
  std::string name;                     // the fixture directory's name
  std::vector<std::string> mismatches;  // empty: the verdict meets every expectation
  std::string pending;                  // expected.json "pending": why the pack cannot pass it yet
  Verdict verdict;
};

// Every sub-directory of root that holds an expected.json, sorted by name.
std::vector<std::filesystem::path> list_golden_fixtures(const std::filesystem::path& root);

// Replays the fixture's bundle and compares. Error (GOLDEN_E_EXPECTED or a BUNDLE_E_* code)
// when the fixture itself is broken: unreadable bundle, unknown expectation key.
Result<GoldenResult> check_golden_fixture(const std::filesystem::path& dir, std::shared_ptr<const RulePack> pack);

}  // namespace attrib::rules
