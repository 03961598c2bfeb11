#include "attributiond/pipeline/node_history.h"

#include <spdlog/spdlog.h>

#include "attributiond/store/fleet_queries.h"

namespace attrib::pipeline {

std::vector<NodeFailureHistory> repeated_failures(store::JobStore& store, const common::FleetConfig& fleet,
                                                  const JobFacts& facts) {
  std::vector<NodeFailureHistory> out;
  const bool succeeded = facts.state == "COMPLETED" && facts.exit_code == 0 && facts.signal == 0;
  if (fleet.repeat_failures_jobs <= 0 || !facts.end || succeeded) return out;
  const int64_t window_s = fleet.repeat_failures_window_s;
  const TimeUs since = *facts.end - window_s * TimeUs{1000000};
  for (const std::string& node : facts.nodes) {
    auto found = store.with_read_db([&](store::Database& db) {
      return store::unexplained_failures_on(db, facts.cluster, node, since, *facts.end, facts.job_id, facts.uid);
    });
    if (!found) {
      spdlog::warn("job {}: cannot read node {}'s earlier failures: {}", facts.job_id, node, found.error().message);
      return {};
    }
    if (found->jobs < fleet.repeat_failures_jobs || found->other_users < 1) continue;
    out.push_back({node, static_cast<int>(found->jobs), static_cast<int>(found->other_users), window_s});
  }
  return out;
}

}  // namespace attrib::pipeline
