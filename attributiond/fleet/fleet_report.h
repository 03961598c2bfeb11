// The JSON documents behind GetNodeHistory and ListVerdicts (docs/fleet.md), built from
// the fleet history queries (attributiond/store/fleet_queries.h) and the offender policy. attrib-show prints them as is
// with --json and renders them as text otherwise.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "attributiond/fleet/offender_policy.h"
#include "attributiond/store/fleet_queries.h"
#include "attributiond/store/job_store.h"

namespace attrib::fleet {

// attrib.node_history.v1: the node's blame history since since_us (0: all; the newest
// kMaxNodeVerdicts, "truncated" when there are more), its offender
// status under policy at now_us (node and per GPU), systemic events in the offender
// window, and remediation records for the node. cluster "" for every cluster.
Result<nlohmann::json> node_history_report(store::Database& db, const std::string& node, TimeUs since_us,
                                           const FleetPolicy& policy, TimeUs now_us, const std::string& cluster);

// attrib.verdict_list.v1: one page of the verdicts query asks for (domain "" : every
// domain but NONE; owner: only jobs that ran as this uid, for non-admins) and, on the
// first page, the per-domain counts (NONE included) under the same filters. "truncated"
// says more verdicts follow; *next is then set to the key the next page starts after.
Result<nlohmann::json> verdict_list_report(store::Database& db, const store::VerdictQuery& query,
                                           std::optional<store::PageKey>* next);

// attrib.failed_list.v1: dead-lettered jobs (attrib-show --failed), newest first. owner:
// only jobs that ran as this uid (non-admins). cluster "" for every cluster.
nlohmann::json failed_list_report(const std::vector<store::FailedJob>& failed, std::optional<uid_t> owner,
                                  const std::string& cluster);

}  // namespace attrib::fleet
