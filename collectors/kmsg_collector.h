// The kernel ring collector: reads records in /dev/kmsg format
// ("prio,seq,usec,flags;message") from the device itself or from a file or FIFO
// holding them (nodes without a persistent journal, or a copy taken elsewhere),
// and turns boot-relative timestamps into wall-clock time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"

namespace attrib::collectors {

struct KmsgOptions {
  std::string path = "/dev/kmsg";  // may contain {node}
  std::string boot_time = "auto";  // "auto", epoch seconds, or an absolute path template
};

class KmsgCollector final : public Collector {
 public:
  static constexpr const char* kName = "kmsg";

  static const OptionTable<KmsgOptions>& option_table();
  // Reads `options` with option_table() and builds the collector.
  static Result<std::unique_ptr<Collector>> create(const YAML::Node& options);

  explicit KmsgCollector(KmsgOptions options);

  std::string name() const override { return kName; }
  std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) override;

 private:
  // Boot time of `node` in epoch µs, from the boot_time option.
  Result<TimeUs> boot_time_of(const std::string& node) const;

  KmsgOptions options_;
};

}  // namespace attrib::collectors
