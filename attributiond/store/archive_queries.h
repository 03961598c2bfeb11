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

}  // namespace attrib::store
