// The one small interface every evidence source implements, and how it reads its options.
//
// A collector reads one source for one node over one time window and streams the
// raw lines into a sink. It never throws a job away: whatever goes wrong becomes a
// Coverage status (failed, timeout, unavailable, ...) with a detail string.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/line_run.h"
#include "core/option_table.h"
#include "core/result.h"
#include "core/types.h"

namespace attrib::collectors {

struct CollectRequest {
  std::string job_id;
  std::string node;  // Slurm node name
  TimeUs window_start = 0;
  TimeUs window_end = 0;
  // Optional job context for collectors of the job's own output (app_output):
  // rank (Slurm task id) -> node from the step layout, and the job's resolved
  // stdout/stderr paths as slurmctld or the SPANK step records know them.
  std::map<int, std::string> ranks{};
  std::vector<std::string> output_paths{};
  std::string cluster{};  // the job's Slurm cluster (accounting lookups)
  // When the attempt ended: of a requeued job's accounting rows, its own is the newest
  // that had started by then (slurm::attempt_row). Unset: the newest row.
  std::optional<TimeUs> attempt_end{};
  // The job's uid: files the job's user writes are read only when this user owns them.
  std::optional<uint32_t> owner_uid{};
};

// Where a collector hands what it read: one line at a time (sources of records: the
// journal, Loki, Prometheus), or a run of whole lines of one stream as a file holds them
// (core/line_run.h), which the rules engine scans at once. Built from a plain line callback
// (runs are then split into lines for it) or from both.
class LineSink {
 public:
  using OnLine = std::function<void(const LogLine&)>;
  using OnRun = std::function<uint64_t(const LineRun&)>;

  template <typename F>
    requires std::is_invocable_v<F, const LogLine&>
  LineSink(F&& on_line) : on_line_(std::forward<F>(on_line)) {}  // NOLINT: implicit from a lambda
  LineSink(OnLine on_line, OnRun on_run) : on_line_(std::move(on_line)), on_run_(std::move(on_run)) {}

  void operator()(const LogLine& line) const { on_line_(line); }
  // Returns the number of lines in the run (each takes a seq, see LineRun).
  uint64_t run(const LineRun& run) const { return on_run_ ? on_run_(run) : for_each_line_of(run, on_line_); }

 private:
  OnLine on_line_;
  OnRun on_run_;
};

class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string name() const = 0;
  // Streams lines in stream order; returns one Coverage per source it read.
  virtual std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) = 0;
};

// Reads a collector's YAML options with its table (core/option_table.h): unknown keys,
// wrong types and bad values are errors naming the line, the key and the collector.
template <typename Options>
Result<Options> read_collector_options(const char* collector, const OptionTable<Options>& table,
                                       const YAML::Node& yaml) {
  Options options;
  if (Status s = read_options(table, yaml, OptionScope{"", std::string("collector '") + collector + "'"}, options); !s)
    return s.error();
  return options;
}

}  // namespace attrib::collectors
