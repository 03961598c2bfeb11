// The plugstack.conf arguments of spank_attrib.so, parsed strictly.
//
// Sites write `optional /usr/lib/.../spank_attrib.so spool_dir=/var/spool/attrib/tasks`.
// Every argument is key=value with a known key; anything else is an error, and the
// plugin then goes inert (a job must never fail because of attribution).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace attrib::spank {

inline constexpr const char* kDefaultSpoolDir = "/var/spool/attrib/tasks";
inline constexpr int64_t kDefaultTraceBufferSize = 2000;

struct PluginArgs {
  // Node-local directory for task records; "%n" is replaced by the Slurm node name
  // (lets several nodes that share one filesystem, as in a test cluster, stay apart).
  std::string spool_dir = kDefaultSpoolDir;
  // Whether users may opt a job out with --attrib=off (site decision; default no).
  bool allow_opt_out = false;
  // TORCH_NCCL_TRACE_BUFFER_SIZE set by --attrib-evidence when the user has not set it.
  int64_t nccl_trace_buffer_size = kDefaultTraceBufferSize;
};

// Parses argv[0..argc) from plugstack.conf. Error code SPANK_E_ARG names the argument.
Result<PluginArgs> parse_plugin_args(const std::vector<std::string>& args);

// spool_dir with every "%n" replaced by `node`.
std::string expand_spool_dir(const std::string& pattern, const std::string& node);

}  // namespace attrib::spank
