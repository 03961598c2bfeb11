#include "attributiond/pipeline/attribution.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "attributiond/ops/log_context.h"
#include "attributiond/pipeline/job_comment.h"
#include "attributiond/pipeline/node_history.h"
#include "common/evidence_archive.h"
#include "core/clock.h"
#include "core/comment.h"
#include "core/failpoint.h"
#include "core/json_text.h"
#include "rules/evidence/bundle_export.h"
#include "slurm/slurmdbd_client.h"

namespace attrib::pipeline {
namespace {

constexpr TimeUs kSecond = 1000000;

Outcome reschedule(store::JobStore& store, const store::QueuedJob& job, TimeUs next, const std::string& why,
                   const store::AccountingOutage& mark = {}) {
  if (auto s = store.reschedule(job.key, next, why, mark); !s) {
    spdlog::error("job {}: cannot reschedule: {}", job.key.job_id, s.error().message);
    return Outcome::Held;
  }
  return Outcome::Rescheduled;
}

}  // namespace

ScopeStep scope_step(const common::HeadConfig& config, const Result<slurm::JobRecordFacts>& read, TimeUs received,
                     TimeUs now, const std::vector<std::string>& hook_nodes, const store::AccountingOutage& outage) {
  const TimeUs waited = now - received;
  const bool answered = read || read.error().code == kSlurmdbNotFound;
  // The record's lag counts from slurmdbd's return after an outage: slurmctld resends the
  // job's end only then, so the first read after it finds the row as slurmctld left it
  // before the job ended (PENDING, RUNNING). The outage must not use up the wait.
  const bool first_answer_after_outage = answered && outage.down && (!outage.back || *outage.back < *outage.down);
  const TimeUs since = first_answer_after_outage ? now : std::max(received, outage.back.value_or(received));
  const TimeUs lag = now - since;
  ScopeStep step;
  if (read && read->final) {
    step.kind = ScopeStep::Use;
    step.record = *read;
    return step;
  }
  // The row shows the end but not yet the allocation. For a multi-node job slurmdbd's
  // placeholder names only the batch host: the row is used once it names the hook's nodes.
  if (read && read->ended && !hook_nodes.empty() &&
      std::set<std::string>(read->facts.nodes.begin(), read->facts.nodes.end()) ==
          std::set<std::string>(hook_nodes.begin(), hook_nodes.end())) {
    const TimeUs settled = received + static_cast<TimeUs>(config.hook_settle_ms) * 1000;
    if (now >= settled) {
      step.kind = ScopeStep::Use;
      step.record = *read;
      return step;
    }
    step.kind = ScopeStep::Wait;
    step.reason = "accounting_pending";
    step.why = "the job's other hooks may still report (head.hook_settle_ms)";
    step.next_attempt = settled;
    return step;
  }
  if (answered) {
    // slurmdbd answered: the record is not final, or not there yet. Its normal lag is
    // seconds, polled quickly up to scope_max_wait_s.
    if (lag <= config.scope_max_wait_s * kSecond) {
      step.kind = ScopeStep::Wait;
      step.reason = "accounting_pending";
      step.why = read ? "accounting record not final yet" : read.error().message;
      step.next_attempt = now + config.scope_poll_interval_ms * 1000;
      if (first_answer_after_outage) step.mark.back = now;
      return step;
    }
    if (read) {  // the record stopped short of final: use what it says
      step.kind = ScopeStep::UseHookFacts;
      step.record = *read;
      step.why = "accounting record still not final after " + std::to_string(config.scope_max_wait_s) + " s";
      return step;
    }
    // Reachable, yet no record long after the job ended: slurmdbd never stored it (or the
    // cluster name is wrong). Counted failures with backoff, given up at max_failures.
    step.kind = ScopeStep::Fail;
    step.why = read.error().message + ", " + std::to_string(waited / kSecond) + " s after the hook reported the job";
    return step;
  }
  if (read.error().code != kSlurmdbConnection && read.error().code != kSlurmdbQuery) {
    step.kind = ScopeStep::Fail;  // e.g. a job id slurmdbd cannot take: no wait will help
    step.why = read.error().message;
    return step;
  }
  // slurmdbd unreachable (down, restarting, network): not the job's fault, and a guess
  // from the hook's facts would be worse than waiting. Poll with a growing interval, up to
  // accounting_outage_max_wait_s; never counted as a failure.
  if (waited <= static_cast<TimeUs>(config.accounting_outage_max_wait_s) * kSecond) {
    step.kind = ScopeStep::Wait;
    step.reason = "accounting_unreachable";
    step.mark.down = now;
    step.why = "waiting for slurmdbd: " + read.error().message;
    step.next_attempt =
        now + std::clamp<TimeUs>(waited / 4, config.retry_backoff_s * kSecond, config.retry_max_backoff_s * kSecond);
    return step;
  }
  step.kind = ScopeStep::UseHookFacts;
  step.why = "slurmdbd unreachable for longer than head.accounting_outage_max_wait_s (" +
             std::to_string(config.accounting_outage_max_wait_s) + " s): " + read.error().message;
  return step;
}

bool rows_show_reported_attempt(const v1::JobEnded& report, const slurm::JobRecordFacts& row) {
  if (report.start_time_us() > 0)
    return row.facts.start && *row.facts.start / kSecond == report.start_time_us() / kSecond;
  // No start (Slurm 22.05's EpilogSlurmctld and slurmd Epilog, an older attrib-epilog): the
  // row is the report's attempt when a later row came after the hook, or when the row
  // says the job was not requeued after it, so that no later attempt can have run.
  if (row.later_row_after_hook) return true;
  return row.facts.end && slurm::ended_without_requeue(row.facts.state);
}

store::RetryPolicy retry_policy(const common::HeadConfig& config) {
  return store::RetryPolicy{config.retry_backoff_s * kSecond, config.retry_max_backoff_s * kSecond,
                            config.max_failures};
}

Outcome retry_after_failure(const AttributionContext& context, const store::QueuedJob& job, TimeUs now,
                            const char* step, const std::string& why) {
  if (context.metrics != nullptr) context.metrics->attribution_failures.labels({step}).inc();
  auto dead = context.store.record_failure(job.key, now, std::string(step) + ": " + why, retry_policy(context.config));
  if (!dead) {
    spdlog::error("job {}: cannot record the failure ({}): {}", job.key.job_id, why, dead.error().message);
    return Outcome::Held;
  }
  if (*dead) {
    spdlog::error("job {}: given up after {} failed attempts, last at {}: {}", job.key.job_id,
                  context.config.max_failures, step, why);
    if (context.metrics != nullptr) context.metrics->jobs_dead_lettered.labels({step}).inc();
    return Outcome::Done;
  }
  if (context.metrics != nullptr) context.metrics->attribution_retries.labels({"failure"}).inc();
  return Outcome::Rescheduled;
}

namespace {

// Once a job's comment is in Slurm (or none is written): each sink takes the verdict and
// the attempt's phases are logged. nullopt when that went well, else the outcome of the
// failure (a sink that cannot take it, its file or spool unwritable, has the job tried
// again from here).
std::optional<Outcome> deliver_verdict(const AttributionContext& context, const store::QueuedJob& job,
                                       const std::string& verdict_json, std::optional<PhaseTimes> times, TimeUs now) {
  if (context.sinks != nullptr)
    for (const auto& sink : *context.sinks)
      if (auto s = sink->deliver(job.key, verdict_json); !s)
        return retry_after_failure(context, job, now, "sink", std::string(sink->name()) + ": " + s.error().message);
  if (times) {
    times->commented = wall_clock_us();
    spdlog::info("job {}: phases {}", job.key.job_id, describe_phases(*times));
    if (context.metrics != nullptr)
      for (const Phase& phase : phases(*times))
        context.metrics->attribution_phase.labels({phase.name}).observe(static_cast<double>(phase.us) / 1e6);
  }
  return std::nullopt;
}

// The last step of the runs `keys`, together: Held for each when the queue cannot record it.
Outcome mark_done(const AttributionContext& context, const std::vector<store::JobKey>& keys, TimeUs now) {
  if (auto s = context.store.mark_all_done(keys, now); !s) {
    spdlog::error("{} job(s), first {}: cannot mark done: {}", keys.size(), keys.front().job_id, s.error().message);
    if (context.metrics != nullptr) {
      context.metrics->attribution_failures.labels({"done"}).inc(static_cast<double>(keys.size()));
      context.metrics->attribution_retries.labels({"failure"}).inc(static_cast<double>(keys.size()));
    }
    return Outcome::Held;
  }
  return Outcome::Done;
}

}  // namespace

JobFacts merge_facts(const v1::JobEnded& hook, const std::optional<slurm::JobRecordFacts>& record,
                     const std::vector<std::string>& hook_nodes, const std::string& default_cluster) {
  JobFacts facts;
  if (record) facts = record->facts;
  facts.job_id = hook.job_id();
  facts.cluster = hook.cluster().empty() ? default_cluster : hook.cluster();
  // The hook's node list is authoritative: the accounting record can lag behind it. A het
  // job's hooks may not all have reported yet, and a slurmd Epilog names only its own
  // node: then the record's nodes count too. A node named twice (two components, two
  // hooks) is read once.
  if (!hook_nodes.empty()) {
    std::vector<std::string> record_nodes = std::move(facts.nodes);
    facts.nodes = hook_nodes;
    if (record && (!record->facts.components.empty() || hook.hook() == v1::HOOK_KIND_EPILOG_SLURMD))
      facts.nodes.insert(facts.nodes.end(), record_nodes.begin(), record_nodes.end());
  }
  std::set<std::string> seen;
  std::erase_if(facts.nodes, [&](const std::string& node) { return !seen.insert(node).second; });
  // proto3 cannot tell uid 0 from "not sent" (an older hook, a spooled message): 0 counts
  // only for a job the hook says is root's.
  if (!facts.uid && (hook.uid() != 0 || hook.user() == "root")) facts.uid = hook.uid();
  if (!record) {
    facts.state = hook.state().empty() ? "UNKNOWN" : hook.state();
    facts.exit_code = hook.exit_code();
    facts.signal = hook.signal();
    if (hook.start_time_us() > 0) facts.start = hook.start_time_us();
    if (hook.end_time_us() > 0) facts.end = hook.end_time_us();
  } else if (!record->final && !record->ended) {
    // The row as slurmctld left it before the job ended (PENDING, RUNNING): how the job
    // ended is only the hook's to say.
    facts.state = hook.state().empty() ? "UNKNOWN" : hook.state();
    facts.exit_code = hook.exit_code();
    facts.signal = hook.signal();
    if (!facts.start && hook.start_time_us() > 0) facts.start = hook.start_time_us();
    if (hook.end_time_us() > 0) facts.end = hook.end_time_us();
  }
  return facts;
}

// The job's output files hold every rank's lines: the app_output collector reads them
// once, with the batch host's request, and attributes each rank's lines to its node.
// EpilogSlurmctld reports --output/--error as given, e.g. "slurm-%j.out": expand the
// sbatch filename patterns a job-level path can use (%% %j %A %a %N %u %x). Any other
// pattern stays as is, and the collector then reports the file as unavailable.
static std::string expand_output_pattern(const std::string& pattern, const v1::JobEnded& hook,
                                         const std::string& batch_host) {
  // %j is Slurm's own id of the job (an array task's raw id), %A_%a the array pair.
  std::string job = hook.slurm_job_id().empty() ? hook.job_id() : hook.slurm_job_id();
  std::string array_job = hook.job_id(), array_task;
  if (auto underscore = array_job.find('_'); underscore != std::string::npos) {
    array_task = array_job.substr(underscore + 1);
    array_job = array_job.substr(0, underscore);
  }
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    char c = pattern[++i];
    switch (c) {
      case '%':
        out += '%';
        break;
      case 'j':
        out += job;
        break;
      case 'A':
        out += array_job;
        break;
      case 'a':
        out += array_task;
        break;
      case 'N':
        out += batch_host;
        break;
      case 'u':
        out += hook.user();
        break;
      case 'x':
        out += hook.job_name();
        break;
      default:
        out += '%';
        out += c;
    }
  }
  return out;
}

static std::vector<std::string> output_paths_of(const v1::JobEnded& hook, const std::string& batch_host) {
  std::vector<std::string> paths;
  for (const std::string& given : {hook.stdout_path(), hook.stderr_path()}) {
    std::string path = expand_output_pattern(given, hook, batch_host);
    if (!path.empty() && path != "/dev/null" && std::find(paths.begin(), paths.end(), path) == paths.end())
      paths.push_back(path);
  }
  return paths;
}

Verdict attribute_window(const AttributionContext& context, const JobFacts& facts, TimeUs fallback_time,
                         const std::vector<std::string>& output_paths, AttemptEvidence* evidence,
                         TimeUs* collected_at) {
  TimeUs end = facts.end.value_or(fallback_time);
  TimeUs start = facts.start.value_or(end);
  TimeUs window_start = start - context.config.window_lead_s * kSecond;
  TimeUs window_end = end + context.config.window_grace_s * kSecond;

  std::vector<Event> events;
  std::vector<Coverage> coverage;
  uint64_t raw_budget = evidence != nullptr ? static_cast<uint64_t>(context.config.raw_evidence_max_kib) * 1024 : 0;
  auto add = [&](NodeEvidence&& node) {
    std::move(node.events.begin(), node.events.end(), std::back_inserter(events));
    std::move(node.coverage.begin(), node.coverage.end(), std::back_inserter(coverage));
    if (evidence != nullptr) {
      evidence->raw.lines.append(std::move(node.raw_lines));
      evidence->dropped_lines += node.raw_dropped;
    }
  };
  std::vector<std::string> all_but_job_output;
  for (const auto& collector : context.collectors)
    if (collector->name() != "app_output") all_but_job_output.push_back(collector->name());
  for (const std::string& node : facts.nodes) {
    if (context.collectors.empty()) break;
    bool batch_host = node == facts.nodes.front();
    collectors::CollectRequest request{.job_id = facts.job_id,
                                       .node = node,
                                       .window_start = window_start,
                                       .window_end = window_end,
                                       .cluster = facts.cluster,
                                       .attempt_end = end};
    // Whose files the job's user wrote on every node (its flight-recorder dumps).
    request.owner_uid = facts.uid;
    if (batch_host) {
      request.ranks = facts.ranks;
      request.output_paths = output_paths;
    }
    if (!batch_host && all_but_job_output.empty()) continue;  // only app_output is configured
    add(collect_node(context.pack, context.collectors, request,
                     batch_host ? std::vector<std::string>{} : all_but_job_output,
                     evidence != nullptr ? &raw_budget : nullptr));
  }
  if (context.agents != nullptr) {
    // What is left of the budget, shared out evenly among the job's nodes.
    const uint64_t per_agent =
        evidence != nullptr ? std::max<uint64_t>(1, raw_budget / std::max<size_t>(1, facts.nodes.size())) : 0;
    for (auto& node : context.agents->collect(facts, window_start, window_end, per_agent)) {
      if (evidence != nullptr && node.raw_lines.empty() && node.raw_dropped == 0) {
        uint64_t read = 0;
        for (const Coverage& c : node.coverage) read += c.lines;
        if (read > 0 && !node.coverage.empty()) evidence->nodes_without_lines.push_back(node.coverage.front().node);
      }
      add(std::move(node));
    }
  }
  // The head's own collectors and a node's agent can both read one (node, source).
  std::vector<Coverage> merged = merge_coverage_rows(std::move(coverage));
  if (evidence != nullptr) {
    evidence->raw.coverage = merged;
    evidence->raw.window_start = window_start;
    evidence->raw.window_end = window_end;
  }
  if (collected_at != nullptr) *collected_at = wall_clock_us();
  return rules::correlate(*context.pack, facts, std::move(events), std::move(merged));
}

// The attempt's raw evidence packed for the archive; none (logged) when it cannot be
// written as a bundle (a node name that is no host name) or packed.
static std::optional<store::ArchivedEvidence> pack_attempt_evidence(const JobFacts& facts, AttemptEvidence&& evidence) {
  const uint64_t lines = evidence.raw.lines.size();
  auto files = rules::archive_files(facts, std::move(evidence.raw));
  if (!files) {
    spdlog::warn("job {}: raw evidence not kept: {}", facts.job_id, files.error().message);
    return std::nullopt;
  }
  store::ArchivedEvidence out;
  for (const auto& [path, content] : *files) out.raw_bytes += content.size();
  out.blob = common::pack_evidence(*files);
  if (out.blob.empty()) {
    spdlog::warn("job {}: raw evidence not kept: zstd could not compress it", facts.job_id);
    return std::nullopt;
  }
  out.lines = lines;
  out.dropped_lines = evidence.dropped_lines;
  out.complete = evidence.complete();
  std::vector<std::string> notes;
  if (evidence.dropped_lines > 0)
    notes.push_back(std::to_string(evidence.dropped_lines) + " lines past head.raw_evidence_max_kib not kept");
  if (!evidence.nodes_without_lines.empty()) {
    std::string nodes;
    for (const std::string& node : evidence.nodes_without_lines) nodes += (nodes.empty() ? "" : ",") + node;
    notes.push_back("the agents of " + nodes + " sent their events but not their lines (an older agent)");
  }
  for (const std::string& note : notes) out.note += (out.note.empty() ? "" : "; ") + note;
  return out;
}

// The SPANK plugin's `--attrib=off`, as EpilogSlurmctld forwards it (plugin "attrib",
// option "attrib").
static bool user_opted_out(const v1::JobEnded& hook) {
  auto it = hook.spank_options().find("attrib_attrib");
  return it != hook.spank_options().end() && it->second == "off";
}

Outcome attribute_once(const AttributionContext& context, slurm::Accounting& accounting, const store::QueuedJob& job,
                       TimeUs now, std::vector<StagedComment>* batch) {
  const std::string& cluster = job.key.cluster;
  const std::string& job_id = job.key.job_id;
  ops::LogScope log_scope(job_id);
  if (!job.verdict_json && context.config.allow_opt_out && user_opted_out(job.request)) {
    // Kept in the archive (never silently lost), but neither attributed nor commented.
    if (auto s = context.store.mark_not_attributed(job.key, "opted out by the user (--attrib=off)", now); !s)
      return retry_after_failure(context, job, now, "opt_out", s.error().message);
    spdlog::info("job {}: opted out of attribution by its user", job_id);
    if (context.metrics != nullptr) context.metrics->jobs_not_attributed.labels({"opt_out"}).inc();
    return Outcome::Done;
  }
  std::string segment;
  std::string verdict_json;  // verdict v1 as archived, for the sinks
  std::optional<TimeUs> attempt_submit = job.attempt_submit;
  std::optional<slurm::JobRecordFacts> scoped_record;  // read by this run (the comment's text before)
  std::optional<PhaseTimes> times;                     // this attempt scopes and judges: its phases are logged
  if (job.verdict_json) {
    // Archived by an earlier attempt: only the comment and the sinks are left.
    verdict_json = *job.verdict_json;
    segment = json_string_or(nlohmann::json::parse(verdict_json), "comment");
  } else {
    std::optional<slurm::JobRecordFacts> record;
    // The attempt this run reports (a requeued job's newest row is the next one, pending),
    // found by its start when the hook knew it (jobcomp/script; the epilogs from Slurm
    // 23.02), else by when the hook ran.
    // slurmdbd keeps whole seconds: when the next attempt starts within the second its
    // predecessor's EpilogSlurmctld runs, only the start tells them apart.
    const TimeUs attempt_time =
        job.request.start_time_us() > 0 ? job.request.start_time_us() : job.request.hook_time_us();
    const std::vector<std::string> hook_nodes = job.request.hook() == v1::HOOK_KIND_EPILOG_SLURMD
                                                    ? std::vector<std::string>{}
                                                    : slurm::expand_hostlist(job.request.node_list());
    const ScopeStep step = scope_step(
        context.config,
        accounting.read_attempt(cluster, job_id, attempt_time > 0 ? std::optional<TimeUs>(attempt_time) : std::nullopt,
                                job.received),
        job.received, now, hook_nodes, job.outage);
    switch (step.kind) {
      case ScopeStep::Use:
        record = step.record;
        break;
      case ScopeStep::Wait:
        if (context.metrics != nullptr) context.metrics->attribution_retries.labels({step.reason}).inc();
        return reschedule(context.store, job, step.next_attempt, step.why, step.mark);
      case ScopeStep::Fail:
        return retry_after_failure(context, job, now, "scope", step.why);
      case ScopeStep::UseHookFacts:
        spdlog::warn("job {}: {}; attributing from the hook's facts", job_id, step.why);
        if (context.metrics != nullptr) context.metrics->scope_timeouts.get().inc();
        record = step.record;
        break;
    }
    failpoint("attempt.scoped");  // the accounting record read, nothing judged
    // A second report of an attempt another run was judged on (a second hook after the
    // first was attributed, a spool sent again after the first copy arrived): folded into
    // that run, never attributed twice. Only when slurmdbd's rows show that the row read
    // is the report's attempt (rows_show_reported_attempt), though: a requeued job's next
    // attempt reads as the attempt before it until slurmdbd has recorded its row as
    // started (under load, seconds after its hook ran), and dropping its report then loses
    // the attempt. Such a report waits for the rows, and is judged as an attempt of its
    // own from the hook's facts if they still do not show it after head.scope_max_wait_s:
    // by then its start differs from the row's, or the row says the job was requeued
    // after it (a report without a start of a job that was not is folded at once).
    std::optional<TimeUs> earlier_attempt_end;  // judged alone: the attempt read ended before it began
    if (record && record->submit) {
      const bool shown = rows_show_reported_attempt(job.request, *record);
      if (!shown && job.key.run > 0) {
        // An earlier report of the id may be of the attempt read, not judged yet: it goes
        // first, so that the two do not race to the archive with the same row (there the
        // later one would be dropped, or archived as the earlier attempt). Run 0 has none.
        auto earlier = context.store.earlier_run_waiting(job.key);
        if (!earlier) return retry_after_failure(context, job, now, "archive", earlier.error().message);
        if (*earlier) {
          if (context.metrics != nullptr) context.metrics->attribution_retries.labels({"accounting_pending"}).inc();
          return reschedule(context.store, job, now + context.config.scope_poll_interval_ms * 1000,
                            "an earlier report of the job is judged first: slurmdbd's rows do not show which "
                            "attempt this one is");
        }
      }
      auto same = context.store.same_attempt(job.key, *record->submit);
      if (!same) return retry_after_failure(context, job, now, "archive", same.error().message);
      if (*same && shown) {
        if (auto s = context.store.drop_second_report(job.key); !s)
          return retry_after_failure(context, job, now, "archive", s.error().message);
        spdlog::info("job {}: a second report of the attempt judged as run {}, not attributed again", job_id, **same);
        if (context.metrics != nullptr) context.metrics->jobs_not_attributed.labels({"same_attempt"}).inc();
        return Outcome::Done;
      }
      if (*same) {
        const std::string why = "slurmdbd shows no row for this report's attempt yet (the row read is run " +
                                std::to_string(**same) + "'s attempt)";
        if (now - job.received <= context.config.scope_max_wait_s * kSecond) {
          if (context.metrics != nullptr) context.metrics->attribution_retries.labels({"accounting_pending"}).inc();
          return reschedule(context.store, job, now + context.config.scope_poll_interval_ms * 1000, why);
        }
        spdlog::warn("job {}: {} after {} s; judged as an attempt of its own from the hook's facts", job_id, why,
                     context.config.scope_max_wait_s);
        if (context.metrics != nullptr) context.metrics->scope_timeouts.get().inc();
        earlier_attempt_end = record->facts.end;
        record.reset();
      }
    }
    JobFacts facts =
        merge_facts(job.request, record, slurm::expand_hostlist(job.request.node_list()), context.default_cluster);
    // Judged from the hook's facts after the attempt read: a hook that does not know its
    // start (Slurm 22.05's epilogs) leaves the window to begin where that attempt ended.
    if (!facts.start && earlier_attempt_end) facts.start = earlier_attempt_end;
    if (context.fleet != nullptr) facts.repeated_failures = repeated_failures(context.store, *context.fleet, facts);
    times =
        PhaseTimes{.job_end = facts.end, .hook = job.request.hook_time_us(), .received = job.received, .scoped = now};
    AttemptEvidence evidence;
    const bool keep_raw = context.config.raw_evidence_max_kib > 0;
    Verdict verdict = attribute_window(context, facts, job.request.hook_time_us() ? job.request.hook_time_us() : now,
                                       output_paths_of(job.request, facts.nodes.empty() ? "" : facts.nodes.front()),
                                       keep_raw ? &evidence : nullptr, &times->collected);
    times->judged = wall_clock_us();
    verdict.run = job.key.run;  // the sinks' copy names its run as the archive's does
    const std::optional<store::ArchivedEvidence> archived_evidence =
        keep_raw ? pack_attempt_evidence(facts, std::move(evidence)) : std::nullopt;
    failpoint("attempt.judged");  // the verdict made, not archived
    if (auto s = context.store.archive(job.key, verdict, rules::events_of_verdict(verdict), now,
                                       record ? record->submit : std::nullopt,
                                       archived_evidence ? &*archived_evidence : nullptr);
        !s && s.error().code == kQueueSameAttempt) {
      spdlog::info("job {}: {}, not attributed again", job_id, s.error().message);
      if (context.metrics != nullptr) context.metrics->jobs_not_attributed.labels({"same_attempt"}).inc();
      return Outcome::Done;
    } else if (!s) {
      return retry_after_failure(context, job, now, "archive", s.error().message);
    }
    failpoint("attempt.archived");  // archived, the Comment not written
    times->archived = wall_clock_us();
    if (record) attempt_submit = record->submit;
    scoped_record = std::move(record);
    spdlog::info("job {}: {} ({})", job_id, verdict.domain, verdict.comment);
    if (context.metrics != nullptr) {
      TimeUs hook_time = job.request.hook_time_us() ? job.request.hook_time_us() : job.received;
      context.metrics->record_verdict(verdict, facts.end.value_or(hook_time), wall_clock_us());
    }
    segment = verdict.comment;
    verdict_json = json_text(to_json(verdict));
  }

  // Only here, in the head's worker after the archive, may a node be drained (never from
  // a hook). Idempotent per job, so a retried attempt does not act twice; its failure is
  // recorded and logged and does not hold the comment back. A re-attributed run never
  // acts: its node may have been repaired since the job ran.
  if (context.remediator != nullptr && context.remediator->enabled() && !job.revised) {
    if (auto acted = context.remediator->after_verdict(context.store, job.key, now); !acted)
      spdlog::error("job {}: remediation: {}", job_id, acted.error().message);
  }

  if (context.config.write_comment) {
    auto merged = comment_to_write(accounting, context.store, job.key, segment, attempt_submit, scoped_record);
    if (!merged)
      return retry_after_failure(context, job, now, "comment", "comment not written: " + merged.error().message);
    if (*merged) {
      StagedComment staged{job, std::move(**merged), std::move(verdict_json), times, wall_clock_us()};
      if (batch != nullptr) {
        batch->push_back(std::move(staged));
        return Outcome::Staged;
      }
      std::vector<StagedComment> alone;
      alone.push_back(std::move(staged));
      return write_staged_comments(context, accounting, alone, now).front().second;
    }
  }
  if (auto failed = deliver_verdict(context, job, verdict_json, times, now)) return *failed;
  return mark_done(context, {job.key}, now);
}

std::vector<std::pair<store::JobKey, Outcome>> write_staged_comments(const AttributionContext& context,
                                                                     slurm::Accounting& accounting,
                                                                     const std::vector<StagedComment>& batch,
                                                                     TimeUs now) {
  std::vector<slurm::CommentWrite> writes;
  writes.reserve(batch.size());
  for (const StagedComment& staged : batch)
    writes.push_back({staged.job.key.cluster, staged.job.key.job_id, staged.comment});
  const std::vector<Status> written = accounting.write_comments(writes);
  failpoint("comment.written");  // in slurmdbd, the runs not marked done
  std::vector<std::pair<store::JobKey, Outcome>> out;
  out.reserve(batch.size());
  std::vector<store::JobKey> delivered;  // marked done together: one transaction
  for (size_t i = 0; i < batch.size(); ++i) {
    const StagedComment& staged = batch[i];
    ops::LogScope log_scope(staged.job.key.job_id);
    std::optional<Outcome> failed = written[i]
                                        ? deliver_verdict(context, staged.job, staged.verdict_json, staged.times, now)
                                        : retry_after_failure(context, staged.job, now, "comment",
                                                              "comment not written: " + written[i].error().message);
    if (failed)
      out.emplace_back(staged.job.key, *failed);
    else
      delivered.push_back(staged.job.key);
  }
  if (!delivered.empty()) {
    const Outcome done = mark_done(context, delivered, now);
    for (const store::JobKey& key : delivered) out.emplace_back(key, done);
  }
  return out;
}

}  // namespace attrib::pipeline
