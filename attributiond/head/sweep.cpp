#include "attributiond/head/sweep.h"

#include <spdlog/spdlog.h>

#include "attributiond/head/attribution_service.h"

namespace attrib::head {

Result<SweepCount> queue_unknown_attempts(store::JobStore& store, const std::vector<slurm::JobRecordFacts>& attempts,
                                          const std::string& cluster, TimeUs now) {
  SweepCount count;
  for (const slurm::JobRecordFacts& attempt : attempts) {
    const JobFacts& facts = attempt.facts;
    if (!attempt.submit || !facts.end) continue;  // listed rows have both; nothing to compare otherwise
    auto known = store.knows_attempt(cluster, facts.job_id, *attempt.submit, *facts.end);
    if (!known) return known.error();
    if (*known) {
      ++count.known;
      continue;
    }
    // What a hook would have said; the worker reads the attempt's row like any other.
    v1::JobEnded report;
    report.set_job_id(facts.job_id);
    report.set_cluster(cluster);
    // A row not final yet names only the batch host (slurmdbd fills in the allocation
    // seconds after the end): no node list then, so the worker waits for the whole row
    // and takes the nodes from it (a hook's list would stand for the job's).
    std::string nodes;
    if (attempt.final)
      for (const std::string& node : facts.nodes) nodes += (nodes.empty() ? "" : ",") + node;
    report.set_node_list(nodes);
    report.set_hook(v1::HOOK_KIND_SWEEP);
    report.set_hook_time_us(*facts.end);
    if (facts.start) report.set_start_time_us(*facts.start);
    report.set_end_time_us(*facts.end);
    if (facts.uid) report.set_uid(*facts.uid);
    auto accepted = accept_job(store, report, cluster, now);
    if (!accepted) return accepted.error();
    if (*accepted) {
      ++count.queued;
      spdlog::warn("sweep: job {} ended with no report from a hook; queued", facts.job_id);
    }
  }
  return count;
}

Result<SweepCount> sweep_once(store::JobStore& store, slurm::Accounting& accounting, const std::string& cluster,
                              TimeUs since, TimeUs until, TimeUs now) {
  auto ended = accounting.ended_attempts(cluster, since, until);
  if (!ended) return ended.error();
  return queue_unknown_attempts(store, *ended, cluster, now);
}

}  // namespace attrib::head
