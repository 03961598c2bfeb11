#include "attributiond/fleet/offender_policy.h"

#include <algorithm>
#include <map>
#include <set>

namespace attrib::fleet {

using store::BlameRow;

namespace {

constexpr TimeUs kSecond = 1000000;

std::string join_sorted(const std::set<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

// Marks every counted row that falls in a burst of more than systemic_nodes distinct
// nodes within systemic_window, and returns the bursts. rows: sorted by time.
std::vector<SystemicEvent> find_systemic(const std::vector<const BlameRow*>& rows, const FleetPolicy& policy,
                                         std::vector<bool>& marked) {
  marked.assign(rows.size(), false);
  const TimeUs window = policy.systemic_window_s * kSecond;
  std::map<std::string, int> in_window;  // node -> rows inside [rows[i], rows[i] + window]
  size_t end = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    while (end < rows.size() && rows[end]->time_us - rows[i]->time_us <= window) ++in_window[rows[end++]->node];
    if (static_cast<int>(in_window.size()) > policy.systemic_nodes)
      for (size_t k = i; k < end; ++k) marked[k] = true;
    if (--in_window[rows[i]->node] == 0) in_window.erase(rows[i]->node);
  }
  // Overlapping bursts are one event: consecutive marked rows.
  std::vector<SystemicEvent> events;
  for (size_t i = 0; i < rows.size();) {
    if (!marked[i]) {
      ++i;
      continue;
    }
    std::set<std::string> nodes, domains;
    SystemicEvent event;
    event.from_us = rows[i]->time_us;
    for (; i < rows.size() && marked[i]; ++i) {
      nodes.insert(rows[i]->node);
      domains.insert(rows[i]->domain);
      event.to_us = rows[i]->time_us;
    }
    event.nodes = static_cast<int>(nodes.size());
    event.domain = join_sorted(domains);
    events.push_back(std::move(event));
  }
  return events;
}

// The (node, gpu) whose verdicts `rows` are, oldest first.
Offender offender_of(const std::pair<std::string, std::string>& node_gpu, const std::vector<const BlameRow*>& rows) {
  Offender offender;
  offender.node = node_gpu.first;
  offender.gpu = node_gpu.second;
  offender.verdicts = static_cast<int>(rows.size());
  offender.first_us = rows.front()->time_us;
  offender.last_us = rows.back()->time_us;
  for (const BlameRow* row : rows) offender.job_ids.push_back(row->job_id);
  return offender;
}

void add_offenders(const std::map<std::pair<std::string, std::string>, std::vector<const BlameRow*>>& groups,
                   int threshold, std::vector<Offender>& out) {
  for (const auto& [key, rows] : groups) {
    if (static_cast<int>(rows.size()) < std::max(threshold, 1)) continue;
    out.push_back(offender_of(key, rows));
  }
}

// GPUs whose application-class Xid verdicts recur in offender_threshold jobs of two or
// more users within [window_start, now]. One user's bug resubmitted onto the same GPU
// is not enough: several users' code failing on one GPU is a lead, and an offender that
// may be acted on only when a trusted hardware-class verdict also named that GPU
// (`hardware_gpus`); otherwise it is advisory.
void add_app_class_gpu_offenders(const std::vector<BlameRow>& rows, const FleetPolicy& policy, TimeUs window_start,
                                 TimeUs now_us, const std::set<std::pair<std::string, std::string>>& hardware_gpus,
                                 std::vector<Offender>& out) {
  std::map<std::pair<std::string, std::string>, std::vector<const BlameRow*>> by_gpu;
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<const BlameRow*> sorted;
  for (const BlameRow& row : rows) sorted.push_back(&row);
  std::stable_sort(sorted.begin(), sorted.end(), [](const BlameRow* a, const BlameRow* b) {
    return a->time_us != b->time_us ? a->time_us < b->time_us : a->job_id < b->job_id;
  });
  for (const BlameRow* row : sorted) {
    if (row->gpu.empty() || !row->trusted || row->domain != "APPLICATION" || row->time_us < window_start ||
        row->time_us > now_us)
      continue;
    if (std::find(policy.app_class_gpu_rules.begin(), policy.app_class_gpu_rules.end(), row->rule) ==
        policy.app_class_gpu_rules.end())
      continue;
    if (seen.insert({row->node + "/" + row->gpu, row->cluster + "/" + row->job_id}).second)
      by_gpu[{row->node, row->gpu}].push_back(row);
  }
  for (const auto& [key, group] : by_gpu) {
    std::set<std::string> users;
    for (const BlameRow* row : group) users.insert(row->user.empty() ? std::to_string(row->uid) : row->user);
    if (static_cast<int>(group.size()) < std::max(policy.offender_threshold, 1) || users.size() < 2) continue;
    const bool known = std::any_of(out.begin(), out.end(),
                                   [&, &key = key](const Offender& o) {  // clang < 16: no capture of a binding
                                     return o.node == key.first && o.gpu == key.second;
                                   });
    if (known) continue;  // already an offender on hardware verdicts
    Offender offender = offender_of(key, group);
    offender.basis = "app_class_xid";
    offender.advisory = hardware_gpus.count(key) == 0;
    out.push_back(std::move(offender));
  }
}

}  // namespace

bool counts_for_reputation(const std::string& domain, bool trusted, const FleetPolicy& policy) {
  return trusted && std::find(policy.offender_domains.begin(), policy.offender_domains.end(), domain) !=
                        policy.offender_domains.end();
}

OffenderReport evaluate_offenders(const std::vector<BlameRow>& rows, const FleetPolicy& policy, TimeUs now_us) {
  const TimeUs window_start = now_us - policy.offender_window_s * kSecond;
  // A burst that began just before the window still explains the rows inside it.
  const TimeUs systemic_start = window_start - policy.systemic_window_s * kSecond;
  std::vector<const BlameRow*> counted;
  for (const BlameRow& row : rows)
    if (!row.node.empty() && counts_for_reputation(row.domain, row.trusted, policy) && row.time_us >= systemic_start &&
        row.time_us <= now_us)
      counted.push_back(&row);
  std::stable_sort(counted.begin(), counted.end(), [](const BlameRow* a, const BlameRow* b) {
    return a->time_us != b->time_us ? a->time_us < b->time_us : a->job_id < b->job_id;
  });

  OffenderReport report;
  std::vector<bool> systemic;
  for (SystemicEvent& event : find_systemic(counted, policy, systemic))
    if (event.to_us >= window_start) report.systemic.push_back(std::move(event));

  // A job counts once per node (and once per GPU), whatever its rows say.
  std::map<std::pair<std::string, std::string>, std::vector<const BlameRow*>> by_node, by_gpu;
  std::set<std::pair<std::string, std::string>> seen_node, seen_gpu;
  for (size_t i = 0; i < counted.size(); ++i) {
    const BlameRow* row = counted[i];
    if (systemic[i] || row->time_us < window_start) continue;
    if (seen_node.insert({row->node, row->cluster + "/" + row->job_id}).second) by_node[{row->node, ""}].push_back(row);
    if (!row->gpu.empty() && seen_gpu.insert({row->node + "/" + row->gpu, row->cluster + "/" + row->job_id}).second)
      by_gpu[{row->node, row->gpu}].push_back(row);
  }
  add_offenders(by_node, policy.offender_threshold, report.offenders);
  add_offenders(by_gpu, policy.offender_threshold, report.offenders);
  std::set<std::pair<std::string, std::string>> hardware_gpus;
  for (const auto& [gpu, gpu_rows] : by_gpu) hardware_gpus.insert(gpu);
  add_app_class_gpu_offenders(rows, policy, window_start, now_us, hardware_gpus, report.offenders);
  std::sort(report.offenders.begin(), report.offenders.end(),
            [](const Offender& a, const Offender& b) { return a.node != b.node ? a.node < b.node : a.gpu < b.gpu; });
  return report;
}

Result<OffenderReport> repeat_offenders(store::Database& db, const FleetPolicy& policy, TimeUs now_us) {
  auto rows = store::blame_since(db, now_us - (policy.offender_window_s + policy.systemic_window_s) * kSecond);
  if (!rows) return rows.error();
  return evaluate_offenders(*rows, policy, now_us);
}

FleetPolicy fleet_policy(const common::FleetConfig& config) {
  FleetPolicy policy;
  policy.offender_threshold = config.offender_threshold;
  policy.offender_window_s = config.offender_window_s;
  policy.offender_domains = config.offender_domains;
  policy.systemic_nodes = config.systemic_nodes;
  policy.systemic_window_s = config.systemic_window_s;
  return policy;
}

}  // namespace attrib::fleet
