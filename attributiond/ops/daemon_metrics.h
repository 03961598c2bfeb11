// Every metric attributiond exports, declared in one place (names, help, labels,
// buckets) so docs/operations.md can be checked against it. The head and the node
// agent each own a Registry with their role's families; the code that does the work
// holds a pointer to its role's struct and counts at the point where it happens.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/types.h"
#include "core/verdict.h"
#include "attributiond/ops/metrics_registry.h"

namespace attrib::head {

// Families both roles export.
void register_info(metrics::Registry& registry, const std::string& role, const std::string& rule_pack_version,
                   const std::string& rule_pack_hash);

struct HeadMetrics {
  explicit HeadMetrics(metrics::Registry& registry);

  metrics::Family<metrics::Counter>& jobs_accepted;      // hook, via
  metrics::Family<metrics::Counter>& jobs_duplicate;     // hook, via
  metrics::Family<metrics::Counter>& jobs_attributed;
  metrics::Family<metrics::Counter>& jobs_not_attributed;  // reason
  metrics::Family<metrics::Counter>& attribution_failures;  // step
  metrics::Family<metrics::Counter>& attribution_retries;   // reason
  metrics::Family<metrics::Counter>& scope_timeouts;
  metrics::Family<metrics::Counter>& verdicts;  // domain, rule
  metrics::Family<metrics::Counter>& coverage;  // source, status
  metrics::Family<metrics::Histogram>& attribution_latency;
  metrics::Family<metrics::Counter>& spool_quarantined;

  // Counts one archived verdict: the job, its domain/rule, its coverage rows, and the
  // latency from `job_ended` (the job's end, else the hook's time) to `archived_at`.
  void record_verdict(const Verdict& verdict, TimeUs job_ended, TimeUs archived_at);
};

// The gauges read at scrape time from the head's own state.
void register_head_gauges(metrics::Registry& registry, std::function<std::optional<double>()> queue_depth,
                          std::function<std::optional<double>()> spool_backlog);

struct NodeMetrics {
  explicit NodeMetrics(metrics::Registry& registry);

  metrics::Family<metrics::Counter>& collect_requests;  // status
  metrics::Family<metrics::Histogram>& collect_duration;
  metrics::Family<metrics::Counter>& coverage;  // source, status
};

// `hook` label value: "epilog_slurmctld", "jobcomp_script", ... ("unspecified" when the
// sender did not say).
std::string hook_label(int hook_kind);

}  // namespace attrib::head
