#include "attributiond/ops/daemon_metrics.h"

#include <algorithm>
#include <cctype>

#include "attrib/v1/attrib.pb.h"

namespace attrib::ops {

void register_info(ops::MetricsRegistry& registry, const std::string& role, const std::string& rule_pack_version,
                   const std::string& rule_pack_hash) {
  registry
      .gauge("attrib_info", "Constant 1; labels name this daemon's role and the rule pack it runs.",
             {"role", "rule_pack_version", "rule_pack_hash"})
      .labels({role, rule_pack_version, rule_pack_hash})
      .set(1);
}

HeadMetrics::HeadMetrics(ops::MetricsRegistry& registry)
    : jobs_accepted(registry.counter("attrib_jobs_accepted_total",
                                     "Jobs newly queued for attribution, by the hook that reported them and the "
                                     "path they came by (rpc: JobEnded call; spool: file left by attrib-epilog).",
                                     {"hook", "via"})),
      jobs_duplicate(registry.counter(
          "attrib_jobs_duplicate_total",
          "JobEnded reports for jobs already queued (e.g. a second hook); not queued again.", {"hook", "via"})),
      jobs_attributed(registry.counter("attrib_jobs_attributed_total", "Jobs whose verdict was made and archived.")),
      jobs_not_attributed(
          registry.counter("attrib_jobs_not_attributed_total",
                           "Jobs recorded without a verdict, by reason (opt_out: the user's "
                           "--attrib=off, honoured because head.allow_opt_out is set; same_attempt: a second report "
                           "of an attempt already attributed, folded into its run).",
                           {"reason"})),
      attribution_failures(registry.counter(
          "attrib_attribution_failures_total",
          "Attribution steps that failed with an error, by step (scope: reading the accounting record; archive: "
          "writing the verdict; comment: writing the Slurm comment; sink: a verdict sink (its file or spool); "
          "done/opt_out: updating the queue; exception: "
          "an unexpected error). The job is retried after an exponential backoff from head.retry_backoff_s.",
          {"step"})),
      attribution_retries(registry.counter(
          "attrib_attribution_retries_total",
          "Attribution attempts that rescheduled their job, by reason (accounting_pending: slurmdbd's record is "
          "not final yet, the normal lag; accounting_unreachable: slurmdbd cannot be reached, the job waits; "
          "failure: a step failed, see attrib_attribution_failures_total).",
          {"reason"})),
      scope_timeouts(registry.counter("attrib_scope_timeouts_total",
                                      "Jobs attributed without a final accounting record: still not final after "
                                      "head.scope_max_wait_s, or slurmdbd unreachable for longer than "
                                      "head.accounting_outage_max_wait_s.")),
      verdicts(registry.counter("attrib_verdicts_total",
                                "Archived verdicts by domain and root-cause rule (rule=\"none\" when the verdict "
                                "has no single root cause: NONE without a rule, AMBIGUOUS, UNATTRIBUTED).",
                                {"domain", "rule"})),
      coverage(registry.counter("attrib_collector_coverage_total",
                                "Coverage rows of archived verdicts (one per node and source), by source and "
                                "status (ok, empty, partial, failed, timeout, unavailable, not_configured, refused).",
                                {"source", "status"})),
      attribution_latency(registry.histogram(
          "attrib_attribution_latency_seconds",
          "Seconds from the job's end (the accounting record's, else the hook's time) to its archived verdict.",
          {1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600})),
      attribution_phase(registry.histogram(
          "attrib_attribution_phase_seconds",
          "Seconds each phase of an attribution took, job end to comment: hook (job end to the hook's run), queue "
          "(to the head queueing it), record (waiting for slurmdbd's final record), collect, rules, archive, comment.",
          {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300}, {"phase"})),
      spool_quarantined(registry.counter("attrib_spool_quarantined_total",
                                         "Spool files that could not be read and were moved to the spool's bad/ "
                                         "directory.")),
      jobs_dead_lettered(registry.counter("attrib_jobs_dead_lettered_total",
                                          "Jobs given up after head.max_failures failed attempts (or whose queued "
                                          "request could not be decoded), by the step that failed last; listed by "
                                          "attrib-show --failed.",
                                          {"step"})),
      api_requests(registry.counter("attrib_api_requests_total",
                                    "Requests of the attribution API (docs/api.md) by transport (http, grpc) and "
                                    "result: attributed, duplicate (the attempt was judged before), invalid, "
                                    "unauthenticated, too_large, rate_limited, failed.",
                                    {"transport", "result"})),
      archive_pruned(registry.counter("attrib_archive_pruned_total",
                                      "Archived runs the archive's retention pruned (archive.*), by what went: "
                                      "evidence (the run's raw evidence only) or runs (the whole run).",
                                      {"what"})),
      archive_used_bytes(registry.gauge("attrib_archive_used_bytes",
                                        "Bytes of the archive's SQLite pages in use (what archive.max_bytes "
                                        "bounds), as of the last retention pass.")) {}

void HeadMetrics::record_verdict(const Verdict& verdict, TimeUs job_ended, TimeUs archived_at) {
  jobs_attributed.get().inc();
  verdicts.labels({verdict.domain, verdict.root_cause ? verdict.root_cause->rule : "none"}).inc();
  for (const Coverage& row : verdict.coverage)
    coverage.labels({coverage_source_label(row.source), to_string(row.status)}).inc();
  // A clock step can put the end after the archive time; a latency is never negative.
  attribution_latency.get().observe(std::max<TimeUs>(archived_at - job_ended, 0) / 1e6);
}

void register_head_gauges(ops::MetricsRegistry& registry, std::function<std::optional<double>()> queue_depth,
                          std::function<std::optional<double>()> spool_backlog,
                          std::function<std::optional<double>()> slurmdbd_requests) {
  registry.gauge_callback("attrib_queue_depth",
                          "Jobs in the durable queue that are not done (waiting, being attributed, or archived "
                          "with the Slurm comment still to write).",
                          std::move(queue_depth));
  registry.gauge_callback("attrib_spool_backlog",
                          "Files waiting in head.spool_dir (jobs attrib-epilog could not deliver), read at scrape "
                          "time.",
                          std::move(spool_backlog));
  registry.gauge_callback("attrib_slurmdbd_requests",
                          "Requests the head has sent to slurmdbd since it started (job reads and comment writes; "
                          "each is one round trip), read at scrape time: divided by attrib_jobs_attributed_total, "
                          "what a job costs slurmdbd.",
                          std::move(slurmdbd_requests));
}

NodeMetrics::NodeMetrics(ops::MetricsRegistry& registry)
    : collect_requests(registry.counter("attrib_collect_requests_total",
                                        "Collect requests served by this node agent, by gRPC status (ok, "
                                        "failed_precondition: addressed to another node, invalid_argument).",
                                        {"status"})),
      collect_duration(registry.histogram("attrib_collect_duration_seconds",
                                          "Seconds a node agent spent serving one Collect request.",
                                          {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60})),
      coverage(registry.counter("attrib_collector_coverage_total",
                                "Coverage rows this node agent returned (one per source and request), by source "
                                "and status.",
                                {"source", "status"})) {}

std::string coverage_source_label(const std::string& source) {
  return source.rfind("app.rank", 0) == 0 ? "app" : source;
}

std::string hook_label(int hook_kind) {
  std::string name = v1::HookKind_Name(static_cast<v1::HookKind>(hook_kind));
  if (name.empty()) return "unknown";
  if (name.rfind("HOOK_KIND_", 0) == 0) name = name.substr(10);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name;
}

}  // namespace attrib::ops
