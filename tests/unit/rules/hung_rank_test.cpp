// The rank the others waited on, from the framework's own lines when no flight-recorder
// dump was written (the dumps themselves: tests/unit/collectors/flight_recorder_test.cpp,
// over dumps a real PyTorch wrote).
#include <gtest/gtest.h>

#include "tests/support/rule_test_support.h"

namespace attrib {
namespace {

LogLine app_line(const std::string& node, const std::string& text, uint64_t seq) {
  LogLine line = test::kernel_line(node, text, test::at("2025-03-21T02:07:08Z"), seq);
  line.source = "app";
  line.trusted = false;
  return line;
}

// ProcessGroupNCCL's watchdog line (pack rule pytorch.watchdog_exception; the format of
// github.com/hiyouga/LlamaFactory/issues/7396) from three ranks of one group: ranks 0
// and 1 had enqueued work 1582, rank 3 only 1579. Constructed in that format for this test.
std::string watchdog(int rank, int enqueued, int completed) {
  return "[rank" + std::to_string(rank) + "]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank " +
         std::to_string(rank) + "] Exception (either an error or timeout) detected by watchdog at work: " +
         std::to_string(completed + 1) + ", last enqueued NCCL work: " + std::to_string(enqueued) +
         ", last completed NCCL work: " + std::to_string(completed) + ".";
}

TEST(HungRank, TheWatchdogsLastEnqueuedWorkNamesTheRankThatFellBehind) {
  const Verdict v = test::attribute(test::job("FAILED", 1, {"n1", "n2"}), {
                                                                             app_line("n1", watchdog(0, 1582, 1579), 1),
                                                                             app_line("n1", watchdog(1, 1582, 1579), 2),
                                                                             app_line("n2", watchdog(3, 1579, 1579), 1),
                                                                         });
  ASSERT_TRUE(v.hung_rank.has_value()) << v.comment;
  EXPECT_EQ(v.hung_rank->rank, 3);
  EXPECT_EQ(v.hung_rank->node, "n2");
  EXPECT_EQ(v.hung_rank->process_group, "1");
  EXPECT_EQ(v.hung_rank->seq, 1580);
  EXPECT_EQ(v.hung_rank->waiting_ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(v.hung_rank->evidence, "watchdog");
}

TEST(HungRank, RanksThatAllGotAsFarNameNoOne) {
  const Verdict v = test::attribute(test::job("FAILED", 1, {"n1"}), {
                                                                       app_line("n1", watchdog(0, 1582, 1579), 1),
                                                                       app_line("n1", watchdog(1, 1582, 1579), 2),
                                                                   });
  EXPECT_FALSE(v.hung_rank.has_value());
}

// PyTorch's desync report, verbatim from github.com/pytorch/pytorch/issues/152623.
TEST(HungRank, TheDesyncReportNamesTheLaggingRank) {
  const Verdict v = test::attribute(
      test::job("FAILED", 1, {"n1"}),
      {app_line("n1", "[7] finished collective #182, but didn't join collective #183 (count from 1)", 1)});
  ASSERT_TRUE(v.hung_rank.has_value()) << v.comment;
  EXPECT_EQ(v.hung_rank->rank, 7);
  EXPECT_EQ(v.hung_rank->seq, 183);
  EXPECT_EQ(v.hung_rank->evidence, "desync_report");
  EXPECT_EQ(v.hung_rank->summary, "rank 7 never joined collective #183 (PyTorch's desync report)");
}

TEST(HungRank, AJobThatSucceededHasNone) {
  const Verdict v = test::attribute(test::job("COMPLETED", 0, {"n1", "n2"}),
                                    {app_line("n1", watchdog(0, 1582, 1579), 1), app_line("n2", watchdog(3, 1579, 1579), 1)});
  EXPECT_FALSE(v.hung_rank.has_value());
}

}  // namespace
}  // namespace attrib
