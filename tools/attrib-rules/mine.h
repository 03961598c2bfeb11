// attrib-rules mine: templates of the lines no rule explains in the archive's
// UNATTRIBUTED and low-confidence attempts, ranked, with proposed site rule skeletons.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/types.h"
#include "rules/rule_pack.h"

namespace attrib::rules_tool {

struct MineOptions {
  std::string database;  // the head's archive
  std::optional<TimeUs> since;
  size_t top = 10;        // templates listed
  size_t propose = 3;     // skeletons proposed, for the best templates
  size_t baseline = 200;  // successful attempts (domain NONE, newest) whose lines rank noise down
  std::string out_dir;    // skeletons written there as mined-<n>.yaml; empty: printed
  bool json = false;
  bool save = false;  // also store the templates in the archive for the dashboard's Unexplained panel
};

// Prints the report; returns the exit code (0, or 2 with the reason on stderr).
int run_mine(const std::shared_ptr<const rules::RulePack>& pack, const MineOptions& options);

}  // namespace attrib::rules_tool
