#include "attributiond/fleet/fleet_history.h"

#include <algorithm>
#include <map>
#include <set>

namespace attrib::head {
namespace {

constexpr TimeUs kSecond = 1000000;

const char* kBlameColumns =
    "cluster, job_id, node, gpu, domain, rule, state, user_name, uid, time_us, trusted, action";

BlameRow blame_row(const db::Statement& stmt, const FleetPolicy& policy) {
  BlameRow row;
  row.cluster = stmt.text_at(0);
  row.job_id = stmt.text_at(1);
  row.node = stmt.text_at(2);
  row.gpu = stmt.text_at(3);
  row.domain = stmt.text_at(4);
  row.rule = stmt.text_at(5);
  row.state = stmt.text_at(6);
  row.user = stmt.text_at(7);
  row.uid = static_cast<uint32_t>(stmt.int_at(8));
  row.time_us = stmt.int_at(9);
  row.trusted = stmt.int_at(10) != 0;
  row.action = stmt.text_at(11);
  row.counts_for_reputation = counts_for_reputation(row.domain, row.trusted, policy);
  return row;
}

Result<std::vector<BlameRow>> read_blame(db::Statement& stmt, const FleetPolicy& policy) {
  if (!stmt.ok()) return Error{"DB_E_PREPARE", stmt.error()};
  std::vector<BlameRow> rows;
  while (stmt.step()) rows.push_back(blame_row(stmt, policy));
  if (!stmt.error().empty()) return Error{"DB_E_STEP", stmt.error()};
  return rows;
}

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

void add_offenders(const std::map<std::pair<std::string, std::string>, std::vector<const BlameRow*>>& groups,
                   int threshold, std::vector<Offender>& out) {
  for (const auto& [key, rows] : groups) {
    if (static_cast<int>(rows.size()) < std::max(threshold, 1)) continue;
    Offender offender;
    offender.node = key.first;
    offender.gpu = key.second;
    offender.verdicts = static_cast<int>(rows.size());
    offender.first_us = rows.front()->time_us;
    offender.last_us = rows.back()->time_us;
    for (const BlameRow* row : rows) offender.job_ids.push_back(row->job_id);
    out.push_back(std::move(offender));
  }
}

// GPUs whose application-class Xid verdicts recur in offender_threshold jobs of two or
// more users within [window_start, now]. One user's bug resubmitted onto the same GPU
// is not enough: several users' code failing on one GPU is.
void add_app_class_gpu_offenders(const std::vector<BlameRow>& rows, const FleetPolicy& policy, TimeUs window_start,
                                 TimeUs now_us, std::vector<Offender>& out) {
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
                                   [&](const Offender& o) { return o.node == key.first && o.gpu == key.second; });
    if (known) continue;  // already an offender on hardware verdicts
    Offender offender;
    offender.node = key.first;
    offender.gpu = key.second;
    offender.verdicts = static_cast<int>(group.size());
    offender.first_us = group.front()->time_us;
    offender.last_us = group.back()->time_us;
    for (const BlameRow* row : group) offender.job_ids.push_back(row->job_id);
    offender.basis = "app_class_xid";
    out.push_back(std::move(offender));
  }
}

}  // namespace

bool counts_for_reputation(const std::string& domain, bool trusted, const FleetPolicy& policy) {
  return trusted && std::find(policy.offender_domains.begin(), policy.offender_domains.end(), domain) !=
                        policy.offender_domains.end();
}

Result<std::vector<BlameRow>> node_history(db::Database& db, const std::string& node, TimeUs since_us,
                                           const FleetPolicy& policy) {
  auto stmt = db.prepare(std::string("SELECT ") + kBlameColumns +
                         " FROM history WHERE node = ? AND time_us >= ? ORDER BY time_us, job_id");
  stmt.bind(1, node).bind(2, since_us);
  return read_blame(stmt, policy);
}

Result<std::optional<BlameRow>> job_blame(db::Database& db, const std::pair<std::string, std::string>& key,
                                          const FleetPolicy& policy) {
  auto stmt = db.prepare(std::string("SELECT ") + kBlameColumns +
                         " FROM history WHERE cluster = ? AND job_id = ? AND node != ''");
  stmt.bind(1, key.first).bind(2, key.second);
  auto rows = read_blame(stmt, policy);
  if (!rows) return rows.error();
  if (rows->empty()) return std::optional<BlameRow>();
  return std::optional<BlameRow>(std::move(rows->front()));
}

Result<std::vector<BlameRow>> blame_since(db::Database& db, TimeUs since_us, const FleetPolicy& policy) {
  auto stmt = db.prepare(std::string("SELECT ") + kBlameColumns +
                         " FROM history WHERE node != '' AND time_us >= ? ORDER BY time_us, job_id");
  stmt.bind(1, since_us);
  return read_blame(stmt, policy);
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
    if (seen_node.insert({row->node, row->cluster + "/" + row->job_id}).second)
      by_node[{row->node, ""}].push_back(row);
    if (!row->gpu.empty() && seen_gpu.insert({row->node + "/" + row->gpu, row->cluster + "/" + row->job_id}).second)
      by_gpu[{row->node, row->gpu}].push_back(row);
  }
  add_offenders(by_node, policy.offender_threshold, report.offenders);
  add_offenders(by_gpu, policy.offender_threshold, report.offenders);
  add_app_class_gpu_offenders(rows, policy, window_start, now_us, report.offenders);
  std::sort(report.offenders.begin(), report.offenders.end(), [](const Offender& a, const Offender& b) {
    return a.node != b.node ? a.node < b.node : a.gpu < b.gpu;
  });
  return report;
}

Result<OffenderReport> repeat_offenders(db::Database& db, const FleetPolicy& policy, TimeUs now_us) {
  auto rows = blame_since(db, now_us - (policy.offender_window_s + policy.systemic_window_s) * kSecond, policy);
  if (!rows) return rows.error();
  return evaluate_offenders(*rows, policy, now_us);
}

Result<std::vector<VerdictRow>> verdicts_since(db::Database& db, TimeUs since_us, const std::string& domain) {
  auto stmt = db.prepare(
      "SELECT cluster, job_id, user_name, uid, state, domain, rule, action, node, gpu, affected_nodes, time_us, "
      "trusted FROM history WHERE time_us >= ? AND (CASE WHEN ? = '' THEN domain != 'NONE' ELSE domain = ? END) "
      "ORDER BY time_us, job_id");
  stmt.bind(1, since_us).bind(2, domain).bind(3, domain);
  if (!stmt.ok()) return Error{"DB_E_PREPARE", stmt.error()};
  std::vector<VerdictRow> rows;
  while (stmt.step()) {
    VerdictRow row;
    row.cluster = stmt.text_at(0);
    row.job_id = stmt.text_at(1);
    row.user = stmt.text_at(2);
    row.uid = static_cast<uint32_t>(stmt.int_at(3));
    row.state = stmt.text_at(4);
    row.domain = stmt.text_at(5);
    row.rule = stmt.text_at(6);
    row.action = stmt.text_at(7);
    row.node = stmt.text_at(8);
    row.gpu = stmt.text_at(9);
    row.affected_nodes = stmt.text_at(10);
    row.time_us = stmt.int_at(11);
    row.trusted = stmt.int_at(12) != 0;
    rows.push_back(std::move(row));
  }
  if (!stmt.error().empty()) return Error{"DB_E_STEP", stmt.error()};
  return rows;
}

Result<std::vector<DomainCount>> domain_counts(db::Database& db, TimeUs since_us) {
  auto stmt = db.prepare(
      "SELECT domain, count(*) FROM history WHERE time_us >= ? GROUP BY domain ORDER BY count(*) DESC, domain");
  stmt.bind(1, since_us);
  if (!stmt.ok()) return Error{"DB_E_PREPARE", stmt.error()};
  std::vector<DomainCount> counts;
  while (stmt.step()) counts.push_back({stmt.text_at(0), stmt.int_at(1)});
  if (!stmt.error().empty()) return Error{"DB_E_STEP", stmt.error()};
  return counts;
}

Result<std::vector<RemediationRecord>> remediation_history(db::Database& db, const std::string& node,
                                                           TimeUs since_us) {
  auto stmt = db.prepare(
      "SELECT id, time_us, cluster, node, job_id, rule, action, reason, detail FROM remediation "
      "WHERE time_us >= ? AND (? = '' OR node = ?) ORDER BY time_us, id");
  stmt.bind(1, since_us).bind(2, node).bind(3, node);
  if (!stmt.ok()) return Error{"DB_E_PREPARE", stmt.error()};
  std::vector<RemediationRecord> records;
  while (stmt.step()) {
    RemediationRecord r;
    r.id = stmt.int_at(0);
    r.time_us = stmt.int_at(1);
    r.cluster = stmt.text_at(2);
    r.node = stmt.text_at(3);
    r.job_id = stmt.text_at(4);
    r.rule = stmt.text_at(5);
    r.action = stmt.text_at(6);
    r.reason = stmt.text_at(7);
    r.detail = stmt.text_at(8);
    records.push_back(std::move(r));
  }
  if (!stmt.error().empty()) return Error{"DB_E_STEP", stmt.error()};
  return records;
}

}  // namespace attrib::head
