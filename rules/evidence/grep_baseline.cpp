#include "rules/evidence/grep_baseline.h"

#include <re2/re2.h>

namespace attrib::rules {

const std::vector<GrepPattern>& grep_baseline_patterns() {
  // A site's triage script, most specific first. Written from what such scripts commonly
  // look for, not from the corpus they are measured on.
  static const std::vector<GrepPattern> patterns = {
      {"GPU_HARDWARE", R"(Xid|fallen off the bus|uncorrectable ECC|ECC error)"},
      {"NVLINK_FABRIC", R"(NVSwitch|fabric ?manager|NVLink)"},
      {"GPU_DRIVER", R"(version mismatch|RmInitAdapter|couldn't communicate with the NVIDIA driver)"},
      {"NETWORK", R"(NET/IB|mlx5|ibv_|infiniband|link down)"},
      {"STORAGE", R"(I/O error|No space left on device|Stale file handle|Lustre|nfs: server)"},
      {"APPLICATION", R"(out of memory|oom-kill|oom_kill)"},
      {"SCHEDULER", R"(DUE TO TIME LIMIT|CANCELLED AT|PREEMPTION)"},
      {"APPLICATION", R"(Traceback|Segmentation fault|error)"},
  };
  return patterns;
}

GrepBaseline::GrepBaseline() : best_(grep_baseline_patterns().size()) {
  RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);
  for (const auto& p : grep_baseline_patterns()) compiled_.push_back(std::make_unique<RE2>(p.regex, options));
}

GrepBaseline::~GrepBaseline() = default;

void GrepBaseline::feed(const std::string& line) {
  for (size_t i = 0; i < best_; ++i) {
    if (RE2::PartialMatch(line, *compiled_[i])) {
      best_ = i;
      return;
    }
  }
}

std::string GrepBaseline::domain() const {
  return best_ < grep_baseline_patterns().size() ? grep_baseline_patterns()[best_].domain : "UNATTRIBUTED";
}

}  // namespace attrib::rules
