#include "attributiond/fleet/array_report.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

namespace attrib::fleet {
namespace {

// What one node or GPU is blamed for across the array.
struct Blamed {
  std::vector<std::string> tasks;
  std::map<std::string, int64_t> domains;
};

// The entries blamed by two tasks or more, most tasks first (ties by name): a node or
// GPU that recurs is the array's lead, one that fails a single task may be chance.
nlohmann::json recurring(const std::map<std::pair<std::string, std::string>, Blamed>& blamed, bool with_gpu) {
  std::vector<std::pair<const std::pair<std::string, std::string>*, const Blamed*>> entries;
  for (const auto& [key, value] : blamed)
    if (value.tasks.size() >= 2) entries.emplace_back(&key, &value);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.second->tasks.size() > b.second->tasks.size(); });
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [key, value] : entries) {
    nlohmann::json entry = {{"node", key->first}};
    if (with_gpu) entry["gpu"] = key->second;
    entry["tasks"] = value->tasks.size();
    entry["domains"] = value->domains;
    entry["task_ids"] = value->tasks;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

nlohmann::json array_rollup_report(const std::string& cluster, const std::string& array_job_id,
                                   const store::ArrayTasks& tasks) {
  std::map<std::string, int64_t> domains, states;
  std::map<std::pair<std::string, std::string>, Blamed> nodes, gpus;
  nlohmann::json failed = nlohmann::json::array();
  size_t failed_count = 0;
  for (const store::VerdictRow& task : tasks.judged) {
    ++domains[task.domain];
    ++states[task.state];
    if (!task.node.empty()) {
      Blamed& node = nodes[{task.node, ""}];
      node.tasks.push_back(task.job_id);
      ++node.domains[task.domain];
      if (!task.gpu.empty()) {
        Blamed& gpu = gpus[{task.node, task.gpu}];
        gpu.tasks.push_back(task.job_id);
        ++gpu.domains[task.domain];
      }
    }
    if (task.domain == "NONE") continue;
    if (++failed_count > kMaxListedTasks) continue;
    failed.push_back({{"job_id", task.job_id},
                      {"state", task.state},
                      {"domain", task.domain},
                      {"rule", task.rule},
                      {"node", task.node},
                      {"gpu", task.gpu},
                      {"action", task.action}});
  }
  return {{"schema", "attrib.array_rollup.v1"},
          {"cluster", cluster},
          {"array_job_id", array_job_id},
          {"tasks", tasks.judged.size()},
          {"waiting", tasks.waiting},
          {"domains", domains},
          {"states", states},
          {"recurring_nodes", recurring(nodes, false)},
          {"recurring_gpus", recurring(gpus, true)},
          {"failed_tasks", std::move(failed)},
          {"failed_tasks_omitted", failed_count > kMaxListedTasks ? failed_count - kMaxListedTasks : 0}};
}

}  // namespace attrib::fleet
