// Verdict semantics on realistic lines (message-formats.md), one scenario per test.
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "core/comment.h"
#include "tests/support/rule_test_support.h"

namespace attrib {
namespace {

using test::app_line;
using test::at;
using test::job;
using test::kernel_line;

const std::vector<std::string> kNodes = {"n1", "n2", "n3"};

std::string watchdog_line(int rank, int seq) {
  return "[rank" + std::to_string(rank) + "]:[E1130 10:13:12.408271257 ProcessGroupNCCL.cpp:607] [Rank " +
         std::to_string(rank) +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" + std::to_string(seq) +
         ", OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds "
         "before timing out.";
}

const char* kXid79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";

std::vector<LogLine> gpu_failure_lines() {
  return {
      kernel_line("n2", "NVRM: GPU at PCI:0000:3b:00: GPU-660d987e-5b28-3bf6-2a2d-1d5ecae7f6df",
                  at("2026-11-30T10:03:12Z"), 40),
      kernel_line("n2", kXid79, at("2026-11-30T10:03:12.000100Z"), 41),
      app_line("n1", "app.rank0", watchdog_line(0, 1580), at("2026-11-30T10:13:12Z"), 900),
      app_line("n3", "app.rank2", watchdog_line(2, 1580), at("2026-11-30T10:13:13Z"), 700),
  };
}

std::vector<std::string> kinds(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.kind);
  return out;
}

TEST(Correlate, XidFallenOffTheBusExplainsWatchdogTimeoutsOnOtherNodes) {
  const Verdict v = test::attribute(job("FAILED", 1, kNodes), gpu_failure_lines());
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "gpu.fallen_off_bus");
  EXPECT_EQ(v.root_cause->summary, "GPU 0000:3b:00 on n2 fell off the bus (Xid 79)");
  EXPECT_EQ(v.root_cause->event.node, "n2");
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{"n2"});
  ASSERT_EQ(v.affected_gpus.size(), 1u);
  EXPECT_EQ(v.affected_gpus[0].node, "n2");
  EXPECT_EQ(v.affected_gpus[0].pci, "0000:3b:00.0");
  EXPECT_EQ(v.recommended_action, "DRAIN_NODE");
  EXPECT_TRUE(v.candidates.empty());

  std::vector<std::string> timeout_nodes;
  for (const auto& s : v.symptoms) {
    EXPECT_EQ(s.explained_by, "gpu.fallen_off_bus");
    if (s.event.kind == "nccl.watchdog_timeout") timeout_nodes.push_back(s.event.node);
  }
  EXPECT_EQ(timeout_nodes, (std::vector<std::string>{"n1", "n3"}));
  // The driver's "GPU at PCI:… GPU-<uuid>" line names the failed GPU in the root cause.
  EXPECT_EQ(v.root_cause->event.fields.value("gpu_uuid", ""), "GPU-660d987e-5b28-3bf6-2a2d-1d5ecae7f6df");
  EXPECT_TRUE(v.unexplained.empty());
  // ids follow the deterministic order: the uuid line, the Xid, then the timeouts
  EXPECT_EQ(v.root_cause->event.id, "e2");
  EXPECT_EQ(v.ruleset_version, "1.8.1");
  EXPECT_EQ(v.ruleset_hash, rules::pack_hash(*test::shipped_pack()));
  EXPECT_EQ(v.comment, render_comment(v));
}

TEST(Correlate, CommentForTheGpuFailure) {
  // Only the Xid and the two timeouts: symptoms=2.
  auto lines = gpu_failure_lines();
  lines.erase(lines.begin());
  const Verdict v = test::attribute(job("FAILED", 1, kNodes), lines);
  EXPECT_EQ(v.comment,
            "attrib: GPU_HARDWARE node=n2 gpu=0000:3b:00.0 rule=gpu.fallen_off_bus action=DRAIN_NODE symptoms=2 "
            "coverage=3/3");
  EXPECT_EQ(merge_comment("exp 42", v.comment), "exp 42 | " + v.comment);
}

TEST(Correlate, HangUntilTimeLimitAfterXid79IsAGpuVerdict) {
  auto lines = gpu_failure_lines();
  lines.push_back(app_line(
      "n1", "app", "slurmstepd: error: *** JOB 4242 ON n1 CANCELLED AT 2026-11-30T10:20:00 DUE TO TIME LIMIT ***",
      at("2026-11-30T10:20:00Z"), 1000));
  const Verdict v = test::attribute(job("TIMEOUT", 0, kNodes, 15), lines);
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "gpu.fallen_off_bus");
  const auto symptom_kinds = [&] {
    std::vector<std::string> out;
    for (const auto& s : v.symptoms) out.push_back(s.event.kind);
    return out;
  }();
  EXPECT_NE(std::find(symptom_kinds.begin(), symptom_kinds.end(), "slurm.job_state"), symptom_kinds.end());
  EXPECT_NE(std::find(symptom_kinds.begin(), symptom_kinds.end(), "slurm.time_limit"), symptom_kinds.end());
}

TEST(Correlate, CleanSuccessIsNone) {
  const Verdict v =
      test::attribute(job("COMPLETED", 0, kNodes),
                      {app_line("n1", "app", "gh-3714u15:7038:7053 [0] NCCL INFO Bootstrap : Using eth0:10.1.32.2<0>",
                                std::nullopt, 1)});
  EXPECT_EQ(v.domain, "NONE");
  EXPECT_FALSE(v.root_cause.has_value());
  EXPECT_EQ(v.recommended_action, "NONE");
  EXPECT_TRUE(v.symptoms.empty());
  EXPECT_EQ(v.comment, "attrib: NONE coverage=3/3");
}

TEST(Correlate, SuccessWithNoiseIsStillNone) {
  // A benign Xid and an unrelated application Xid never make a successful job a failure.
  const Verdict v =
      test::attribute(job("COMPLETED", 0, kNodes),
                      {kernel_line("n1", "NVRM: Xid (PCI:0000:cb:00): 43, pid=1, name=python3, Ch 00000008",
                                   at("2026-11-30T09:00:00Z"), 1),
                       kernel_line("n1", kXid79, at("2026-11-30T10:30:00Z"), 2)});
  EXPECT_EQ(v.domain, "NONE");
  EXPECT_EQ(v.unexplained.size(), 2u);
}

TEST(Correlate, FailedJobWithoutEvidenceIsUnattributed) {
  const Verdict v = test::attribute(job("FAILED", 3, kNodes), {});
  EXPECT_EQ(v.domain, "UNATTRIBUTED");
  EXPECT_FALSE(v.root_cause.has_value());
  EXPECT_TRUE(v.unexplained.empty());
  EXPECT_EQ(v.exit_code, 3);
  EXPECT_EQ(v.comment, "attrib: UNATTRIBUTED action=NONE symptoms=0 unexplained=0 coverage=3/3 conf=low");
}

TEST(Correlate, OnlyWatchdogTimeoutsIsUnattributedWithThemListed) {
  const Verdict v = test::attribute(job("FAILED", 1, kNodes),
                                    {app_line("n1", "app.rank0", watchdog_line(0, 10), at("2026-11-30T10:13:12Z"), 1),
                                     app_line("n3", "app.rank2", watchdog_line(2, 10), at("2026-11-30T10:13:12Z"), 1)});
  EXPECT_EQ(v.domain, "UNATTRIBUTED");
  EXPECT_EQ(kinds(v.unexplained), (std::vector<std::string>{"nccl.watchdog_timeout", "nccl.watchdog_timeout"}));
}

TEST(Correlate, CancelledIsScheduler) {
  const Verdict v = test::attribute(
      job("CANCELLED", 0, kNodes, 15),
      {app_line("n1", "app", "slurmstepd: error: *** JOB 4242 ON n1 CANCELLED AT 2026-11-30T10:19:00 ***", std::nullopt,
                5),
       app_line("n1", "app", "srun: error: n1: tasks 0-3: Terminated", std::nullopt, 6)});
  EXPECT_EQ(v.domain, "SCHEDULER");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "slurm.cancelled");
  EXPECT_EQ(v.root_cause->event.kind, "slurm.job_state");
  EXPECT_EQ(v.root_cause->summary, "Job 4242 was cancelled");
  EXPECT_EQ(v.recommended_action, "NONE");
  EXPECT_EQ(kinds([&] {
              std::vector<Event> out;
              for (const auto& s : v.symptoms) out.push_back(s.event);
              return out;
            }()),
            (std::vector<std::string>{"slurm.cancelled", "slurm.task_exit"}));
}

// The accounting job line names who cancelled (slurmdbd's requid): the verdict says so,
// whether it was the job's own user or root.
TEST(Correlate, CancelledByNamesTheUser) {
  for (const auto& [who, uid] : {std::pair<std::string, int>{"alice", 1000}, {"root", 0}}) {
    const Verdict v = test::attribute(
        job("CANCELLED", 0, kNodes, 15),
        {LogLine{"n1", "slurm", at("2026-11-30T10:19:00Z"), 0, true,
                 "job 4242 ended CANCELLED exit_code=0 signal=15 reason=None requeues=0 on n[1-3] cancelled_by=" + who +
                     "(" + std::to_string(uid) + ")"},
         app_line("n1", "app", "slurmstepd: error: *** JOB 4242 ON n1 CANCELLED AT 2026-11-30T10:19:00 ***",
                  std::nullopt, 5)});
    EXPECT_EQ(v.domain, "SCHEDULER");
    EXPECT_EQ(v.recommended_action, "NONE");
    ASSERT_TRUE(v.root_cause.has_value());
    EXPECT_EQ(v.root_cause->rule, "slurm.cancelled_by");
    EXPECT_EQ(v.root_cause->summary, "Job 4242 was cancelled by " + who + " (uid " + std::to_string(uid) + ")");
    std::vector<std::string> symptom_kinds;
    for (const auto& sym : v.symptoms) symptom_kinds.push_back(sym.event.kind);
    std::sort(symptom_kinds.begin(), symptom_kinds.end());
    EXPECT_EQ(symptom_kinds, (std::vector<std::string>{"slurm.cancelled", "slurm.job_state"}));
    EXPECT_TRUE(v.unexplained.empty());
  }
  // Users cannot name a canceller: the same text in the job's output is not evidence.
  const Verdict forged = test::attribute(
      job("CANCELLED", 0, kNodes, 15),
      {app_line("n1", "app",
                "job 4242 ended CANCELLED exit_code=0 signal=15 reason=None requeues=0 on n1 cancelled_by=root(0)",
                std::nullopt, 1)});
  ASSERT_TRUE(forged.root_cause.has_value());
  EXPECT_EQ(forged.root_cause->rule, "slurm.cancelled");
}

// Xid 13/31 are the application's unless the same GPU fails for different processes
// (root.distinct on pid, scope same_gpu).
const char* kXid13Pid100 =
    "NVRM: Xid (PCI:0000:3b:00): 13, pid=100, name=python, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal "
    "Instruction Parameter";
std::string xid13(const std::string& pci, const std::string& pid) {
  return "NVRM: Xid (PCI:" + pci + "): 13, pid=" + pid +
         ", name=python, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter";
}

TEST(Correlate, Xid13TwiceFromOneProcessIsTheApplication) {
  const Verdict v =
      test::attribute(job("FAILED", 1, kNodes), {kernel_line("n1", kXid13Pid100, at("2026-11-30T10:01:00Z"), 1),
                                                 kernel_line("n1", kXid13Pid100, at("2026-11-30T10:02:00Z"), 2)});
  EXPECT_EQ(v.domain, "APPLICATION");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "gpu.xid_job_fatal");
  EXPECT_EQ(v.recommended_action, "FIX_APPLICATION");
}

TEST(Correlate, Xid13FromTwoProcessesOnOneGpuIsTheGpu) {
  const Verdict v = test::attribute(
      job("FAILED", 1, kNodes),
      {kernel_line("n1", xid13("0000:3b:00", "100"), at("2026-11-30T10:01:00Z"), 1),
       kernel_line("n1",
                   "NVRM: Xid (PCI:0000:3b:00): 13, pid=100, name=python, Graphics Exception: ESR 0x57c730=0xc04000b "
                   "0x57c734=0x24 0x57c728=0x1f81fb60 0x57c72c=0x1174",
                   at("2026-11-30T10:01:30Z"), 2),
       kernel_line(
           "n1",
           "NVRM: Xid (PCI:0000:3b:00): 31, pid=230, name=python, channel 0x0000000c, intr 00000000. MMU Fault: "
           "ENGINE GRAPHICS GPC2 GPCCLIENT_PROP_0 faulted @ 0x0_00000000. Fault is of type FAULT_PDE "
           "ACCESS_TYPE_VIRT_READ",
           at("2026-11-30T10:02:00Z"), 3),
       app_line("n2", "app.rank1", watchdog_line(1, 7), at("2026-11-30T10:12:00Z"), 1)});
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
  EXPECT_EQ(v.recommended_action, "DRAIN_NODE");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "gpu.xid_app_class_repeated");
  EXPECT_EQ(v.root_cause->event.id, "e1");  // the earliest report is the mechanism
  EXPECT_EQ(v.root_cause->summary,
            "Xid 13 (ROBUST_CHANNEL_GR_EXCEPTION / ROBUST_CHANNEL_GR_ERROR_SW_NOTIFY) on GPU 0000:3b:00 on n1 in 2 "
            "different processes (pids 100, 230): suspect the GPU");
  ASSERT_EQ(v.affected_gpus.size(), 1u);
  EXPECT_EQ(v.affected_gpus[0].pci, "0000:3b:00.0");
  EXPECT_EQ(v.symptoms.size(), 3u);  // the later Xids and the peer's watchdog timeout
  EXPECT_TRUE(v.unexplained.empty());
}

TEST(Correlate, Xid13FromTwoProcessesOnDifferentGpusIsTheApplication) {
  const Verdict v = test::attribute(job("FAILED", 1, kNodes),
                                    {kernel_line("n1", xid13("0000:3b:00", "100"), at("2026-11-30T10:01:00Z"), 1),
                                     kernel_line("n1", xid13("0000:5e:00", "230"), at("2026-11-30T10:01:01Z"), 2),
                                     // same bus id, other node: another GPU
                                     kernel_line("n2", xid13("0000:3b:00", "231"), at("2026-11-30T10:01:02Z"), 1)});
  EXPECT_EQ(v.domain, "APPLICATION");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "gpu.xid_job_fatal");
}

TEST(Correlate, UnknownPidsAndUntrustedCopiesDoNotCountAsProcesses) {
  const Verdict v =
      test::attribute(job("FAILED", 1, kNodes),
                      {kernel_line("n1", xid13("0000:3b:00", "100"), at("2026-11-30T10:01:00Z"), 1),
                       kernel_line("n1", xid13("0000:3b:00", "'<unknown>'"), at("2026-11-30T10:01:01Z"), 2),
                       kernel_line("n1", xid13("0000:3b:00", "<n/a>"), at("2026-11-30T10:01:02Z"), 3),
                       // the user's own printout of a fault "from another process" is no evidence
                       app_line("n1", "app.rank0", xid13("0000:3b:00", "999"), at("2026-11-30T10:01:03Z"), 4)});
  EXPECT_EQ(v.domain, "APPLICATION");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "gpu.xid_job_fatal");
}

TEST(Correlate, TimeoutIsScheduler) {
  const Verdict v = test::attribute(
      job("TIMEOUT", 0, kNodes, 15),
      {app_line("n1", "app",
                "slurmstepd: error: *** JOB 4242 ON n1 CANCELLED AT 2026-11-30T10:20:00 DUE TO TIME LIMIT ***",
                at("2026-11-30T10:20:00Z"), 5)});
  EXPECT_EQ(v.domain, "SCHEDULER");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "slurm.timeout");
  EXPECT_EQ(v.recommended_action, "RESUBMIT");
  ASSERT_EQ(v.symptoms.size(), 1u);
  EXPECT_EQ(v.symptoms[0].event.kind, "slurm.time_limit");
}

TEST(Correlate, OutOfMemoryStateIsTheJobsSizing) {
  const Verdict bare = test::attribute(job("OUT_OF_MEMORY", 0, kNodes, 125), {});
  EXPECT_EQ(bare.domain, "APPLICATION");
  ASSERT_TRUE(bare.root_cause.has_value());
  EXPECT_EQ(bare.root_cause->rule, "slurm.out_of_memory");
  EXPECT_EQ(bare.recommended_action, "FIX_APPLICATION");

  // With slurmstepd's report the node is known.
  const Verdict v =
      test::attribute(job("OUT_OF_MEMORY", 0, kNodes, 125),
                      {app_line("n3", "app",
                                "slurmstepd: error: Detected 1 oom_kill event in StepId=4242.0. Some of the step tasks "
                                "have been OOM Killed.",
                                at("2026-11-30T10:10:00Z"), 3),
                       app_line("n3", "app", "srun: error: n3: task 2: Out Of Memory", at("2026-11-30T10:10:01Z"), 4)});
  EXPECT_EQ(v.domain, "APPLICATION");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "app.cgroup_oom");
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{"n3"});
  EXPECT_EQ(v.symptoms.size(), 2u);  // the job state and the srun line
}

TEST(Correlate, KernelOomKillInTheJobsCgroupIsApplication) {
  const Verdict v = test::attribute(
      job("FAILED", 137, kNodes),
      {kernel_line("n2", "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
                   at("2026-11-30T10:10:00Z"), 1),
       kernel_line(
           "n2",
           "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,oom_memcg=/system.slice/"
           "slurmstepd.scope/job_4242,task_memcg=/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0,"
           "task=python3,pid=52811,uid=1000",
           at("2026-11-30T10:10:00.000100Z"), 2),
       kernel_line("n2",
                   "Memory cgroup out of memory: Killed process 52811 (python3) total-vm:93240kB, anon-rss:81200kB, "
                   "file-rss:64kB, shmem-rss:0kB",
                   at("2026-11-30T10:10:00.000200Z"), 3),
       app_line("n1", "app.rank0", watchdog_line(0, 77), at("2026-11-30T10:20:00Z"), 9)});
  EXPECT_EQ(v.domain, "APPLICATION");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "app.oom_job_memcg");
  EXPECT_EQ(v.root_cause->summary, "Job 4242 exceeded its memory limit on n2: the kernel killed python3 (pid 52811)");
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(v.symptoms.size(), 3u);
  EXPECT_TRUE(v.unexplained.empty());
}

TEST(Correlate, GlobalKernelOomIsHostOs) {
  const Verdict v = test::attribute(
      job("FAILED", 137, kNodes),
      {kernel_line("n1",
                   "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/"
                   "user.slice/user-1000.slice/session-1.scope,task=stress-ng,pid=1811,uid=1000",
                   at("2026-11-30T10:10:00Z"), 1),
       kernel_line("n1",
                   "Out of memory: Killed process 1811 (stress-ng) total-vm:43240kB, anon-rss:0kB, file-rss:64kB, "
                   "shmem-rss:0kB, UID:1000 pgtables:104kB oom_score_adj:1000",
                   at("2026-11-30T10:10:00Z"), 2)});
  EXPECT_EQ(v.domain, "HOST_OS");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "host.oom_global");
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{"n1"});
}

TEST(Correlate, UserPrintedXidIsNotAHardwareVerdict) {
  const Verdict v = test::attribute(
      job("FAILED", 1, kNodes), {LogLine{"n2", "app.rank1", at("2026-11-30T10:03:12Z"), 1, /*trusted=*/true, kXid79}});
  EXPECT_NE(v.domain, "GPU_HARDWARE");
  EXPECT_EQ(v.domain, "UNATTRIBUTED");
  ASSERT_EQ(v.unexplained.size(), 1u);
  EXPECT_EQ(v.unexplained[0].kind, "gpu.xid");
  EXPECT_FALSE(v.unexplained[0].trusted);
  EXPECT_EQ(v.recommended_action, "NONE");
}

TEST(Correlate, UserPrintedXidCorroboratesARealOne) {
  auto lines = gpu_failure_lines();
  lines.push_back(app_line("n2", "app.rank1", kXid79, at("2026-11-30T10:03:13Z"), 3));
  const Verdict v = test::attribute(job("FAILED", 1, kNodes), lines);
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
  const bool corroborated = std::any_of(v.symptoms.begin(), v.symptoms.end(), [](const Symptom& s) {
    return s.event.kind == "gpu.xid" && s.event.source == "app.rank1";
  });
  EXPECT_TRUE(corroborated);
}

TEST(Correlate, BenignAndDegradedXidsAreNeverRoots) {
  const std::string remap =
      "NVRM: Xid (PCI:0000:52:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x0000000018f31d80) "
      "marked for remapping, reset gpu to activate.";
  const Verdict v = test::attribute(
      job("FAILED", 1, kNodes),
      {kernel_line("n1", remap, at("2026-11-30T10:01:00Z"), 1),
       kernel_line("n1",
                   "NVRM: Xid (PCI:0000:52:00): 154, GPU recovery action changed from 0x0 (None) to 0x3 (Drain P2P)",
                   at("2026-11-30T10:01:01Z"), 2)});
  EXPECT_EQ(v.domain, "UNATTRIBUTED");
  EXPECT_EQ(v.unexplained.size(), 2u);
}

// Xid 154 is benign in the catalog, but a recovery action that takes the GPU out of
// service (reset, node reboot) is the driver saying so: that rule decides, not the catalog.
TEST(Correlate, RecoveryActionXid154NeedingAResetIsAGpuVerdict) {
  const Verdict v = test::attribute(
      job("FAILED", 1, kNodes),
      {kernel_line("n1",
                   "NVRM: Xid (PCI:0000:52:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row "
                   "(0x0000000018f31d80) marked for remapping, reset gpu to activate.",
                   at("2026-11-30T10:01:00Z"), 1),
       kernel_line(
           "n1",
           "NVRM: Xid (PCI:0000:52:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
           at("2026-11-30T10:01:01Z"), 2)});
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
  EXPECT_EQ(v.recommended_action, "RESET_GPU");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "gpu.recovery_gpu_reset");
  ASSERT_EQ(v.symptoms.size(), 1u);  // the pending row remap on the same GPU
}

TEST(Correlate, HbmSequenceIsOneGpuVerdictWithTheLaterXidsAsSymptoms) {
  const Verdict v = test::attribute(
      job("FAILED", 1, kNodes),
      {kernel_line(
           "n1",
           "NVRM: Xid (PCI:0000:52:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) "
           "has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1.",
           at("2026-11-30T10:01:00Z"), 1),
       kernel_line("n1",
                   "NVRM: Xid (PCI:0000:52:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row "
                   "(0x0000000018f31d80) marked for remapping, reset gpu to activate.",
                   at("2026-11-30T10:01:00.010Z"), 2),
       kernel_line(
           "n1",
           "NVRM: Xid (PCI:0000:52:00): 94, pid='<unknown>', name=<unknown>, Contained: SM (0x1). RST: No, D-RST: No",
           at("2026-11-30T10:01:00.025Z"), 3)});
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "gpu.xid_fatal");
  EXPECT_EQ(v.root_cause->event.fields["xid"], 48);
  EXPECT_EQ(v.root_cause->summary, "Xid 48 (ROBUST_CHANNEL_GPU_ECC_DBE) on GPU 0000:52:00 on n1");
  EXPECT_EQ(v.symptoms.size(), 2u);
  EXPECT_EQ(v.recommended_action, "DRAIN_NODE");
}

TEST(Correlate, PcieFatalAndXid79TogetherAreAmbiguous) {
  const Verdict v =
      test::attribute(job("FAILED", 1, kNodes),
                      {kernel_line("n2", "pcieport 0000:00:02.0: AER: Uncorrected (Fatal) error received: id=0010",
                                   at("2026-11-30T10:03:11.900Z"), 1),
                       kernel_line("n2", kXid79, at("2026-11-30T10:03:12Z"), 2),
                       app_line("n1", "app.rank0", watchdog_line(0, 5), at("2026-11-30T10:13:12Z"), 1)});
  EXPECT_EQ(v.domain, "AMBIGUOUS");
  EXPECT_FALSE(v.root_cause.has_value());
  ASSERT_EQ(v.candidates.size(), 2u);
  EXPECT_EQ(v.candidates[0].domain, "GPU_HARDWARE");
  EXPECT_EQ(v.candidates[0].events, std::vector<std::string>{"e2"});
  EXPECT_EQ(v.candidates[1].domain, "HOST_HARDWARE");
  EXPECT_EQ(v.candidates[1].events, std::vector<std::string>{"e1"});
  EXPECT_EQ(v.recommended_action, "DRAIN_NODE");
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{"n2"});
  ASSERT_EQ(v.symptoms.size(), 1u);
  EXPECT_EQ(v.symptoms[0].event.kind, "nccl.watchdog_timeout");
  EXPECT_EQ(
      v.comment.rfind("attrib: AMBIGUOUS candidates=GPU_HARDWARE/gpu.fallen_off_bus,HOST_HARDWARE/host.pcie_fatal", 0),
      0u)
      << v.comment;
}

TEST(Correlate, CudaOomOnOneRankIsApplicationOnThatNode) {
  const Verdict v = test::attribute(
      job("FAILED", 1, kNodes), {app_line("n2", "app.rank2",
                                          "[rank2]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                                          "20.00 MiB (GPU 2; 39.39 GiB total capacity; 38.10 GiB already allocated)",
                                          at("2026-11-30T10:05:00Z"), 1),
                                 app_line("n1", "app.rank0", watchdog_line(0, 99), at("2026-11-30T10:15:00Z"), 1),
                                 app_line("n3", "app.rank4", watchdog_line(4, 99), at("2026-11-30T10:15:00Z"), 1)});
  EXPECT_EQ(v.domain, "APPLICATION");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "app.cuda_oom");
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(v.symptoms.size(), 2u);
  EXPECT_EQ(v.recommended_action, "FIX_APPLICATION");
}

TEST(Correlate, SymptomsBeforeTheirCauseAreNotExplained) {
  // A watchdog timeout an hour before the Xid cannot be its consequence.
  const Verdict v = test::attribute(job("FAILED", 1, kNodes),
                                    {app_line("n1", "app.rank0", watchdog_line(0, 1), at("2026-11-30T09:00:00Z"), 1),
                                     kernel_line("n2", kXid79, at("2026-11-30T10:03:12Z"), 2)});
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
  EXPECT_TRUE(v.symptoms.empty());
  EXPECT_EQ(v.unexplained.size(), 1u);
}

TEST(Correlate, StormFoldsInTheVerdict) {
  std::vector<LogLine> lines;
  for (uint64_t i = 0; i < 100000; ++i) {
    lines.push_back(kernel_line(
        "n2", "NVRM: Xid (PCI:0000:01:00): 95, pid=7062, Uncontained: LTC TAG (0x2, 0x1). RST: Yes, D-RST: No",
        at("2026-11-30T10:03:12Z") + static_cast<TimeUs>(i), i));
  }
  const Verdict v = test::attribute(job("FAILED", 1, kNodes), lines);
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->event.count, 100000u);
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
}

TEST(Correlate, VerdictIsIdenticalUnderShuffling) {
  std::vector<LogLine> lines = gpu_failure_lines();
  lines.push_back(app_line("n2", "app.rank1", kXid79, std::nullopt, 3));
  lines.push_back(app_line("n1", "app", "srun: error: n1: tasks 0-1: Terminated", std::nullopt, 4));
  lines.push_back(app_line("n3", "app", "srun: error: n3: task 2: Exited with exit code 1", std::nullopt, 4));
  lines.push_back(
      kernel_line("n3", "INFO: task python3:5403 blocked for more than 120 seconds.", at("2026-11-30T10:05:00Z"), 5));
  lines.push_back(
      kernel_line("n1", "mlx5_core 0000:53:00.0 mlx5_3: Port: 1 Link ACTIVE", at("2026-11-30T10:00:01Z"), 6));
  for (int i = 0; i < 50; ++i) lines.push_back(lines[1]);  // a small storm
  const auto facts = job("TIMEOUT", 0, kNodes, 15);
  const std::string expected = to_json(test::attribute(facts, lines)).dump();

  std::mt19937 rng(12345);
  for (int round = 0; round < 20; ++round) {
    std::shuffle(lines.begin(), lines.end(), rng);
    EXPECT_EQ(to_json(test::attribute(facts, lines)).dump(), expected) << "round " << round;
  }
  // Correlating events in any order (and split across extractors) gives the same verdict.
  auto events = test::extract(lines);
  std::reverse(events.begin(), events.end());
  EXPECT_EQ(to_json(rules::correlate(*test::shipped_pack(), facts, events, test::full_coverage(kNodes))).dump(),
            expected);
  const size_t half = lines.size() / 2;
  auto first = test::extract({lines.begin(), lines.begin() + static_cast<long>(half)});
  auto second = test::extract({lines.begin() + static_cast<long>(half), lines.end()});
  first.insert(first.end(), second.begin(), second.end());
  EXPECT_EQ(to_json(rules::correlate(*test::shipped_pack(), facts, first, test::full_coverage(kNodes))).dump(),
            expected);
}

// A flood of distinct symptoms (every rank's watchdog for every collective) is listed up
// to the cap and counted beyond it; the kernel's own report, though last in time, is
// among those listed; the count survives the JSON round trip and reaches the comment.
TEST(Correlate, SymptomsOverTheCapAreCountedAndTrustedOnesAreListedFirst) {
  std::vector<LogLine> lines = gpu_failure_lines();
  lines.push_back(kernel_line(
      "n3", "NVRM: Xid (PCI:0000:5e:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
      at("2026-11-30T10:19:00Z"), 50));
  const size_t before_flood = test::attribute(job("FAILED", 1, kNodes), lines).symptoms.size();
  const int flood = static_cast<int>(rules::kMaxListedEvents) + 500;
  for (int i = 0; i < flood; ++i)
    lines.push_back(app_line("n1", "app.rank0", watchdog_line(0, 2000 + i), at("2026-11-30T10:13:12Z"),
                             static_cast<uint64_t>(1000 + i)));
  const Verdict v = test::attribute(job("FAILED", 1, kNodes), lines);
  ASSERT_EQ(v.domain, "GPU_HARDWARE");
  const uint64_t total = before_flood + static_cast<uint64_t>(flood);
  ASSERT_EQ(v.symptoms.size(), rules::kMaxListedEvents);
  EXPECT_EQ(v.symptoms_omitted, total - rules::kMaxListedEvents);
  EXPECT_TRUE(std::any_of(v.symptoms.begin(), v.symptoms.end(),
                          [](const Symptom& s) { return s.event.trusted && s.event.node == "n3"; }));
  EXPECT_TRUE(std::is_sorted(v.symptoms.begin(), v.symptoms.end(), [](const Symptom& a, const Symptom& b) {
    return std::stoi(a.event.id.substr(1)) < std::stoi(b.event.id.substr(1));
  }));
  EXPECT_NE(v.comment.find("symptoms=" + std::to_string(total) + " "), std::string::npos) << v.comment;

  const std::string text = to_json(v).dump();
  EXPECT_LT(text.size(), size_t{2} << 20);
  auto back = verdict_from_json(nlohmann::json::parse(text));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->symptoms_omitted, v.symptoms_omitted);
  EXPECT_EQ(to_json(*back).dump(), text);
}

TEST(Correlate, CoverageIsPassedThroughSorted) {
  auto coverage = test::full_coverage(kNodes);
  std::reverse(coverage.begin(), coverage.end());
  coverage[0].status = CoverageStatus::Unavailable;
  const Verdict v = rules::correlate(*test::shipped_pack(), job("FAILED", 1, kNodes), {}, coverage);
  ASSERT_EQ(v.coverage.size(), 6u);
  EXPECT_EQ(v.coverage[0].node, "n1");
  EXPECT_EQ(v.coverage[0].source, "app");
  EXPECT_NE(v.comment.find("coverage=2/3"), std::string::npos) << v.comment;
}

TEST(Correlate, IbPortDownAndLustreEvictionOnDifferentNodesAreAmbiguous) {
  const Verdict v = test::attribute(
      job("FAILED", 1, kNodes),
      {kernel_line("n1", "mlx5_core 0000:53:00.0 mlx5_3: Port: 1 Link DOWN", at("2026-11-30T10:05:00Z"), 1),
       kernel_line("n3",
                   "LustreError: 167-0: scratch-OST0004-osc-ffff8f3a2c3e9000: This client was evicted by "
                   "scratch-OST0004; in progress operations using this service will fail.",
                   at("2026-11-30T10:05:01Z"), 1)});
  EXPECT_EQ(v.domain, "AMBIGUOUS");
  ASSERT_EQ(v.candidates.size(), 2u);
  EXPECT_EQ(v.candidates[0].domain, "NETWORK");
  EXPECT_EQ(v.candidates[1].domain, "STORAGE");
}

// A node that rebooted under the job, by slurmctld's account (read on the controller,
// outside the job): low, it names the node and explains Slurm's own failed-node record;
// the node's kernel panic, when its log survived, says why and decides instead.
std::vector<LogLine> reboot_lines() {
  return {
      LogLine{"ctl", "slurm", at("2026-11-30T10:06:00Z"), 1, true,
              "[2026-11-30T10:06:00.100] validate_node_specs: Node n2 unexpectedly rebooted boot_time=1796033100 "
              "last response=1796032900"},
      LogLine{"ctl", "slurm", at("2026-11-30T10:06:00.2Z"), 2, true,
              "[2026-11-30T10:06:00.200] Killing JobId=1 on failed node n2"},
  };
}

TEST(Correlate, AnUnexpectedRebootNamesTheNodeAtLowConfidence) {
  const Verdict v = test::attribute(job("NODE_FAIL", 0, kNodes), reboot_lines());
  EXPECT_EQ(v.domain, "HOST_HARDWARE");
  ASSERT_TRUE(v.root_cause.has_value()) << v.comment;
  EXPECT_EQ(v.root_cause->rule, "host.node_rebooted");
  EXPECT_EQ(v.confidence, "low");
  EXPECT_EQ(v.recommended_action, "RESUBMIT");
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(kinds(v.unexplained), std::vector<std::string>{});
  EXPECT_NE(v.root_cause->summary.find("n2 rebooted while the job ran"), std::string::npos) << v.root_cause->summary;
}

// A job that hung until its time limit on a node slurmctld lost: the node is named (Slurm's
// own view of a node failure, SCHEDULER) at low confidence, above the bare TIMEOUT.
TEST(Correlate, ANodeThatStoppedRespondingNamesWhereTheJobHung) {
  const std::vector<LogLine> lines = {LogLine{"ctl", "slurm", at("2026-11-30T10:06:00Z"), 1, true,
                                              "[2026-11-30T10:06:00.100] error: Nodes n3 not responding"}};
  const Verdict v = test::attribute(job("TIMEOUT", 0, kNodes), lines);
  ASSERT_TRUE(v.root_cause.has_value()) << v.comment;
  EXPECT_EQ(v.root_cause->rule, "slurm.node_stopped_responding");
  EXPECT_EQ(v.domain, "SCHEDULER");
  EXPECT_EQ(v.confidence, "low");
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{"n3"});
}

// Other users' jobs failed on n2 lately with no cause found (the head's archive,
// JobFacts::repeated_failures): a job whose own evidence explains nothing names n2, low
// and untrusted, never acting; a cause in its own evidence still decides.
TEST(Correlate, RepeatedUnexplainedFailuresOnANodeNameItWhenNothingElseDoes) {
  JobFacts facts = job("FAILED", 1, kNodes);
  facts.repeated_failures = {{"n2", 3, 2, 86400}};
  const Verdict v = test::attribute(facts, {});
  ASSERT_TRUE(v.root_cause.has_value()) << v.comment;
  EXPECT_EQ(v.root_cause->rule, "host.unexplained_failures_repeat");
  EXPECT_EQ(v.domain, "HOST_HARDWARE");
  EXPECT_EQ(v.confidence, "low");
  EXPECT_EQ(v.recommended_action, "RESUBMIT");
  EXPECT_FALSE(v.root_cause->event.trusted);
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(v.root_cause->summary,
            "n2: 3 other jobs (2 other users) failed there in the last 24 h with no cause found; the node is what "
            "they share");

  const Verdict decided = test::attribute(facts, gpu_failure_lines());
  ASSERT_TRUE(decided.root_cause.has_value());
  EXPECT_EQ(decided.root_cause->rule, "gpu.fallen_off_bus");

  JobFacts succeeded = job("COMPLETED", 0, kNodes);
  succeeded.repeated_failures = facts.repeated_failures;
  EXPECT_EQ(test::attribute(succeeded, {}).domain, "NONE");
}

TEST(Correlate, TheNodesOwnPanicExplainsItsReboot) {
  std::vector<LogLine> lines = reboot_lines();
  lines.push_back(kernel_line("n2", "Kernel panic - not syncing: Fatal exception", at("2026-11-30T10:03:00Z"), 7));
  const Verdict v = test::attribute(job("NODE_FAIL", 0, kNodes), lines);
  ASSERT_TRUE(v.root_cause.has_value()) << v.comment;
  EXPECT_EQ(v.root_cause->rule, "host.kernel_panic");
  EXPECT_EQ(v.domain, "HOST_OS");
  EXPECT_TRUE(std::any_of(v.symptoms.begin(), v.symptoms.end(),
                          [](const auto& s) { return s.event.kind == "slurm.node_rebooted"; }));
}

}  // namespace
}  // namespace attrib
