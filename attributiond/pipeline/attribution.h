// One attribution attempt for one queued job: scope it from accounting, collect its
// window on every allocated node, run the rules, archive the verdict, write the comment.
//
// Each step is idempotent and its result durable before the next starts, so an attempt
// can stop anywhere (daemon killed, slurmdbd down) and a later attempt finishes the job.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attributiond/fleet/remediation.h"
#include "attributiond/ops/daemon_metrics.h"
#include "attributiond/pipeline/agent_fanout.h"
#include "attributiond/pipeline/phase_times.h"
#include "attributiond/sinks/verdict_sink.h"
#include "attributiond/store/job_store.h"
#include "collectors/collector.h"
#include "common/config.h"
#include "rules/evidence/bundle_export.h"
#include "rules/engine.h"
#include "slurm/accounting.h"

namespace attrib::pipeline {

struct AttributionContext {
  const common::HeadConfig& config;
  const std::string& default_cluster;
  std::shared_ptr<const rules::RulePack> pack;
  const std::vector<std::unique_ptr<collectors::Collector>>& collectors;  // run on the head for every node
  AgentFanout* agents;  // node agents, or nullptr when none are configured
  store::JobStore& store;
  ops::HeadMetrics* metrics = nullptr;      // counted when given (the head daemon's)
  fleet::Remediator* remediator = nullptr;  // remediation.mode other than off (remediation.h)
  // Where each verdict also goes when its job is done (sinks.*); none when null.
  const std::vector<std::unique_ptr<sinks::VerdictSink>>* sinks = nullptr;
  // The fleet settings: a failed job's nodes' earlier unexplained failures are looked up
  // in the archive (node_history.h) when given.
  const common::FleetConfig* fleet = nullptr;
};

// Held: the queue could not record what comes next (its file locked or full), so the job
// is still due in it; the worker holds it back for head.retry_backoff_s rather than taking
// it again at once (which spun, logging an error every few ms, while the disk was full).
// Staged: judged and archived, its comment waiting in the caller's batch to be written
// with others (write_staged_comments); the job is not done until then.
enum class Outcome { Done, Rescheduled, Held, Staged };

// A judged attempt whose comment is yet to be written, then its sinks fed and the job
// marked done. Nothing is lost when the head stops first: the job is archived, not done,
// and its next attempt writes the comment from the archive.
struct StagedComment {
  store::QueuedJob job;
  std::string comment;       // the job's whole comment field as it is to be
  std::string verdict_json;  // for the sinks
  std::optional<PhaseTimes> times;
  TimeUs staged_at = 0;
};

// What scoping does with one accounting read (exposed for the tests, which drive it over
// simulated hours). slurmdbd's answers and its absence are told apart:
//   - a final record is used, and so is one that says how the job ended (state, exit
//     code, end) and lists the nodes the hook named: slurmdbd fills in the allocation
//     seconds later. Not before head.hook_settle_ms after the first report, so that the
//     job's other hooks' reports are merged into it;
//   - not final or not there yet (slurmdbd answered): polled every scope_poll_interval_ms
//     up to scope_max_wait_s, counted from the hook's report or, after an outage, from
//     slurmdbd's first answer after it (slurmctld resends what it queued only after
//     slurmdbd is back); then the hook's facts are used with what the non-final
//     record adds, and a record that never appeared is a counted failure (backoff, given
//     up at max_failures);
//   - slurmdbd unreachable: the job waits, polled with a growing interval, for up to
//     accounting_outage_max_wait_s, and is then attributed from the hook's facts alone.
struct ScopeStep {
  enum Kind { Use, Wait, Fail, UseHookFacts } kind = Wait;
  std::optional<slurm::JobRecordFacts> record;  // Use; UseHookFacts with a non-final record
  TimeUs next_attempt = 0;                      // Wait
  std::string reason;                           // Wait: the retries metric's label
  std::string why;                              // what is waited for, or what failed
  store::AccountingOutage mark;                 // Wait: outage times to remember (now)
};
// hook_nodes: every node of the job as the hook reported them (empty for a slurmd
// Epilog, which names its own). outage: the job's last slurmdbd outage, as earlier steps
// marked it.
ScopeStep scope_step(const common::HeadConfig& config, const Result<slurm::JobRecordFacts>& read, TimeUs received,
                     TimeUs now, const std::vector<std::string>& hook_nodes,
                     const store::AccountingOutage& outage = {});

// Whether slurmdbd's rows show that `row`, the row read for `report` (by its start, else
// by when its hook ran: slurm::attempt_row), is the attempt the report is of. A report
// with a start (jobcomp/script's START; SLURM_JOB_START_TIME, which both epilogs have
// from Slurm 23.02): that start is the row's (to the second: slurmdbd keeps whole seconds,
// and both come from slurmctld's start_time), else it is another attempt. A report without
// one (Slurm 22.05's epilogs): a later row of the id came after the hook
// (JobRecordFacts::later_row_after_hook), or the row shows that its attempt ended and the
// job was not requeued (slurm::ended_without_requeue). Otherwise the report may be a
// requeued job's next attempt whose row slurmdbd has not recorded yet (or not yet as
// started): that attempt reads as the one before it, so a run judged on the same row does
// not make the report a second one.
//
// SLURM_JOB_RESTART_COUNT, which both epilogs have in every version, does not tell: slurmctld
// counts a requeue by `scontrol requeue` or preemption before it runs the requeued
// attempt's hooks (job_mgr.c _job_requeue_op), and one on an exit code (RequeueExit) only
// after them (job_hold_requeue), so attempt 0 requeued by scontrol and attempt 1 failing
// on its own both report 1.
bool rows_show_reported_attempt(const v1::JobEnded& report, const slurm::JobRecordFacts& row);

// A step of an attempt failed (step names it, why says what): counted, retried after the
// exponential backoff, or given up (dead-lettered, Outcome::Done) at head.max_failures.
Outcome retry_after_failure(const AttributionContext& context, const store::QueuedJob& job, TimeUs now,
                            const char* step, const std::string& why);

// `accounting` is per worker (a slurmdbd connection is not shared between threads).
// With `batch`, a comment to be written is added to it (Outcome::Staged) rather than
// written at once: the caller writes a batch with write_staged_comments.
Outcome attribute_once(const AttributionContext& context, slurm::Accounting& accounting, const store::QueuedJob& job,
                       TimeUs now, std::vector<StagedComment>* batch = nullptr);

// Writes the batch's comments together (Accounting::write_comments: for slurmdbd, one
// transaction, read back in one request) and finishes each attempt whose comment slurmdbd
// kept; the others are retried as failures of the comment step. One outcome per job.
std::vector<std::pair<store::JobKey, Outcome>> write_staged_comments(const AttributionContext& context,
                                                                     slurm::Accounting& accounting,
                                                                     const std::vector<StagedComment>& batch,
                                                                     TimeUs now);

// Scoping and collection without the store or Slurm writes: what attrib-replay-style
// callers and tests use. Hook facts fill what the accounting record lacks; a record that
// is not final (still PENDING or RUNNING in slurmdbd) does not say how the job ended, so
// the state, exit code, signal and end come from the hook then.
JobFacts merge_facts(const v1::JobEnded& hook, const std::optional<slurm::JobRecordFacts>& record,
                     const std::vector<std::string>& hook_nodes, const std::string& default_cluster);
// The raw evidence of an attempt, as the archive keeps it: every line the head's
// collectors and the node agents read (up to head.raw_evidence_max_kib, shared out among
// the agents), the coverage rows and the window the verdict was made from. Complete when
// it replays to the verdict: no line over the cap, and every agent that read lines sent
// them (an agent older than raw evidence sends its events only).
struct AttemptEvidence {
  rules::RawEvidence raw;
  uint64_t dropped_lines = 0;
  std::vector<std::string> nodes_without_lines;  // agents that read lines and sent none
  bool complete() const { return dropped_lines == 0 && nodes_without_lines.empty(); }
};

// output_paths: the job's stdout/stderr files as the hook reported them. `evidence`,
// when given, receives the attempt's raw evidence; `collected_at`, when given, the wall
// clock at which every node's evidence was in (the rules run after it).
Verdict attribute_window(const AttributionContext& context, const JobFacts& facts, TimeUs fallback_time,
                         const std::vector<std::string>& output_paths = {}, AttemptEvidence* evidence = nullptr,
                         TimeUs* collected_at = nullptr);

}  // namespace attrib::pipeline
