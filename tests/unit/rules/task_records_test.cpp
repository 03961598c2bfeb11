// Task records from spank_attrib.so (rules/pack/tasks.yaml): the first abnormal task end
// names the node to look at, later ones are its symptoms, and a rule that finds a
// cause still wins. Lines are in the spank_records collector's format.
#include <gtest/gtest.h>

#include "tests/support/rule_test_support.h"

namespace attrib::test {
namespace {

LogLine task_line(const std::string& node, const std::string& step, int rank, int exit_code, int signal,
                  const std::string& time, bool trusted = true) {
  const bool abnormal = exit_code != 0 || signal != 0;
  return LogLine{node,
                 "spank",
                 at(time),
                 0,
                 trusted,
                 std::string("attrib-spank: task exited ") + (abnormal ? "abnormally" : "normally") +
                     ": job=4242 step=" + step + " rank=" + std::to_string(rank) + " local_rank=" +
                     std::to_string(rank % 2) + " node=" + node + " pid=" + std::to_string(100 + rank) +
                     " exit_code=" + std::to_string(exit_code) + " signal=" + std::to_string(signal)};
}

Verdict attribute(const JobFacts& facts, const std::vector<LogLine>& lines) {
  return rules::correlate(*shipped_pack(), facts, extract(lines), full_coverage(facts.nodes));
}

// Abnormal ends are slurm.task_exit events; normal ones slurm.task_ended, which only tell
// the engine what the job held (docs/rules.md, "Evidence that belongs to the job").
TEST(TaskRecords, AbnormalEndsAreTaskExitsWithTypedFields) {
  const auto events = extract(
      {task_line("n2", "0", 3, 7, 0, "2026-11-30T10:10:00Z"), task_line("n1", "0", 0, 0, 0, "2026-11-30T10:10:05Z")});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kind, "slurm.task_ended");
  EXPECT_EQ(events[1].fields["node"], "n1");
  EXPECT_EQ(events[0].kind, "slurm.task_exit");
  EXPECT_EQ(events[0].rule, "slurm.spank_task_exit");
  EXPECT_EQ(events[0].fields["rank"], 3);
  EXPECT_EQ(events[0].fields["node"], "n2");
  EXPECT_EQ(events[0].fields["exit_code"], 7);
  EXPECT_EQ(events[0].fields["signal"], 0);
  EXPECT_EQ(events[0].fields["step"], "0");
  EXPECT_EQ(events[0].time, at("2026-11-30T10:10:00Z"));
  EXPECT_TRUE(events[0].trusted);
}

// srun -N3 -n6: rank 3 on n2 exits 7, rank 5 on n3 is killed later, then the batch step.
TEST(TaskRecords, FirstAbnormalTaskNamesTheNodeLaterOnesAreSymptoms) {
  const Verdict v =
      attribute(job("FAILED", 137, {"n1", "n2", "n3"}), {task_line("n3", "0", 5, 0, 9, "2026-11-30T10:10:02Z"),
                                                         task_line("n2", "0", 3, 7, 0, "2026-11-30T10:10:00Z"),
                                                         task_line("n1", "0", 0, 0, 0, "2026-11-30T10:10:04Z"),
                                                         task_line("n1", "batch", 0, 137, 0, "2026-11-30T10:10:05Z")});
  EXPECT_EQ(v.domain, "UNATTRIBUTED") << "an exit code says where, not why";
  EXPECT_FALSE(v.root_cause.has_value());
  EXPECT_EQ(v.recommended_action, "NONE");
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{"n2"});
  ASSERT_EQ(v.unexplained.size(), 1u);
  EXPECT_EQ(v.unexplained[0].fields["rank"], 3);
  ASSERT_EQ(v.symptoms.size(), 2u);
  for (const auto& s : v.symptoms) EXPECT_EQ(s.explained_by, "slurm.first_task_failure");
  EXPECT_EQ(v.symptoms[0].event.fields["rank"], 5);
  EXPECT_EQ(v.symptoms[0].event.fields["signal"], 9);
  EXPECT_EQ(v.symptoms[1].event.fields["step"], "batch");
  EXPECT_NE(v.comment.find("attrib: UNATTRIBUTED node=n2 action=NONE symptoms=2 unexplained=1"), std::string::npos)
      << v.comment;
}

TEST(TaskRecords, NccLFalloutOnOtherRanksIsASymptom) {
  const Verdict v =
      attribute(job("FAILED", 1, {"n1", "n2"}),
                {task_line("n2", "0", 1, 0, 11, "2026-11-30T10:10:00Z"),
                 app_line("n1", "app",
                          "[rank0]:[E1130 10:17:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
                          "collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=4, "
                          "NumelOut=4, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
                          at("2026-11-30T10:17:08Z"), 0)});
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{"n2"});
  ASSERT_EQ(v.symptoms.size(), 1u);
  EXPECT_EQ(v.symptoms[0].event.kind, "nccl.watchdog_timeout");
}

TEST(TaskRecords, HardwareRootElsewhereWinsAndTaskDeathsAreItsSymptoms) {
  const Verdict v = attribute(
      job("FAILED", 1, {"n1", "n2", "n3"}),
      {kernel_line("n2", "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
                   at("2026-11-30T10:10:03Z"), 0),
       task_line("n1", "0", 0, 1, 0, "2026-11-30T10:10:01Z"), task_line("n3", "0", 5, 0, 6, "2026-11-30T10:10:06Z")});
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->event.node, "n2");
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{"n2"});
  ASSERT_EQ(v.symptoms.size(), 2u);
  for (const auto& s : v.symptoms) EXPECT_EQ(s.explained_by, v.root_cause->rule);
  EXPECT_TRUE(v.unexplained.empty());
}

TEST(TaskRecords, CancelledJobKeepsTheSchedulerVerdict) {
  const Verdict v =
      attribute(job("CANCELLED", 0, {"n1"}, 15), {task_line("n1", "batch", 0, 0, 15, "2026-11-30T10:19:59Z")});
  EXPECT_EQ(v.domain, "SCHEDULER");
  ASSERT_EQ(v.symptoms.size(), 1u);
}

TEST(TaskRecords, UntrustedRecordNamesNoNode) {
  const Verdict v =
      attribute(job("FAILED", 7, {"n1", "n2"}), {task_line("n2", "0", 1, 7, 0, "2026-11-30T10:10:00Z", false)});
  EXPECT_EQ(v.domain, "UNATTRIBUTED");
  EXPECT_TRUE(v.affected_nodes.empty());
}

TEST(TaskRecords, SucceededJobIgnoresRecords) {
  const Verdict v = attribute(job("COMPLETED", 0, {"n1"}), {task_line("n1", "0", 0, 0, 0, "2026-11-30T10:10:00Z")});
  EXPECT_EQ(v.domain, "NONE");
  EXPECT_TRUE(v.affected_nodes.empty());
}

}  // namespace
}  // namespace attrib::test
