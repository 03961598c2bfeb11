// attrib-doctor's checks of the spool the hook writes job ends into and the head reads:
// there, writable by the hook's user, not full, not backed up, nothing quarantined.
#pragma once

#include <optional>
#include <string>

#include "common/config.h"
#include "core/types.h"
#include "tools/attrib-doctor/findings.h"
#include "tools/attrib-doctor/run_as.h"

namespace attrib::doctor {

// hook_user: who writes the spool (the SlurmUser); without it, writability is not tried.
void check_spool(const common::Config& config, const std::optional<Identity>& hook_user, TimeUs now, Findings& out);

// Reports waiting in `dir` (or quarantined in dir/bad): how many, and the oldest's mtime.
struct SpoolBacklog {
  size_t waiting = 0;
  std::optional<TimeUs> oldest_waiting;
  size_t quarantined = 0;
  std::optional<TimeUs> oldest_quarantined;
};
SpoolBacklog spool_backlog(const std::string& dir);

// "3 min", "2.5 h", "4 d": how long ago `then` was.
std::string age_text(TimeUs now, TimeUs then);

}  // namespace attrib::doctor
