// The spank_records collector: reads the task records that spank_attrib.so writes on
// each node (<spool>/<job>/<step>.<rank>.json, JSON lines; spank/task_record.h)
// and hands every ended task over as one `spank` line, timed at the task's end.
// The shipped rule slurm.spank_task_exit turns abnormal ends into slurm.task_exit events.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"

namespace attrib::collectors {

struct SpankRecordsOptions {
  // Spool directory of one node; "{node}" is replaced by the Slurm node name.
  std::string directory;
};

class SpankRecordsCollector final : public Collector {
 public:
  static constexpr const char* kName = "spank_records";
  // Its own source name: the "slurm" source is slurmdbd's (slurm_accounting), and
  // coverage rows are told apart by (node, source).
  static constexpr const char* kSource = "spank";

  static const OptionTable<SpankRecordsOptions>& option_table();
  // Reads `options` with option_table() and builds the collector.
  static Result<std::unique_ptr<Collector>> create(const YAML::Node& options);

  explicit SpankRecordsCollector(SpankRecordsOptions options);

  std::string name() const override { return kName; }
  std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) override;

  // The node's spool directory for `node`.
  std::string node_directory(const std::string& node) const;

 private:
  // One line for the rules: its time, text and trust.
  struct TaskLine {
    TimeUs time = 0;
    std::string text;
    bool trusted = false;
  };
  // Other jobs' tasks on the node that ran inside the request's window ("attrib-spank: task
  // of another job: ..."), from the newest of its other job directories; `more` counts the
  // directories left unread.
  std::vector<TaskLine> neighbour_tasks(const std::filesystem::path& node_dir, const CollectRequest& request,
                                        size_t& more) const;

  SpankRecordsOptions options_;
};

// Besides the job's own ended tasks, one line per task of another job on the node whose
// run overlaps the window, timed at its start (rule slurm.spank_neighbour_task):
// "attrib-spank: task of another job: job=4999 step=0 rank=0 node=n1 pid=4100 gpus=0".

// The line handed to the rules for one ended task (the format slurm.spank_task_exit
// parses): "attrib-spank: task exited abnormally: job=.. step=.. rank=.. local_rank=..
// node=.. pid=.. exit_code=.. signal=.. [gpus=0,1]" ("normally" when exit code and signal
// are 0; gpus: the task's GPU indices, SLURM_STEP_GPUS / SLURM_JOB_GPUS, when it had any).
std::string task_exit_line(const std::string& job, const std::string& step, int64_t rank, int64_t local_rank,
                           const std::string& node, int64_t pid, int64_t exit_code, int64_t signal,
                           const std::string& gpus = "");

}  // namespace attrib::collectors
