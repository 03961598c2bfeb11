// Every metric attributiond exports, declared in one place (names, help, labels,
// buckets) so docs/operations.md can be checked against it. The head and the node
// agent each own a Registry with their role's families; the code that does the work
// holds a pointer to its role's struct and counts at the point where it happens.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "attributiond/ops/metrics_registry.h"
#include "core/types.h"
#include "core/verdict.h"

namespace attrib::ops {

// Families both roles export.
void register_info(ops::MetricsRegistry& registry, const std::string& role, const std::string& rule_pack_version,
                   const std::string& rule_pack_hash);

struct HeadMetrics {
  explicit HeadMetrics(ops::MetricsRegistry& registry);

  ops::Family<ops::Counter>& jobs_accepted;   // hook, via
  ops::Family<ops::Counter>& jobs_duplicate;  // hook, via
  ops::Family<ops::Counter>& jobs_attributed;
  ops::Family<ops::Counter>& jobs_not_attributed;   // reason
  ops::Family<ops::Counter>& attribution_failures;  // step
  ops::Family<ops::Counter>& attribution_retries;   // reason
  ops::Family<ops::Counter>& scope_timeouts;
  ops::Family<ops::Counter>& verdicts;  // domain, rule
  ops::Family<ops::Counter>& coverage;  // source, status
  ops::Family<ops::Histogram>& attribution_latency;
  ops::Family<ops::Histogram>& attribution_phase;  // phase (pipeline/phase_times.h)
  ops::Family<ops::Counter>& spool_quarantined;
  ops::Family<ops::Counter>& jobs_dead_lettered;  // step
  ops::Family<ops::Counter>& api_requests;  // transport (http | grpc), result (attributiond/api)
  ops::Family<ops::Counter>& archive_pruned;      // what: evidence | runs
  ops::Family<ops::Gauge>& archive_used_bytes;

  // Counts one archived verdict: the job, its domain/rule, its coverage rows, and the
  // latency from `job_ended` (the job's end, else the hook's time) to `archived_at`.
  void record_verdict(const Verdict& verdict, TimeUs job_ended, TimeUs archived_at);
};

// The gauges read at scrape time from the head's own state.
void register_head_gauges(ops::MetricsRegistry& registry, std::function<std::optional<double>()> queue_depth,
                          std::function<std::optional<double>()> spool_backlog,
                          std::function<std::optional<double>()> slurmdbd_requests);

struct NodeMetrics {
  explicit NodeMetrics(ops::MetricsRegistry& registry);

  ops::Family<ops::Counter>& collect_requests;  // status
  ops::Family<ops::Histogram>& collect_duration;
  ops::Family<ops::Counter>& coverage;  // source, status
};

// `hook` label value: "epilog_slurmctld", "jobcomp_script", ... ("unspecified" when the
// sender did not say).
std::string hook_label(int hook_kind);

// The `source` label of a coverage row: every rank stream (app.rank<N>) counts as `app`,
// so a job's output cannot add a label value per rank (bounded cardinality).
std::string coverage_source_label(const std::string& source);

}  // namespace attrib::ops
