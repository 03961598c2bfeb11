// The flight_recorder collector: reads the PyTorch flight-recorder dumps a job's ranks
// wrote into its spool (spank_attrib.so's --attrib-evidence points
// TORCH_NCCL_DEBUG_INFO_TEMP_FILE at <spool>/<job>/user/nccl_trace_rank_, and each rank's
// DebugInfoWriter appends its global rank) and hands over one line per rank and process
// group: the last collective the rank recorded (flight_recorder_dump.h). The engine
// compares the ranks' lines to name the rank the others were waiting on
// (rules/hung_rank.h). The files are the job's own (written by its processes): read as
// the job's user's files, untrusted, never executed (collectors/pickle_reader.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"

namespace attrib::collectors {

struct FlightRecorderOptions {
  std::string directory;  // the spank_attrib.so spool of a node; "{node}": the Slurm node name
  uint64_t max_bytes_per_dump = 64ull << 20;
};

class FlightRecorderCollector final : public Collector {
 public:
  static constexpr const char* kName = "flight_recorder";
  static constexpr const char* kSource = "flight_recorder";

  static const OptionTable<FlightRecorderOptions>& option_table();
  static Result<std::unique_ptr<Collector>> create(const YAML::Node& options);

  explicit FlightRecorderCollector(FlightRecorderOptions options);

  std::string name() const override { return kName; }
  std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) override;

 private:
  FlightRecorderOptions options_;
};

}  // namespace attrib::collectors
