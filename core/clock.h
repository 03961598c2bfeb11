// The wall clock as every part of attrib reads it: microseconds since the Unix epoch (UTC),
// the unit of TimeUs. One definition, so the hook, the daemon, the tools and the tests
// never disagree on it.
#pragma once

#include <chrono>

#include "core/types.h"

namespace attrib {

inline TimeUs wall_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace attrib
