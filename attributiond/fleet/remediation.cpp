#include "attributiond/fleet/remediation.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace attrib::fleet {
namespace {

constexpr TimeUs kSecond = 1000000;
constexpr size_t kMaxReason = 255;  // what sinfo -R and scontrol show without truncation

std::string days(int64_t seconds) {
  if (seconds % 86400 == 0) return std::to_string(seconds / 86400) + "d";
  if (seconds % 3600 == 0) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds) + "s";
}

}  // namespace

std::string drain_reason(const std::string& job_id, const std::string& rule, const std::string& domain,
                         const std::string& suffix) {
  std::string reason = "attrib: job " + job_id + " rule " + rule + " " + domain;
  if (!suffix.empty()) reason += " " + suffix;
  // slurmctld stores any text, but scontrol/sinfo users and scripts expect one short line.
  for (char& c : reason)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  if (reason.size() > kMaxReason) reason.resize(kMaxReason);
  return reason;
}

Remediator::Remediator(common::RemediationConfig config, FleetPolicy policy,
                       std::unique_ptr<slurm::NodeDrainer> drainer)
    : config_(std::move(config)), policy_(std::move(policy)), drainer_(std::move(drainer)) {
  if (!drainer_) config_.mode = "off";
}

Result<std::optional<store::RemediationRecord>> Remediator::after_verdict(store::JobStore& jobs,
                                                                          const store::JobKey& key, TimeUs now) {
  using Out = std::optional<store::RemediationRecord>;
  if (!enabled()) return Out();
  std::lock_guard lock(mutex_);
  const bool dry_run = config_.mode == "dry-run";

  auto found = jobs.with_db([&](store::Database& db) { return store::job_blame(db, key); });
  if (!found) return found.error();
  if (!found->has_value()) return Out();  // the verdict blames no node
  const store::BlameRow& blame = **found;
  auto decided = jobs.with_db(
      [&](store::Database& db) { return store::remediation_decided(db, blame.cluster, blame.job_id, blame.node); });
  if (!decided) return decided.error();
  if (*decided) return Out();

  auto report = jobs.with_db([&](store::Database& db) { return repeat_offenders(db, policy_, now); });
  if (!report) return report.error();
  // The node-level entry first: it is what a drain acts on.
  const Offender* offender = nullptr;
  // Advisory offenders (application-class Xids without hardware evidence) never act.
  for (const Offender& o : report->offenders)
    if (!o.advisory && o.node == blame.node &&
        std::find(o.job_ids.begin(), o.job_ids.end(), blame.job_id) != o.job_ids.end() &&
        (offender == nullptr || o.gpu.empty()))
      offender = &o;
  const bool verdict_trigger = config_.on_verdict && blame.action == "DRAIN_NODE" && blame.trusted;
  const bool offender_trigger = config_.on_repeat_offender && offender != nullptr;
  if (!verdict_trigger && !offender_trigger) return Out();

  store::RemediationRecord record;
  record.time_us = now;
  record.cluster = blame.cluster;
  record.node = blame.node;
  record.job_id = blame.job_id;
  record.rule = blame.rule;
  std::string offender_text;
  if (offender != nullptr)
    offender_text = "repeat offender" + (offender->gpu.empty() ? std::string() : " gpu " + offender->gpu) + " (" +
                    std::to_string(offender->verdicts) + " in " + days(policy_.offender_window_s) + ")";
  record.reason = drain_reason(blame.job_id, blame.rule, blame.domain, offender_trigger ? offender_text : "");
  record.detail = verdict_trigger ? "verdict recommends DRAIN_NODE (trusted root cause)" : offender_text;
  if (verdict_trigger && offender != nullptr) record.detail += "; " + offender_text;

  auto decide = [&]() -> Status {
    for (const SystemicEvent& event : report->systemic) {
      if (blame.time_us >= event.from_us && blame.time_us <= event.to_us) {
        record.action = "skipped_systemic";
        record.detail += "; systemic event: " + std::to_string(event.nodes) + " nodes blamed (" + event.domain +
                         ") between " + format_time(event.from_us) + " and " + format_time(event.to_us);
        return ok_status();
      }
    }
    // Reading the state changes nothing, so dry-run asks too and reports what a real run would.
    auto state = drainer_->state(blame.node);
    if (!state && !dry_run) {
      record.action = "failed";
      record.detail += "; cannot read the node's state from slurmctld: " + state.error().message;
      return ok_status();
    }
    if (state && state->drained) {
      record.action = "skipped_already_drained";
      record.detail += "; already drained: " + (state->reason.empty() ? std::string("(no reason)") : state->reason);
      return ok_status();
    }
    const std::string counted = dry_run ? "would_drain" : "drained";
    auto recent = jobs.with_db(
        [&](store::Database& db) { return store::remediation_count_since(db, counted, now - 3600 * kSecond); });
    if (!recent) return recent.error();
    if (*recent >= config_.max_drains_per_hour) {
      record.action = "skipped_rate_limited";
      record.detail += "; " + std::to_string(*recent) + " drains in the last hour (remediation.max_drains_per_hour " +
                       std::to_string(config_.max_drains_per_hour) + ")";
      return ok_status();
    }
    if (dry_run) {
      record.action = "would_drain";
      if (!state) record.detail += "; node state unknown: " + state.error().message;
      return ok_status();
    }
    if (auto drained = drainer_->drain(blame.node, record.reason); !drained) {
      record.action = "failed";
      record.detail += "; slurmctld refused the drain: " + drained.error().message;
      return ok_status();
    }
    record.action = "drained";
    return ok_status();
  };
  if (auto s = decide(); !s) return s.error();

  if (auto s = jobs.with_db([&](store::Database& db) { return store::insert_remediation(db, record); }); !s)
    return s.error();
  if (record.action == "drained" || record.action == "failed")
    spdlog::warn("remediation: node {} {} for job {} ({}): {}", record.node, record.action, record.job_id,
                 record.reason, record.detail);
  else
    spdlog::info("remediation: node {} {} for job {} ({}): {}", record.node, record.action, record.job_id,
                 record.reason, record.detail);
  return Out(std::move(record));
}

}  // namespace attrib::fleet
