// The archive's key of one job attempt (see JobKey).
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace attrib::store {

// One job attempt's row. A job id reported again once its earlier report was attributed
// is a new run of the id: a requeued job's next attempt, or a new job with a reused id
// (docs/admin-guide.md, "Attempts"). Runs count from 0 in the order they were reported.
struct JobKey {
  std::string cluster;
  std::string job_id;
  int64_t run = 0;
  auto operator<=>(const JobKey&) const = default;
};

}  // namespace attrib::store
