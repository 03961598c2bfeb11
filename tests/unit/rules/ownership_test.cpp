// Evidence that belongs to the job (docs/rules.md): on a node shared by jobs 4999 and
// 5100, job 4999's OOM kill, its step's OOM report and its time limit, an Xid on the GPU
// only job 4999 held, and another user's memory cgroup OOM are context for job 5100 (its
// neighbours), never its root cause or symptoms; node-wide faults still count for it.
#include "rules/ownership.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rules/evidence/bundle_export.h"
#include "tests/support/rule_test_support.h"

namespace attrib {
namespace {

using test::at;

const std::string kNode = "n1";

JobFacts job_on_shared_node(const std::string& id, uint32_t uid) {
  JobFacts facts = test::job("FAILED", 1, {kNode});
  facts.job_id = id;
  facts.uid = uid;
  return facts;
}

LogLine slurm_line(const std::string& text, const std::string& iso, uint64_t seq) {
  return LogLine{kNode, "slurm", at(iso), seq, true, text};
}

LogLine spank_line(const std::string& text, uint64_t seq) {
  return LogLine{kNode, "spank", at("2026-11-30T10:19:00Z"), seq, true, text};
}

LogLine gpu_map_line(const std::string& text, uint64_t seq) {
  return LogLine{kNode, "gpus", std::nullopt, seq, true, text};
}

// Job 4999's trouble as n1's kernel and slurmd logged it (the formats of the pack's
// examples: mm/oom_kill.c, slurmstepd's cgroup OOM report and time-limit line).
std::vector<LogLine> neighbour_4999_lines() {
  return {
      test::kernel_line(kNode,
                        "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,"
                        "oom_memcg=/system.slice/slurmstepd.scope/job_4999,task_memcg=/system.slice/"
                        "slurmstepd.scope/job_4999/step_0/user/task_0,task=python,pid=52811,uid=1001",
                        at("2026-11-30T10:04:07Z"), 1),
      slurm_line("[4999.0] error: Detected 1 oom_kill event in StepId=4999.0. Some of the step tasks have been "
                 "OOM Killed.",
                 "2026-11-30T10:04:08Z", 1),
      slurm_line("[4999.batch] error: *** JOB 4999 ON n1 CANCELLED AT 2026-11-30T10:09:00 DUE TO TIME LIMIT ***",
                 "2026-11-30T10:09:00Z", 2),
  };
}

bool is_named(const Verdict& v, const std::string& kind) {
  if (v.root_cause && v.root_cause->event.kind == kind) return true;
  for (const auto& s : v.symptoms)
    if (s.event.kind == kind) return true;
  for (const auto& e : v.unexplained)
    if (e.kind == kind) return true;
  return false;
}

TEST(OwnershipTest, AnotherJobsOomAndTimeLimitAreNeighboursNotTheCause) {
  const Verdict v = test::attribute(job_on_shared_node("5100", 1000), neighbour_4999_lines());
  EXPECT_NE(v.domain, "HOST") << v.comment;
  EXPECT_NE(v.domain, "SCHEDULER") << v.comment;
  EXPECT_FALSE(v.root_cause.has_value()) << v.root_cause->summary;
  for (const char* kind : {"kernel.oom_kill", "slurm.oom_kill", "slurm.time_limit"})
    EXPECT_FALSE(is_named(v, kind)) << kind;
  ASSERT_EQ(v.neighbours.size(), 3u);
  for (const auto& n : v.neighbours) {
    EXPECT_EQ(n.job, "4999") << n.event.line;
    EXPECT_EQ(n.why, "names job 4999, not 5100");
    EXPECT_EQ(n.summary.rfind("n1 was shared with job 4999: ", 0), 0u) << n.summary;
  }
  EXPECT_NE(v.neighbours[0].summary.find("(2026-11-30T10:04:07"), std::string::npos) << v.neighbours[0].summary;
}

TEST(OwnershipTest, TheSameLinesAreTheirOwnJobsCause) {
  const Verdict v = test::attribute(job_on_shared_node("4999", 1001), neighbour_4999_lines());
  ASSERT_TRUE(v.root_cause.has_value()) << v.comment;
  EXPECT_TRUE(v.neighbours.empty());
  EXPECT_TRUE(is_named(v, "kernel.oom_kill"));
  EXPECT_TRUE(is_named(v, "slurm.time_limit"));
}

TEST(OwnershipTest, AnotherUsersMemoryCgroupOomIsANeighbours) {
  const std::vector<LogLine> lines = {test::kernel_line(
      kNode,
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/user.slice/"
      "user-1001.slice,task_memcg=/user.slice/user-1001.slice/session-4.scope,task=stress-ng,pid=1811,uid=1001",
      at("2026-11-30T10:04:07Z"), 1)};
  const Verdict theirs = test::attribute(job_on_shared_node("5100", 1000), lines);
  ASSERT_EQ(theirs.neighbours.size(), 1u);
  EXPECT_EQ(theirs.neighbours[0].job, "");
  EXPECT_EQ(theirs.neighbours[0].why, "a process of uid 1001, not the job's user (uid 1000)");
  EXPECT_NE(theirs.neighbours[0].summary.find("another user (uid 1001)"), std::string::npos);
  const Verdict own = test::attribute(job_on_shared_node("5100", 1001), lines);
  EXPECT_TRUE(own.neighbours.empty());
}

TEST(OwnershipTest, TheGlobalOomKillerIsEveryJobsFaultWhoeverItKilled) {
  const std::vector<LogLine> lines = {test::kernel_line(
      kNode,
      "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/"
      "system.slice/slurmstepd.scope/job_4999/step_0/user/task_0,task=python,pid=1811,uid=1001",
      at("2026-11-30T10:04:07Z"), 1)};
  const Verdict v = test::attribute(job_on_shared_node("5100", 1000), lines);
  EXPECT_TRUE(v.neighbours.empty());
  ASSERT_TRUE(v.root_cause.has_value()) << v.comment;
  EXPECT_EQ(v.root_cause->event.kind, "kernel.oom_kill");
  EXPECT_EQ(v.root_cause->event.rule, "kernel.oom_kill_global");
}

// The victim's comm is the user's: "a,pid=1,uid=0" (13 bytes) inside task= names neither
// another process nor another user; the kernel's own pid and uid end the line.
TEST(OwnershipTest, ACommCannotDisownTheJobsOwnOomKill) {
  const std::vector<LogLine> lines = {test::kernel_line(
      kNode,
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,oom_memcg=/system.slice/"
      "slurmstepd.scope/job_5100,task_memcg=/system.slice/slurmstepd.scope/job_5100/step_0/user/task_0,"
      "task=a,pid=1,uid=0,pid=52811,uid=1000",
      at("2026-11-30T10:04:07Z"), 1)};
  const auto events = test::extract(lines);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].fields.value("task", ""), "a,pid=1,uid=0");
  EXPECT_EQ(events[0].fields.value("pid", 0), 52811);
  EXPECT_EQ(events[0].fields.value("uid", 0), 1000);
  const Verdict v = test::attribute(job_on_shared_node("5100", 1000), lines);
  EXPECT_TRUE(v.neighbours.empty()) << v.comment;
  ASSERT_TRUE(v.root_cause.has_value()) << v.comment;
  EXPECT_EQ(v.root_cause->event.rule, "kernel.oom_kill_constraint");
}

// Job 5100 held GPU 1 on n1 (its SPANK task record), which the driver maps to 0000:0a:00.0.
std::vector<LogLine> gpu_lines(const std::string& xid_pci) {
  return {
      spank_line("attrib-spank: task exited abnormally: job=5100 step=0 rank=0 local_rank=0 node=n1 pid=4711 "
                 "exit_code=1 signal=0 gpus=1",
                 1),
      gpu_map_line("attrib-gpu-map: minor=0 pci=0000:07:00.0", 1),
      gpu_map_line("attrib-gpu-map: minor=1 pci=0000:0a:00.0", 2),
      test::kernel_line(
          kNode, "NVRM: Xid (PCI:" + xid_pci + "): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
          at("2026-11-30T10:10:00Z"), 1),
  };
}

// The job's GPU list comes from its step's environment, which a job without GPU GRES
// could set itself: a GPU it did not list is another job's only when that job's record
// holds it; else an Xid on it stays this job's (a user cannot disown a fault that way).
TEST(OwnershipTest, AnXidOnAGpuNoOtherJobHeldStaysTheJobs) {
  const Verdict v = test::attribute(job_on_shared_node("5100", 1000), gpu_lines("0000:07:00"));
  EXPECT_EQ(v.domain, "GPU_HARDWARE") << v.comment;
  EXPECT_TRUE(v.neighbours.empty());
  const auto& held = v.allocation.nodes.at(kNode);
  EXPECT_EQ(held.gpu_indices, std::vector<int>{1});
  EXPECT_EQ(held.gpus, std::vector<std::string>{"0000:0a:00.0"});
  EXPECT_EQ(held.pids, std::vector<int64_t>{4711});
  EXPECT_FALSE(is_named(v, "gpu.minor")) << "the map is a fact of the allocation, not evidence";
}

TEST(OwnershipTest, AnXidOnTheJobsOwnGpuIsItsCause) {
  const Verdict v = test::attribute(job_on_shared_node("5100", 1000), gpu_lines("0000:0a:00"));
  EXPECT_EQ(v.domain, "GPU_HARDWARE") << v.comment;
  EXPECT_TRUE(v.neighbours.empty());
}

TEST(OwnershipTest, WithoutTheDriversMapAGpuCannotBeToldAndStaysTheJobs) {
  std::vector<LogLine> lines = gpu_lines("0000:07:00");
  lines.erase(lines.begin() + 1, lines.begin() + 3);
  const Verdict v = test::attribute(job_on_shared_node("5100", 1000), lines);
  EXPECT_EQ(v.domain, "GPU_HARDWARE") << v.comment;
  EXPECT_TRUE(v.neighbours.empty());
}

// The node's other SPANK records say whose pid and GPU a line names: the OOM killer's
// victim line names only a pid, the Xid only a bus id.
TEST(OwnershipTest, AnotherJobsTaskRecordsNameWhosePidAndGpuALineIs) {
  std::vector<LogLine> lines = gpu_lines("0000:07:00");
  lines.push_back(spank_line("attrib-spank: task of another job: job=4999 step=0 rank=0 node=n1 pid=4100 gpus=0", 2));
  lines.push_back(test::kernel_line(kNode,
                                    "Memory cgroup out of memory: Killed process 4100 (python3) total-vm:93240kB, "
                                    "anon-rss:81200kB, file-rss:64kB, shmem-rss:0kB, UID:1001 pgtables:104kB",
                                    at("2026-11-30T10:04:07Z"), 2));
  const Verdict v = test::attribute(job_on_shared_node("5100", 1000), lines);
  ASSERT_EQ(v.neighbours.size(), 2u) << v.comment;
  EXPECT_EQ(v.neighbours[0].event.kind, "kernel.oom_killed_process");
  EXPECT_EQ(v.neighbours[0].job, "4999");
  EXPECT_EQ(v.neighbours[0].why, "process 4100 was a task of job 4999");
  EXPECT_EQ(v.neighbours[1].event.kind, "gpu.xid");
  EXPECT_EQ(v.neighbours[1].job, "4999");
  EXPECT_EQ(v.neighbours[1].why, "GPU 0000:07:00.0 on n1 was held by job 4999, not this job");
  EXPECT_EQ(v.neighbours[1].summary.rfind("n1 was shared with job 4999: ", 0), 0u) << v.neighbours[1].summary;
  const auto& held = v.allocation.nodes.at(kNode);
  EXPECT_EQ(held.neighbour_pids.at(4100), "4999");
  EXPECT_EQ(held.neighbour_gpus.at("0"), "4999");
  EXPECT_EQ(held.neighbour_gpus.at("0000:07:00.0"), "4999");
  EXPECT_FALSE(is_named(v, "slurm.neighbour_task"));
  // The job's own record under its own id is never a neighbour's.
  const Verdict own = test::attribute(job_on_shared_node("4999", 1001), lines);
  EXPECT_TRUE(own.allocation.nodes.at(kNode).neighbour_pids.empty());
}

TEST(OwnershipTest, AnArrayTasksOwnIdComesFromAccounting) {
  JobFacts task = job_on_shared_node("4242_7", 1000);
  const std::vector<LogLine> lines = {slurm_line(
      "[4999.0] error: Detected 1 oom_kill event in StepId=4999.0. Some of the step tasks have been OOM Killed.",
      "2026-11-30T10:04:08Z", 1)};
  // "4242_7" alone does not tell which raw id its lines carry: nothing is taken away.
  EXPECT_TRUE(test::attribute(task, lines).neighbours.empty());
  task.allocation.slurm_ids = {"4250"};
  EXPECT_EQ(test::attribute(task, lines).neighbours.size(), 1u);
  task.allocation.slurm_ids = {"4999"};
  EXPECT_TRUE(test::attribute(task, lines).neighbours.empty());
}

// A storm of a neighbour's distinct lines cannot make the verdict huge: the earliest
// 1,000 are listed, the rest counted.
TEST(OwnershipTest, ANeighboursStormIsCappedAndCounted) {
  std::vector<LogLine> lines;
  for (uint64_t i = 0; i < rules::kMaxListedEvents + 500; ++i)
    lines.push_back(slurm_line("[4999.0] error: Detected " + std::to_string(i + 1) +
                                   " oom_kill event in StepId=4999.0. Some of the step tasks have been OOM Killed.",
                               "2026-11-30T10:04:08Z", i));
  const Verdict v = test::attribute(job_on_shared_node("5100", 1000), lines);
  EXPECT_EQ(v.neighbours.size(), rules::kMaxListedEvents);
  EXPECT_EQ(v.neighbours_omitted, 500u);
  EXPECT_EQ(to_json(v)["neighbours_omitted"], 500);
}

TEST(OwnershipTest, TheJobsOwnOutputIsAlwaysItsOwn) {
  const std::vector<LogLine> lines = {
      test::app_line(kNode, "app",
                     "slurmstepd: error: Detected 1 oom_kill event in StepId=4999.0. Some of the step tasks have been "
                     "OOM Killed.",
                     at("2026-11-30T10:04:08Z"), 1)};
  EXPECT_TRUE(test::attribute(job_on_shared_node("5100", 1000), lines).neighbours.empty());
}

// The controller's log (read on "ctl", outside the job) reports every node's trouble: a
// line naming another node is context, one naming the job's node its cause. A line read
// on the job's node names whatever host it failed to reach and stays the job's.
LogLine controller_line(const std::string& text, uint64_t seq) {
  return LogLine{"ctl", "slurm", at("2026-11-30T10:05:00Z"), seq, true, text};
}

TEST(OwnershipTest, AnotherNodesTroubleInTheControllersLogIsContext) {
  const Verdict v = test::attribute(job_on_shared_node("5100", 1000),
                                    {controller_line("error: Nodes n2 not responding, setting DOWN", 1)});
  EXPECT_FALSE(v.root_cause.has_value()) << v.root_cause->summary;
  ASSERT_EQ(v.neighbours.size(), 1u);
  EXPECT_EQ(v.neighbours[0].why, "names node n2, not one of the job's nodes");
  EXPECT_EQ(v.neighbours[0].summary.rfind("node n2, not the job's: n2 stopped answering slurmctld", 0), 0u)
      << v.neighbours[0].summary;
}

TEST(OwnershipTest, TheJobsOwnNodeInTheControllersLogIsItsCause) {
  const Verdict v = test::attribute(job_on_shared_node("5100", 1000),
                                    {controller_line("error: Nodes n1 not responding, setting DOWN", 1)});
  ASSERT_TRUE(v.root_cause.has_value()) << v.comment;
  EXPECT_EQ(v.root_cause->rule, "slurm.node_stopped_responding");
  EXPECT_EQ(v.affected_nodes, std::vector<std::string>{kNode});
  EXPECT_TRUE(v.neighbours.empty());
}

TEST(OwnershipTest, AHostNamedOnTheJobsOwnNodeStaysTheJobs) {
  const Verdict v = test::attribute(job_on_shared_node("5100", 1000),
                                    {slurm_line("error: Unable to resolve \"ctl\": Unknown host", "2026-11-30T10:04:08Z", 1)});
  EXPECT_TRUE(v.neighbours.empty());
  ASSERT_TRUE(v.root_cause.has_value()) << v.comment;
  EXPECT_EQ(v.root_cause->event.fields.at("host"), "ctl");
}

TEST(OwnershipTest, JobIdsAreReadOnlyFromJobShapedValues) {
  using rules::detail::job_id_in;
  EXPECT_EQ(job_id_in("4999"), "4999");
  EXPECT_EQ(job_id_in("4999.0"), "4999");
  EXPECT_EQ(job_id_in("4999.batch"), "4999");
  EXPECT_EQ(job_id_in("4242_7.0"), "4242_7");
  EXPECT_EQ(job_id_in("4242+1.0"), "4242+1");
  EXPECT_EQ(job_id_in("2026-11-30T10:04:08.123"), std::nullopt);
  EXPECT_EQ(job_id_in("4999."), std::nullopt);
  EXPECT_EQ(job_id_in(""), std::nullopt);
  EXPECT_EQ(job_id_in("job_4999"), std::nullopt);
}

// The verdict carries what the job held and its neighbours: an export of it is judged
// the same again (bundle v1's job.json "allocation").
TEST(OwnershipTest, AVerdictsExportJudgesTheSame) {
  std::vector<LogLine> lines = gpu_lines("0000:07:00");
  lines.push_back(spank_line("attrib-spank: task of another job: job=4999 step=0 rank=0 node=n1 pid=4100 gpus=0", 2));
  for (const auto& l : neighbour_4999_lines()) lines.push_back(l);
  const Verdict v = test::attribute(job_on_shared_node("5100", 1000), lines);
  ASSERT_EQ(v.neighbours.size(), 4u);

  auto parsed = verdict_from_json(to_json(v));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(to_json(*parsed), to_json(v));

  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "ownership-export";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(rules::export_verdict_bundle(dir, v).ok());
  auto bundle = rules::open_bundle(dir);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  EXPECT_EQ(bundle->job.uid, std::optional<uint32_t>(1000));
  EXPECT_EQ(bundle->job.allocation, v.allocation);
  auto again = rules::replay_bundle(*bundle, test::shipped_pack());
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->neighbours.size(), v.neighbours.size());
  EXPECT_EQ(again->domain, v.domain);
  EXPECT_EQ(again->allocation, v.allocation);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attrib
