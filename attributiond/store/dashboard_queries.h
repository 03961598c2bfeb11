// What the dashboard reads from the verdict archive (docs/dashboard.md), over its own
// read-only SQLite connection to the head's database: WAL lets it read while the
// daemon's connection writes, and a slow page never holds the queue's lock.
//
// Every query takes the Viewer and applies the rule attrib-show follows: admins see
// every job, others only jobs that ran as their own uid (jobs.owner_uid, in SQL over an
// index). Filters are bound parameters; a listing is one page (page.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "attributiond/store/page.h"
#include "attributiond/store/sqlite.h"
#include "core/result.h"
#include "core/types.h"

namespace attrib::store {

struct Viewer {
  bool admin = false;
  uid_t uid = 0;  // meaningful when not admin
};

// Empty strings and unset times mean "any".
struct VerdictFilter {
  std::string domain;                        // verdict domain, e.g. GPU_HARDWARE
  std::string node;                          // an allocated or affected node of the job
  std::string user;                          // the job's user name, or its uid in digits
  std::string state;                         // the job's terminal state, e.g. FAILED
  std::optional<TimeUs> since_us, until_us;  // when the head received the job's end
  int limit = 200;                           // rows returned by verdicts(), at most kMaxPageRows
  std::optional<PageKey> before;             // verdicts(): the previous page's next; none: the newest
};

// One archived verdict, as listed.
struct VerdictSummary {
  std::string cluster, job_id;
  std::string status;  // archived | done (the Slurm comment written)
  TimeUs time_us = 0;  // when the head received the job's end
  std::string user;
  uint32_t uid = 0;
  std::string domain, state, rule, action, comment;
  int64_t exit_code = 0;
  std::vector<std::string> nodes, affected_nodes;
  std::string scheduler;  // slurm, or another one's through the attribution API
};

struct VerdictPage {
  std::vector<VerdictSummary> rows;  // newest first
  bool truncated = false;            // more rows matched than the limit
  std::optional<PageKey> next;       // when truncated: the `before` of the next (older) page
};

struct CountBucket {
  TimeUs start_us = 0;
  std::map<std::string, int64_t> domains;  // domain -> jobs
};

struct JobDetail {
  VerdictSummary summary;
  std::string verdict_json;  // verdict v1 exactly as archived
};

// DASH_E_FORBIDDEN: the job exists but is not the viewer's.

class DashboardQueries {
 public:
  static Result<std::unique_ptr<DashboardQueries>> open(const std::string& database_path);

  Result<VerdictPage> verdicts(const VerdictFilter& filter, const Viewer& viewer);
  // Jobs per domain in buckets of bucket_s over [since, until] (both required), every
  // bucket present, oldest first; the filter's other fields apply too.
  Result<std::vector<CountBucket>> counts(const VerdictFilter& filter, int64_t bucket_s, const Viewer& viewer);
  // nullopt: no archived verdict for that job; kDashForbidden: another user's job.
  Result<std::optional<JobDetail>> job(const std::string& cluster, const std::string& job_id, const Viewer& viewer);

  // The connection, for readers that take one (fleet_queries.h); hold lock() meanwhile.
  store::Database& database() { return db_; }
  std::unique_lock<std::mutex> lock() { return std::unique_lock(mutex_); }

 private:
  explicit DashboardQueries(store::Database db) : db_(std::move(db)) {}
  std::mutex mutex_;  // one connection, shared by the server's threads
  store::Database db_;
};

// Whether viewer may see a job that ran as (uid, user): the attrib-show rule.
bool may_view(const Viewer& viewer, uint32_t uid, const std::string& user);

}  // namespace attrib::store
