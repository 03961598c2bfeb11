#include "collectors/slurm_accounting_collector.h"

#include <algorithm>

#include "collectors/coverage_report.h"

namespace attrib::collectors {

// How old a read of the job by this process may be to stand for the collector's own:
// scoping reads it moments before the collectors run; an array read serves for a minute.
constexpr TimeUs kRecentReadMaxAge = 60 * 1000000LL;

std::string format_step_line(const slurm::StepRecord& step) {
  return "step " + step.step_id + " (" + step.name + ") ended " + step.state +
         " exit_code=" + std::to_string(step.exit_code) + " signal=" + std::to_string(step.signal) + " on " +
         step.node_expr;
}

std::string format_job_line(const slurm::AccountingRecord& job) {
  std::string line = "job " + job.job_id + " ended " + job.state + " exit_code=" + std::to_string(job.exit_code) +
                     " signal=" + std::to_string(job.signal) + " reason=" + (job.reason.empty() ? "None" : job.reason) +
                     " requeues=" + std::to_string(job.requeue_count) + " on " + job.node_expr;
  // Who cancelled it (rules/pack/accounting.yaml reads this): only for CANCELLED, where
  // requid means the canceller; appended so the line's earlier shape is unchanged.
  if (job.state == "CANCELLED" && job.requid) {
    const std::string name = job.requser.empty() ? std::to_string(*job.requid) : job.requser;
    line += " cancelled_by=" + name + "(" + std::to_string(*job.requid) + ")";
  }
  return line;
}

const OptionTable<SlurmAccountingOptions>& SlurmAccountingCollector::option_table() {
  static const OptionTable<SlurmAccountingOptions> table = {
      option("cluster", &SlurmAccountingOptions::cluster, "\"\"",
             "Slurm cluster whose accounting is read. Empty: the cluster of the job being attributed. "
             "slurmdbd is found through slurm.conf (SLURM_CONF)."),
  };
  return table;
}

Result<std::unique_ptr<Collector>> SlurmAccountingCollector::create(const YAML::Node& options) {
  auto parsed = read_collector_options(kName, option_table(), options);
  if (!parsed) return parsed.error();
  return std::unique_ptr<Collector>(std::make_unique<SlurmAccountingCollector>(std::move(*parsed)));
}

SlurmAccountingCollector::SlurmAccountingCollector(SlurmAccountingOptions options)
    : cluster_(std::move(options.cluster)) {}

Result<slurm::AccountingRecord> SlurmAccountingCollector::job_record(const std::string& cluster,
                                                                     const std::string& job_id,
                                                                     std::optional<TimeUs> attempt_end) {
  std::string key = cluster + "/" + job_id + "/" + std::to_string(attempt_end.value_or(0));
  if (cached_ && cached_key_ == key) return *cached_;
  // The head has usually just read this job to scope it (with its steps): that read serves.
  if (auto recent = slurm::recent_final_record(cluster, job_id, attempt_end, kRecentReadMaxAge)) {
    cached_ = *recent;
    cached_key_ = key;
    return *recent;
  }
  if (!connection_) {
    auto opened = slurm::SlurmdbdConnection::open();
    if (!opened) return opened.error();
    connection_ = std::move(*opened);
  }
  auto record = connection_->read_job(cluster, job_id, /*with_steps=*/true, attempt_end);
  if (!record) {
    if (record.error().code != kSlurmdbNotFound) connection_.reset();  // reconnect next time
    return record.error();
  }
  cached_ = *record;
  cached_key_ = key;
  return record;
}

std::vector<Coverage> SlurmAccountingCollector::collect(const CollectRequest& request, const LineSink& sink) {
  CoverageReport report(request, {"slurm"});
  std::string cluster = cluster_.empty() ? request.cluster : cluster_;
  if (cluster.empty())
    return report.finish(CoverageStatus::NotConfigured, "no cluster name: set the collector's cluster option");
  std::lock_guard lock(mutex_);
  auto record = job_record(cluster, request.job_id, request.attempt_end);
  if (!record)
    return report.finish(record.error().code == kSlurmdbNotFound ? CoverageStatus::Unavailable : CoverageStatus::Failed,
                         record.error().message);
  auto emit = [&](std::optional<TimeUs> time, std::string text) {
    sink(LogLine{request.node, "slurm", time, report.next_seq("slurm"), /*trusted=*/true, std::move(text)});
  };
  if (!record->nodes.empty() && record->nodes.front() == request.node) emit(record->end, format_job_line(*record));
  std::vector<slurm::StepRecord> steps = record->steps;
  std::stable_sort(steps.begin(), steps.end(),
                   [](const auto& a, const auto& b) { return a.end.value_or(0) < b.end.value_or(0); });
  for (const auto& step : steps)
    if (std::find(step.nodes.begin(), step.nodes.end(), request.node) != step.nodes.end())
      emit(step.end, format_step_line(step));
  return report.finish(std::nullopt);
}

}  // namespace attrib::collectors
