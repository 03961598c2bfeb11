// The per-phase breakdown of an attempt (pipeline/phase_times.h): each phase from its
// two ends, only when both are known, never negative.
#include "attributiond/pipeline/phase_times.h"

#include <gtest/gtest.h>

namespace attrib::pipeline {
namespace {

constexpr TimeUs kMs = 1000;
constexpr TimeUs kEnd = 1796034000LL * 1000000;

TEST(PhaseTimes, EachPhaseRunsFromTheEndOfThePreviousOne) {
  PhaseTimes times{.job_end = kEnd,
                   .hook = kEnd + 20 * kMs,
                   .received = kEnd + 25 * kMs,
                   .scoped = kEnd + 2525 * kMs,
                   .collected = kEnd + 2565 * kMs,
                   .judged = kEnd + 2567 * kMs,
                   .archived = kEnd + 2571 * kMs,
                   .commented = kEnd + 2590 * kMs};
  const auto all = phases(times);
  ASSERT_EQ(all.size(), 7u);
  const char* names[] = {"hook", "queue", "record", "collect", "rules", "archive", "comment"};
  const TimeUs lengths[] = {20 * kMs, 5 * kMs, 2500 * kMs, 40 * kMs, 2 * kMs, 4 * kMs, 19 * kMs};
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_STREQ(all[i].name, names[i]);
    EXPECT_EQ(all[i].us, lengths[i]) << names[i];
  }
  EXPECT_EQ(describe_phases(times),
            "hook=20ms queue=5ms record=2500ms collect=40ms rules=2ms archive=4ms comment=19ms total=2590ms");
}

TEST(PhaseTimes, AnUnknownEndLeavesItsPhasesOutAndTheTotalStartsAtTheHook) {
  // No accounting end (the hook's facts only) and a hook that did not say when it ran.
  PhaseTimes times{.job_end = std::nullopt,
                   .hook = 0,
                   .received = kEnd + 10 * kMs,
                   .scoped = kEnd + 10 * kMs,
                   .collected = kEnd + 30 * kMs,
                   .judged = kEnd + 31 * kMs,
                   .archived = kEnd + 32 * kMs,
                   .commented = kEnd + 40 * kMs};
  const auto all = phases(times);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_STREQ(all.front().name, "record");
  EXPECT_EQ(all.front().us, 0);
  EXPECT_EQ(describe_phases(times), "record=0ms collect=20ms rules=1ms archive=1ms comment=8ms total=30ms");
}

TEST(PhaseTimes, AHookClockBehindTheHeadsReadsAsZeroNotNegative) {
  PhaseTimes times{.job_end = kEnd, .hook = kEnd - 300 * kMs, .received = kEnd - 200 * kMs, .scoped = 0};
  const auto all = phases(times);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].us, 0);  // the hook "ran" before the job ended: another host's clock
  EXPECT_EQ(all[1].us, 100 * kMs);
}

}  // namespace
}  // namespace attrib::pipeline
