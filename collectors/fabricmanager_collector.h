// The Fabric Manager log collector: reads NVIDIA Fabric Manager's own log file
// (and its rotated ".1", oldest first), whose lines carry node-local time without
// a zone and whose entries may continue on lines without a timestamp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"

namespace attrib::collectors {

struct FabricManagerOptions {
  std::string path = "/var/log/fabricmanager.log";  // may contain {node}
  int timezone_offset_minutes = 0;                  // node-local time = UTC + offset
};

class FabricManagerCollector final : public Collector {
 public:
  static constexpr const char* kName = "fabricmanager";

  static const OptionTable<FabricManagerOptions>& option_table();
  // Reads `options` with option_table() and builds the collector.
  static Result<std::unique_ptr<Collector>> create(const YAML::Node& options);

  explicit FabricManagerCollector(FabricManagerOptions options);

  std::string name() const override { return kName; }
  std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) override;

 private:
  FabricManagerOptions options_;
};

}  // namespace attrib::collectors
