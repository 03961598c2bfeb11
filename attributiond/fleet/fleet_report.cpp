#include "attributiond/fleet/fleet_report.h"

#include "common/auth.h"
#include "core/json_text.h"

namespace attrib::fleet {
namespace {

// A cap on a node's listed verdicts: gRPC's default message limit is 4 MiB, and the read
// stays short; narrow --since for older ones.
constexpr size_t kMaxNodeVerdicts = 5000;

// The fields a node's history and a verdict listing share (store::BlameRow and
// store::VerdictRow), one shape for both.
template <typename Row>
nlohmann::json verdict_row_json(const Row& r) {
  return {{"cluster", r.cluster}, {"job_id", r.job_id}, {"time", time_or_null(r.time_us)},
          {"user", r.user},       {"uid", r.uid},       {"state", r.state},
          {"domain", r.domain},   {"rule", r.rule},     {"action", r.action},
          {"gpu", r.gpu},         {"trusted", r.trusted}};
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

Result<nlohmann::json> node_history_report(store::Database& db, const std::string& node, TimeUs since_us,
                                           const FleetPolicy& policy, TimeUs now_us, const std::string& cluster) {
  auto history = store::node_history(db, node, since_us, cluster, kMaxNodeVerdicts + 1);
  if (!history) return history.error();
  const bool truncated = history->size() > kMaxNodeVerdicts;
  if (truncated) history->erase(history->begin());  // the oldest: the newest kMaxNodeVerdicts are listed
  // Threshold 1 gives every node's counted verdicts; the real threshold decides the flag.
  FleetPolicy every = policy;
  every.offender_threshold = 1;
  auto report = repeat_offenders(db, every, now_us);
  if (!report) return report.error();
  auto actions = store::remediation_history(db, node, since_us);
  if (!actions) return actions.error();

  nlohmann::json out;
  out["schema"] = "attrib.node_history.v1";
  out["node"] = node;
  out["cluster"] = cluster;
  out["since"] = time_or_null(since_us);
  out["now"] = format_time(now_us);
  out["policy"] = {{"offender_threshold", policy.offender_threshold},
                   {"offender_window_s", policy.offender_window_s},
                   {"offender_domains", policy.offender_domains},
                   {"systemic_nodes", policy.systemic_nodes},
                   {"systemic_window_s", policy.systemic_window_s}};
  out["offender"] = false;
  out["counted"] = 0;  // counted verdicts against the node within the window
  out["offenders"] = nlohmann::json::array();
  for (const Offender& o : report->offenders) {
    if (o.node != node) continue;
    bool offender = o.verdicts >= policy.offender_threshold;
    if (o.gpu.empty()) {
      out["offender"] = offender;
      out["counted"] = o.verdicts;
    }
    out["offenders"].push_back({{"node", o.node},
                                {"gpu", o.gpu},
                                {"verdicts", o.verdicts},
                                {"offender", offender},
                                {"first", time_or_null(o.first_us)},
                                {"last", time_or_null(o.last_us)},
                                {"job_ids", o.job_ids},
                                {"basis", o.basis},
                                {"advisory", o.advisory}});
  }
  out["systemic"] = nlohmann::json::array();
  for (const SystemicEvent& e : report->systemic)
    out["systemic"].push_back(
        {{"from", format_time(e.from_us)}, {"to", format_time(e.to_us)}, {"nodes", e.nodes}, {"domain", e.domain}});
  out["verdicts"] = nlohmann::json::array();
  out["truncated"] = truncated;
  for (const store::BlameRow& r : *history) {
    nlohmann::json row = verdict_row_json(r);
    row["counts"] = counts_for_reputation(r.domain, r.trusted, policy);
    out["verdicts"].push_back(std::move(row));
  }
  out["remediation"] = nlohmann::json::array();
  for (const store::RemediationRecord& a : *actions) {
    if (!cluster.empty() && a.cluster != cluster) continue;
    out["remediation"].push_back({{"time", format_time(a.time_us)},
                                  {"cluster", a.cluster},
                                  {"node", a.node},
                                  {"job_id", a.job_id},
                                  {"rule", a.rule},
                                  {"action", a.action},
                                  {"reason", a.reason},
                                  {"detail", a.detail}});
  }
  return out;
}

Result<nlohmann::json> verdict_list_report(store::Database& db, const store::VerdictQuery& query,
                                           std::optional<store::PageKey>* next) {
  auto page = store::verdict_page(db, query);
  if (!page) return page.error();
  nlohmann::json out;
  out["schema"] = "attrib.verdict_list.v1";
  out["cluster"] = query.cluster;
  out["since"] = time_or_null(query.since_us);
  out["domain"] = query.domain;
  out["own_jobs_only"] = query.owner.has_value();
  // Counts once per listing, with its first page: the later pages are only rows.
  if (!query.after) {
    auto counts = store::domain_counts(db, query);
    if (!counts) return counts.error();
    out["counts"] = nlohmann::json::array();
    for (const store::DomainCount& c : *counts) out["counts"].push_back({{"domain", c.domain}, {"jobs", c.jobs}});
  }
  out["verdicts"] = nlohmann::json::array();
  out["truncated"] = page->next.has_value();
  for (const store::VerdictRow& r : page->rows) {
    nlohmann::json row = verdict_row_json(r);
    row["node"] = r.node;
    row["affected_nodes"] = split_commas(r.affected_nodes);
    out["verdicts"].push_back(std::move(row));
  }
  if (next != nullptr) *next = page->next;
  return out;
}

nlohmann::json failed_list_report(const std::vector<store::FailedJob>& failed, std::optional<uid_t> owner,
                                  const std::string& cluster) {
  nlohmann::json out;
  out["schema"] = "attrib.failed_list.v1";
  out["cluster"] = cluster;
  out["own_jobs_only"] = owner.has_value();
  out["jobs"] = nlohmann::json::array();
  for (const store::FailedJob& job : failed) {
    if (!cluster.empty() && job.key.cluster != cluster) continue;
    if (owner) {
      auto uid = common::job_owner_uid(job.uid, job.user);
      if (!uid || *uid != *owner) continue;
    }
    out["jobs"].push_back({{"cluster", job.key.cluster},
                           {"job_id", job.key.job_id},
                           {"run", job.key.run},
                           {"failures", job.failures},
                           {"failed", time_or_null(job.failed_us)},
                           {"user", job.user},
                           {"uid", job.uid},
                           {"last_error", job.last_error}});
  }
  return out;
}

}  // namespace attrib::fleet
