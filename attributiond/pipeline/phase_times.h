// Where one attempt's time went, from the job's end to its comment in slurmdbd: the
// per-phase breakdown the daemon logs for every attributed job, counts in the
// attrib_attribution_phase_seconds histogram, and benchmark 6 (e2e_sacct_latency.sh)
// reports as percentiles. Known only for an attempt that scoped, judged and commented the
// job in one go (a comment retried later has no collect or rules phase to report).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/types.h"

namespace attrib::pipeline {

struct PhaseTimes {
  std::optional<TimeUs> job_end;  // the accounting record's end (else the hook's time is the start)
  TimeUs hook = 0;                // the hook ran (JobEnded.hook_time_us); 0 when it did not say
  TimeUs received = 0;            // the head queued the report
  TimeUs scoped = 0;              // the attempt that found the final accounting record began
  TimeUs collected = 0;           // every node's evidence in
  TimeUs judged = 0;              // the rules' verdict made
  TimeUs archived = 0;            // the archive's transaction committed
  TimeUs commented = 0;           // the comment written and read back
};

struct Phase {
  const char* name;  // hook, queue, record, collect, rules, archive, comment
  TimeUs us;         // never negative (a clock step between hosts reads as 0)
};

// The phases whose both ends are known, in order: hook (job end -> hook ran), queue (hook
// -> queued), record (queued -> the final accounting record read: slurmdbd's lag and the
// polling), collect, rules, archive, comment.
std::vector<Phase> phases(const PhaseTimes& times);

// "hook=12ms queue=3ms record=2510ms collect=41ms rules=2ms archive=4ms comment=18ms
// total=2590ms": total from the job's end (else the hook's time) to the comment.
std::string describe_phases(const PhaseTimes& times);

}  // namespace attrib::pipeline
