#include <algorithm>
#include <gtest/gtest.h>

#include "tests/support/rule_test_support.h"

namespace attrib {
namespace {

using test::app_line;
using test::at;
using test::kernel_line;

TEST(Extractor, TypedFieldsFromARealXidLine) {
  const auto events = test::extract(
      {kernel_line("n2", "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
                   at("2026-11-30T10:03:12Z"), 5)});
  ASSERT_EQ(events.size(), 1u);
  const Event& e = events[0];
  EXPECT_EQ(e.kind, "gpu.xid");
  EXPECT_EQ(e.rule, "nvidia.xid");
  EXPECT_EQ(e.fields["xid"], 79);
  EXPECT_TRUE(e.fields["xid"].is_number_integer());
  EXPECT_EQ(e.fields["pci"], "0000:3b:00");
  EXPECT_TRUE(e.trusted);
  EXPECT_EQ(e.count, 1u);
  EXPECT_TRUE(e.id.empty());
}

TEST(Extractor, SourcesSelectRules) {
  // slurmctld's "Killing JobId" rule applies to the slurm source only; kernel rules not to app.
  const auto events = test::extract({
      app_line("n1", "app", "Killing JobId=48 on failed node node03", std::nullopt, 1),
      app_line("n1", "app.rank0", "mlx5_core 0000:53:00.0 mlx5_3: Port: 1 Link DOWN", std::nullopt, 2),
      LogLine{"head", "slurm", std::nullopt, 1, true, "Killing JobId=48 on failed node node03"},
      LogLine{"n1", "bogus", std::nullopt, 1, true, "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."},
  });
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "slurm.node_failed");
  EXPECT_EQ(events[0].fields["host"], "node03");
}

TEST(Extractor, ApplicationOutputIsNeverTrusted) {
  const auto events = test::extract({LogLine{"n1", "app.rank3", std::nullopt, 1, /*trusted=*/true,
                                             "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."}});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].trusted);
}

TEST(Extractor, StormOfIdenticalLinesFoldsIntoOneEvent) {
  const auto pack = test::shipped_pack();
  rules::Extractor extractor(pack);
  const std::string line =
      "NVRM: Xid (PCI:0000:01:00): 95, pid=7062, Uncontained: LTC TAG (0x2, 0x1). RST: Yes, D-RST: No";
  const TimeUs t0 = at("2026-11-30T10:03:12Z");
  for (uint64_t i = 0; i < 100000; ++i) {
    // fed newest first: the folded event must still keep the earliest occurrence
    extractor.feed(kernel_line("n2", line, t0 + static_cast<TimeUs>(100000 - i), 100000 - i));
  }
  const auto events = extractor.finish();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].count, 100000u);
  EXPECT_EQ(events[0].time, t0 + 1);
  EXPECT_EQ(events[0].seq, 1u);
  EXPECT_EQ(events[0].fields["xid"], 95);
}

TEST(Extractor, DistinctEventsAreBounded) {
  rules::Extractor extractor(test::shipped_pack(), 10);
  for (int i = 0; i < 50; ++i) {
    extractor.feed(kernel_line("n2", "NVRM: Xid (PCI:0000:01:00): 13, pid=" + std::to_string(i) + ", name=python3, x",
                               std::nullopt, static_cast<uint64_t>(i)));
  }
  EXPECT_EQ(extractor.finish().size(), 10u);
  EXPECT_EQ(extractor.dropped_events(), 40u);
}

// A repeated line reuses the last line's outcome (no scan, no regex): the events are the
// same as feeding it the long way. Another node's or another trust's copy is its own
// event, and a repeat of a line whose event was dropped at the cap stays dropped, counted.
TEST(Extractor, RepeatedLinesFoldLikeDistinctOnesAndDropsStayCounted) {
  rules::Extractor extractor(test::shipped_pack(), 2);
  const std::string xid = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.";
  for (uint64_t i = 0; i < 5; ++i) extractor.feed(kernel_line("n1", xid, std::nullopt, i));
  for (uint64_t i = 0; i < 3; ++i) extractor.feed(kernel_line("n2", xid, std::nullopt, i));
  LogLine untrusted = kernel_line("n2", xid, std::nullopt, 9);
  untrusted.trusted = false;
  for (int i = 0; i < 4; ++i) extractor.feed(untrusted);  // over the cap of 2 distinct events
  const auto events = extractor.finish();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].node, "n1");
  EXPECT_EQ(events[0].count, 5u);
  EXPECT_EQ(events[1].node, "n2");
  EXPECT_EQ(events[1].count, 3u);
  EXPECT_TRUE(events[1].trusted);
  EXPECT_EQ(extractor.dropped_events(), 4u);
}

// A repeated first line of a block opens it again each time, as the long way does: the
// block rules see every line.
TEST(Extractor, RepeatedLinesStillReachTheBlockRules) {
  rules::Extractor extractor(test::shipped_pack());
  // The driver's three-line block (rules/pack/nvidia.yaml, nvidia.fallen_off_bus_probe),
  // its first line repeated: each repeat opens the block again, the end closes it.
  for (uint64_t i = 0; i < 3; ++i) extractor.feed(kernel_line("n1", "NVRM: The NVIDIA GPU 0000:b3:00.0", std::nullopt, i));
  extractor.feed(kernel_line("n1", "NVRM: (PCI ID: 10de:26b5) installed in this system has", std::nullopt, 3));
  extractor.feed(kernel_line("n1", "NVRM: fallen off the bus and is not responding to commands.", std::nullopt, 4));
  const auto events = extractor.finish();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "gpu.fallen_off_bus");
  EXPECT_EQ(events[0].fields["pci"], "0000:b3:00.0");

  // A middle line repeated counts as the lines it is: the end then comes past max_lines (3)
  // and the block is dropped, as it is for distinct lines.
  rules::Extractor again(test::shipped_pack());
  again.feed(kernel_line("n1", "NVRM: The NVIDIA GPU 0000:b3:00.0", std::nullopt, 0));
  for (uint64_t i = 1; i < 4; ++i)
    again.feed(kernel_line("n1", "NVRM: (PCI ID: 10de:26b5) installed in this system has", std::nullopt, i));
  again.feed(kernel_line("n1", "NVRM: fallen off the bus and is not responding to commands.", std::nullopt, 4));
  EXPECT_TRUE(again.finish().empty());
}

TEST(Extractor, ANoisyStreamCannotCrowdOutAnotherAndTheLossIsNamed) {
  rules::Extractor extractor(test::shipped_pack(), 100, 10);
  for (int i = 0; i < 50; ++i) {  // the same trusted-looking message, in a job's output
    LogLine line;
    line.node = "n1";
    line.source = "app";
    line.seq = static_cast<uint64_t>(i);
    line.text = "RuntimeError: CUDA error: an illegal memory access was encountered " + std::to_string(i);
    extractor.feed(line);
  }
  extractor.feed(kernel_line("n1", "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.", std::nullopt, 0));
  const auto events = extractor.finish();
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const Event& e) { return e.source == "kernel"; }));
  const auto dropped = extractor.dropped_by_stream();
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].node, "n1");
  EXPECT_EQ(dropped[0].source, "app");
  EXPECT_EQ(dropped[0].events, 40u);
}

TEST(Extractor, OrdersTimedEventsByTimeThenUntimedByStream) {
  const auto events = test::extract({
      app_line("n3", "app.rank2", "srun: error: n3: task 2: Exited with exit code 1", std::nullopt, 9),
      app_line("n1", "app.rank0", "srun: error: n1: task 0: Exited with exit code 1", std::nullopt, 4),
      kernel_line("n2", "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.", at("2026-11-30T10:03:12Z"), 2),
      kernel_line("n1", "NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=x, y", at("2026-11-30T10:03:11Z"), 7),
  });
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].node, "n1");
  EXPECT_EQ(events[0].fields["xid"], 13);
  EXPECT_EQ(events[1].fields["xid"], 79);
  EXPECT_EQ(events[2].node, "n1");  // untimed: by (node, source, seq)
  EXPECT_EQ(events[3].node, "n3");
}

TEST(Extractor, SystemLinesMatchFromTheMessageStartApplicationOutputAnywhere) {
  // A system log's payload is its emitter's message (collectors and the bundle reader
  // strip the stamp): a rule reads it from the start, never inside it, so text that only
  // contains a kernel message (a file name, a comm) is not that message. Application
  // output carries any prefix (slurmstepd's, a rank label) and is matched anywhere.
  const auto events = test::extract(
      {kernel_line("n2", "NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.", std::nullopt, 1),
       kernel_line("n3", "x NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.", std::nullopt, 2),
       app_line("n1", "app",
                "slurmstepd: error: *** JOB 4242 ON n1 CANCELLED AT 2026-11-30T10:20:00 DUE TO TIME LIMIT ***",
                std::nullopt, 3)});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, "slurm.time_limit");
  EXPECT_EQ(events[1].kind, "gpu.xid");
  EXPECT_EQ(events[1].node, "n2");
}

}  // namespace
}  // namespace attrib
