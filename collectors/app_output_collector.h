// The application output collector: reads a job's stdout/stderr files and splits
// them into per-rank streams by the prefixes launchers add ("[rank3]:" from
// PyTorch, "3: " from `srun --label`). Application text is written by the job's
// user and is never trusted.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"

namespace attrib::collectors {

struct AppOutputOptions {
  std::vector<std::string> paths;   // templates with {job_id} and {node}
  int timezone_offset_minutes = 0;  // for glog / ISO times without a zone
  uint64_t max_bytes_per_file = 64ull << 20;
  int max_ranks = 4096;  // rank streams when the step layout is unknown
};

// What the prefixes of one output line say (exposed for the unit tests).
struct AppLinePrefix {
  std::optional<int> rank;     // from "N: " (srun --label) or "[rankN]:" (PyTorch)
  bool srun_label = false;     // the rank came from an srun label, which was stripped
  std::string text;            // the line without the srun label ("[rankN]:" is kept)
  std::optional<TimeUs> time;  // from a glog or ISO 8601 prefix, when present
};

// `ranks` decides whether "N: " is an srun label (when known, N must be a rank of
// the job); `reference` picks the year of year-less glog times.
AppLinePrefix parse_app_line(const std::string& line, const std::map<int, std::string>& ranks,
                             int timezone_offset_minutes, TimeUs reference);

class AppOutputCollector final : public Collector {
 public:
  static constexpr const char* kName = "app_output";

  static const OptionTable<AppOutputOptions>& option_table();
  // Reads `options` with option_table() and builds the collector.
  static Result<std::unique_ptr<Collector>> create(const YAML::Node& options);

  explicit AppOutputCollector(AppOutputOptions options);

  std::string name() const override { return kName; }
  std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) override;

 private:
  AppOutputOptions options_;
};

}  // namespace attrib::collectors
