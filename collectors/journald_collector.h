// The journald collector: reads a node's kernel, Fabric Manager, syslog and
// application entries from a systemd journal through sd-journal (libsystemd).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"

namespace attrib::collectors {

struct JournaldOptions {
  std::string directory;                     // empty: the local system journal
  bool match_hostname = false;               // keep only entries whose _HOSTNAME is the node
  std::vector<std::string> identifiers;      // SYSLOG_IDENTIFIERs collected besides the kernel
  std::vector<std::string> app_identifiers;  // SYSLOG_IDENTIFIERs that are application output
};

class JournaldCollector final : public Collector {
 public:
  static constexpr const char* kName = "journald";

  // The documented option table (drives validation and the configuration reference).
  static const OptionTable<JournaldOptions>& option_table();
  // Reads `options` with option_table() and builds the collector.
  static Result<std::unique_ptr<Collector>> create(const YAML::Node& options);

  explicit JournaldCollector(JournaldOptions options);

  std::string name() const override { return kName; }
  std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) override;

  // Source names this configuration reads, in report order (always starts with "kernel").
  std::vector<std::string> source_names() const;

 private:
  JournaldOptions options_;
};

}  // namespace attrib::collectors
