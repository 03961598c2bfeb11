// One node's evidence for one job window: the events extracted at the edge and the
// coverage of every source read. Produced locally (head collectors, node agents) or
// received from a node agent over the Collect RPC.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attrib/v1/attrib.pb.h"
#include "collectors/collector.h"
#include "rules/engine.h"
#include "rules/evidence/raw_lines.h"

namespace attrib::pipeline {

struct NodeEvidence {
  std::vector<Event> events;  // folded, ids not yet assigned
  std::vector<Coverage> coverage;
  rules::RawLines raw_lines;  // as read, for the archive's raw evidence (collect_node)
  uint64_t raw_dropped = 0;   // lines read past the raw evidence budget
};

// Runs every collector for request.node over the window and extracts events right
// there, so only events (not raw lines) leave the node.
// `only`: collector names to run; empty runs them all.
// `raw_budget_bytes`: when given, the lines read are also kept in raw_lines while their
// text fits in it (it is used up; the rest is counted in raw_dropped).
NodeEvidence collect_node(const std::shared_ptr<const rules::RulePack>& pack,
                          const std::vector<std::unique_ptr<collectors::Collector>>& collectors,
                          const collectors::CollectRequest& request, const std::vector<std::string>& only = {},
                          uint64_t* raw_budget_bytes = nullptr);

// One row per (node, source): two collectors can read the same source of a node (the
// journal's application identifiers and the job's output files are both `app`), and
// the verdict's coverage matrix must not show it twice. Merged: lines and events summed,
// windows joined, details kept; status `ok`/`empty` when read, `partial` when any part
// was partial or another collector of that source failed or timed out; with nothing
// read, the most telling failure (failed, timeout, unavailable, not_configured). Linear
// in the rows; the first row's order is kept.
std::vector<Coverage> merge_coverage_rows(std::vector<Coverage> rows);

v1::CollectResponse to_proto(const NodeEvidence& evidence, const std::string& ruleset_hash);
// The answer of the agent of `node`: its raw lines are that node's.
NodeEvidence from_proto(const v1::CollectResponse& response, const std::string& node);

}  // namespace attrib::pipeline
