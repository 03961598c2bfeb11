// Shared helpers of the bench/ programs: the machine line, wall clock, RSS, percentiles
// and the figure lines every benchmark prints (`figure <name> <value> <unit>`), which
// bench/run-all.sh collects into its summary and the smoke test looks for.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace attrib::bench {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "unknown";
}

// "machine: 2 cores (nproc), AMD EPYC ..." -- printed first by every benchmark.
// The load average is printed too: figures taken while other work runs are not comparable.
inline void print_machine() {
  std::string load;
  std::ifstream("/proc/loadavg") >> load;
  std::printf("machine: %ld cores online, %u usable (nproc), cpu \"%s\", load average %s\n",
              ::sysconf(_SC_NPROCESSORS_ONLN), std::thread::hardware_concurrency(), cpu_model().c_str(), load.c_str());
}

// A /proc/self/status field in KiB (VmRSS, VmHWM).
inline uint64_t status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size()));
  return 0;
}
inline double rss_mib() { return static_cast<double>(status_kib("VmRSS")) / 1024.0; }
inline double peak_rss_mib() { return static_cast<double>(status_kib("VmHWM")) / 1024.0; }
// Resets VmHWM to the current RSS (Linux >= 4.0), so a later peak is this phase's own.
inline bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

inline void figure(const std::string& name, double value, const std::string& unit) {
  std::printf("figure %-36s %14.3f %s\n", name.c_str(), value, unit.c_str());
  std::fflush(stdout);
}
// target: met when value <= limit (below) or >= limit (!below); the miss is given as a ratio.
inline void target(const std::string& what, double value, double limit, bool below) {
  const bool met = below ? value <= limit : value >= limit;
  std::printf("target %-36s %s (%.3f %s %.3f)\n", what.c_str(), met ? "MET" : "MISSED", value,
              below ? "<=" : ">=", limit);
  std::fflush(stdout);
}

inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t index = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(index, v.size() - 1)];
}

}  // namespace attrib::bench
