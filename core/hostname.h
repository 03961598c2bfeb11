// This host's short name (up to the first dot): what Slurm calls a node on most
// clusters, and what a node agent, the SPANK plugin and attrib-show name this host by.
#pragma once

#include <unistd.h>

#include <string>

namespace attrib {

// "" when the kernel gives no name.
inline std::string short_hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  std::string host(name);
  return host.substr(0, host.find('.'));
}

}  // namespace attrib
