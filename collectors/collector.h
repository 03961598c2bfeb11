// The one small interface every evidence source implements, and its option table.
//
// A collector reads one source for one node over one time window and streams the
// raw lines into a sink. It never throws a job away: whatever goes wrong becomes a
// Coverage status (failed, timeout, unavailable, ...) with a detail string.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/types.h"

namespace attrib::collectors {

struct CollectRequest {
  std::string job_id;
  std::string node;   // Slurm node name
  TimeUs window_start = 0;
  TimeUs window_end = 0;
  // Optional job context for collectors of the job's own output (app_output):
  // rank (Slurm task id) -> node from the step layout, and the job's resolved
  // stdout/stderr paths as slurmctld or the SPANK step records know them.
  std::map<int, std::string> ranks{};
  std::vector<std::string> output_paths{};
  std::string cluster{};  // the job's Slurm cluster (accounting lookups)
};

using LineSink = std::function<void(const LogLine&)>;

class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string name() const = 0;
  // Streams lines in stream order; returns one Coverage per source it read.
  virtual std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) = 0;
};

// One documented configuration key of a collector. The same table drives config
// validation (unknown keys are an error) and the generated configuration reference.
struct OptionSpec {
  std::string key;
  std::string default_value;  // as written in YAML; empty when required / none
  std::string help;
};

}  // namespace attrib::collectors
