// The archived runs the admin tools read (attrib-reattribute, attrib-rules mine), on the
// store's read-only connection.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attributiond/store/job_key.h"
#include "attributiond/store/sqlite.h"
#include "core/result.h"
#include "core/types.h"

namespace attrib::store {

struct ArchivedRun {
  JobKey key;
  std::string status;  // archived | done
  std::string domain;
  std::string verdict_json;
  bool evidence_pruned = false;
};

struct RunFilter {
  std::optional<TimeUs> since;       // archived since then
  std::vector<std::string> domains;  // any of these; empty: any domain
  bool or_low_confidence = false;    // also runs whose verdict's confidence is low
  std::string cluster;               // empty: any
  size_t limit = 0;                  // 0: all
  bool newest_first = false;         // else oldest first
};

// Runs with a verdict, filtered.
Result<std::vector<ArchivedRun>> archived_runs(Database& db, const RunFilter& filter);

// One template of `attrib-rules mine --save` (table mined_templates).
struct MinedTemplateRow {
  int64_t rank = 0;
  TimeUs mined = 0;
  std::string text;
  int64_t attempts = 0, nodes = 0, lines = 0, before_end = 0, successful = 0;
  std::vector<std::string> attempt_ids;  // "<job id> run <n>", at most 50
  std::string example;                   // one real line
  std::string skeleton;                  // the proposed rule, "" when none was proposed
};
// Replaces the saved templates with these, in one transaction.
Status save_mined_templates(Database& db, const std::vector<MinedTemplateRow>& rows);
// The saved templates, best first.
Result<std::vector<MinedTemplateRow>> mined_templates(Database& db);

}  // namespace attrib::store
