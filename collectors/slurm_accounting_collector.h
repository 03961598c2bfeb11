// The Slurm accounting collector: the job's and its steps' records from slurmdbd as
// trusted "slurm" lines (state, exit code/signal, reason, nodes, requeues), so step
// failures on a node are evidence like any log line and can be explained as symptoms.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"
#include "slurm/slurmdbd_client.h"

namespace attrib::collectors {

// The lines this collector writes, one per record. Kept in one place: the pack's
// rules/pack/accounting.yaml rules (slurm.accounting_step_failed,
// slurm.accounting_job_cancelled) match exactly these shapes.
std::string format_step_line(const slurm::StepRecord& step);
std::string format_job_line(const slurm::AccountingRecord& job);

struct SlurmAccountingOptions {
  std::string cluster;  // empty: the cluster the head's request names
};

class SlurmAccountingCollector final : public Collector {
 public:
  static constexpr const char* kName = "slurm_accounting";

  static const OptionTable<SlurmAccountingOptions>& option_table();
  // Reads `options` with option_table() and builds the collector.
  static Result<std::unique_ptr<Collector>> create(const YAML::Node& options);

  explicit SlurmAccountingCollector(SlurmAccountingOptions options);

  std::string name() const override { return kName; }
  // Lines for the steps that ran on request.node; the job's own record goes with its
  // first node so it is reported once.
  std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) override;

 private:
  Result<slurm::AccountingRecord> job_record(const std::string& cluster, const std::string& job_id,
                                             std::optional<TimeUs> attempt_end);

  std::string cluster_;  // empty: the cluster the head's request names
  std::mutex mutex_;     // the connection and the cache serve one caller at a time
  std::unique_ptr<slurm::SlurmdbdConnection> connection_;
  // Every node of one job asks for the same record: keep the last one.
  std::optional<slurm::AccountingRecord> cached_;
  std::string cached_key_;
};

}  // namespace attrib::collectors
