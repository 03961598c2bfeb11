// attrib.array_rollup.v1 (docs/verdict-reference.md, "Arrays"): an array job at a glance,
// what `attrib-show 123` answers when 123 is an array job. Built from the newest verdict
// of each task (store::array_tasks). attrib-show prints it as is with --json.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "attributiond/store/fleet_queries.h"

namespace attrib::fleet {

// Failed tasks listed one by one; the others are counted in failed_tasks_omitted.
inline constexpr size_t kMaxListedTasks = 1000;

// How many tasks ended in each domain and state, the nodes and GPUs that more than one
// task's root cause blames (with the tasks that name them), and the tasks whose domain is
// not NONE.
nlohmann::json array_rollup_report(const std::string& cluster, const std::string& array_job_id,
                                   const store::ArrayTasks& tasks);

}  // namespace attrib::fleet
