// The gpu_map collector: which PCI bus id each GPU index on a node stands for, read from
// the NVIDIA driver's own files (/proc/driver/nvidia/gpus/<bus id>/information, written by
// kernel-open/nvidia/nv-procfs.c: "Bus Location: \t %04x:%02x:%02x.%x", "Device Minor:
// \t %u"). Slurm names a job's GPUs by index (SLURM_JOB_GPUS, in the SPANK task records),
// the driver's Xid lines by PCI bus id: this map lets the engine tell an Xid on the job's
// GPU from one on a neighbour's (docs/rules.md, "Evidence that belongs to the job").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"

namespace attrib::collectors {

struct GpuMapOptions {
  // The driver's per-GPU directory; "{node}" is replaced by the Slurm node name (tests, and
  // a head that reads copies of the nodes' files).
  std::string directory;
};

class GpuMapCollector final : public Collector {
 public:
  static constexpr const char* kName = "gpu_map";
  static constexpr const char* kSource = "gpus";

  static const OptionTable<GpuMapOptions>& option_table();
  static Result<std::unique_ptr<Collector>> create(const YAML::Node& options);

  explicit GpuMapCollector(GpuMapOptions options);

  std::string name() const override { return kName; }
  std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) override;

 private:
  GpuMapOptions options_;
};

// The line handed to the rules for one GPU (rule driver.gpu_minor):
// "attrib-gpu-map: minor=0 pci=0000:07:00.0".
std::string gpu_map_line(unsigned minor, const std::string& pci);

// "Device Minor" and "Bus Location" from one information file's text; nullopt when either
// is missing or malformed.
struct GpuMapEntry {
  unsigned minor = 0;
  std::string pci;
};
std::optional<GpuMapEntry> parse_gpu_information(const std::string& text);

}  // namespace attrib::collectors
