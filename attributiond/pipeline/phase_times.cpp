#include "attributiond/pipeline/phase_times.h"

#include <algorithm>

namespace attrib::pipeline {

std::vector<Phase> phases(const PhaseTimes& times) {
  std::vector<Phase> out;
  auto add = [&](const char* name, TimeUs from, TimeUs to) {
    if (from > 0 && to > 0) out.push_back({name, std::max<TimeUs>(to - from, 0)});
  };
  add("hook", times.job_end.value_or(0), times.hook);
  add("queue", times.hook, times.received);
  add("record", times.received, times.scoped);
  add("collect", times.scoped, times.collected);
  add("rules", times.collected, times.judged);
  add("archive", times.judged, times.archived);
  add("comment", times.archived, times.commented);
  return out;
}

std::string describe_phases(const PhaseTimes& times) {
  std::string out;
  for (const Phase& phase : phases(times))
    out += std::string(phase.name) + "=" + std::to_string(phase.us / 1000) + "ms ";
  const TimeUs start = times.job_end.value_or(times.hook > 0 ? times.hook : times.received);
  out += "total=" + std::to_string(std::max<TimeUs>(times.commented - start, 0) / 1000) + "ms";
  return out;
}

}  // namespace attrib::pipeline
