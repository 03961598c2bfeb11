#include "epilog/hook_env.h"

#include <gtest/gtest.h>

using attrib::epilog::job_ended_from_env;

TEST(HookEnv, EpilogSlurmctldAsSlurm22Provides) {
  // What EpilogSlurmctld really receives (testbed-facts.md): raw wait status and "3:0".
  auto m = job_ended_from_env({{"SLURM_JOB_ID", "17"},
                               {"SLURM_JOB_NODELIST", "n[1-3]"},
                               {"SLURM_JOB_EXIT_CODE", "768"},
                               {"SLURM_JOB_EXIT_CODE2", "3:0"},
                               {"SLURM_JOB_USER", "alice"},
                               {"SLURM_JOB_UID", "1000"},
                               {"SLURM_CLUSTER_NAME", "lab"},
                               {"SLURM_JOB_STDOUT", "/home/alice/slurm-17.out"},
                               {"SPANK__SLURM_SPANK_OPTION_attrib_attrib", "off"}},
                              123);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hook(), attrib::v1::HOOK_KIND_EPILOG_SLURMCTLD);
  EXPECT_EQ(m->job_id(), "17");
  EXPECT_EQ(m->node_list(), "n[1-3]");
  EXPECT_EQ(m->exit_code(), 3);
  EXPECT_EQ(m->signal(), 0);
  EXPECT_EQ(m->state(), "");  // EpilogSlurmctld does not know the state
  EXPECT_EQ(m->cluster(), "lab");
  EXPECT_EQ(m->user(), "alice");
  EXPECT_EQ(m->uid(), 1000u);
  EXPECT_EQ(m->hook_time_us(), 123);
  EXPECT_EQ(m->spank_options().at("attrib_attrib"), "off");
  EXPECT_EQ(m->stdout_path(), "/home/alice/slurm-17.out");
  EXPECT_EQ(m->stderr_path(), "");
  EXPECT_EQ(m->start_time_us(), 0) << "22.05's EpilogSlurmctld has no SLURM_JOB_START_TIME";
}

// Slurm 23.02 and later give both epilogs the attempt's start (job_common_env_vars for
// EpilogSlurmctld, the kill request's credential for a slurmd Epilog): the start slurmctld
// sends slurmdbd, what tells a requeued job's attempts apart. Its restart count does not
// (see pipeline::rows_show_reported_attempt), so it is not read.
TEST(HookEnv, EpilogsFromSlurm2302CarryTheAttemptsStart) {
  auto ctld = job_ended_from_env(
      {{"SLURM_JOB_ID", "21"}, {"SLURM_JOB_START_TIME", "1700000000"}, {"SLURM_JOB_RESTART_COUNT", "1"}}, 5);
  ASSERT_TRUE(ctld);
  EXPECT_EQ(ctld->hook(), attrib::v1::HOOK_KIND_EPILOG_SLURMCTLD);
  EXPECT_EQ(ctld->start_time_us(), 1700000000LL * 1000000);
  auto slurmd = job_ended_from_env(
      {{"SLURM_JOB_ID", "21"}, {"SLURMD_NODENAME", "n3"}, {"SLURM_JOB_START_TIME", "1700000000"}}, 5);
  ASSERT_TRUE(slurmd);
  EXPECT_EQ(slurmd->hook(), attrib::v1::HOOK_KIND_EPILOG_SLURMD);
  EXPECT_EQ(slurmd->start_time_us(), 1700000000LL * 1000000);
  // slurmctld prints 0 for a job that never started; anything but a time is unknown too.
  for (const char* start : {"0", "soon", ""}) {
    auto unknown = job_ended_from_env({{"SLURM_JOB_ID", "22"}, {"SLURM_JOB_START_TIME", start}}, 5);
    ASSERT_TRUE(unknown);
    EXPECT_EQ(unknown->start_time_us(), 0) << start;
  }
}

TEST(HookEnv, RawWaitStatusDecodesSignal) {
  auto m = job_ended_from_env({{"SLURM_JOB_ID", "18"}, {"SLURM_JOB_EXIT_CODE", "9"}}, 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->exit_code(), 0);
  EXPECT_EQ(m->signal(), 9);
}

TEST(HookEnv, ArrayTaskUsesTheIdUsersSee) {
  auto m =
      job_ended_from_env({{"SLURM_JOB_ID", "4250"}, {"SLURM_ARRAY_JOB_ID", "4242"}, {"SLURM_ARRAY_TASK_ID", "7"}}, 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->job_id(), "4242_7");
  EXPECT_EQ(m->slurm_job_id(), "4250") << "what %j means in its output path";
}

TEST(HookEnv, JobcompScriptArrayTaskUsesTheIdUsersSee) {
  auto task =
      job_ended_from_env({{"JOBID", "4250"}, {"JOBSTATE", "FAILED"}, {"ARRAYJOBID", "4242"}, {"ARRAYTASKID", "7"}}, 0);
  ASSERT_TRUE(task);
  EXPECT_EQ(task->job_id(), "4242_7");
  EXPECT_EQ(task->slurm_job_id(), "4250");
  // jobcomp/script's values for a job that is not an array task.
  auto plain = job_ended_from_env(
      {{"JOBID", "4251"}, {"JOBSTATE", "FAILED"}, {"ARRAYJOBID", "0"}, {"ARRAYTASKID", "4294967294"}}, 0);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->job_id(), "4251");
}

TEST(HookEnv, HetJobComponentsReportUnderTheHetJobsIdWithTheirOffset) {
  // As Slurm 22.05 ran both hooks for component 1 (raw id 2) of het job 1 (e2e het_job).
  auto epilog = job_ended_from_env({{"SLURM_JOB_ID", "2"},
                                    {"SLURM_JOB_NODELIST", "n2"},
                                    {"SLURM_HET_JOB_ID", "1"},
                                    {"SLURM_HET_JOB_OFFSET", "1"},
                                    {"SLURM_PACK_JOB_ID", "1"}},
                                   0);
  ASSERT_TRUE(epilog);
  EXPECT_EQ(epilog->job_id(), "1");
  EXPECT_EQ(epilog->slurm_job_id(), "2");
  ASSERT_TRUE(epilog->has_het_job_offset());
  EXPECT_EQ(epilog->het_job_offset(), 1U);
  EXPECT_EQ(epilog->node_list(), "n2");
  // Component 0's EpilogSlurmctld names every component's nodes.
  auto first = job_ended_from_env({{"SLURM_JOB_ID", "1"},
                                   {"SLURM_JOB_NODELIST", "n1"},
                                   {"SLURM_HET_JOB_ID", "1"},
                                   {"SLURM_HET_JOB_OFFSET", "0"},
                                   {"SLURM_HET_JOB_NODELIST", "n[1-2]"}},
                                  0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->het_job_offset(), 0U);
  EXPECT_EQ(first->node_list(), "n[1-2]");
  auto jobcomp = job_ended_from_env(
      {{"JOBID", "2"}, {"JOBSTATE", "FAILED"}, {"NODES", "n2"}, {"HETJOBID", "1"}, {"HETJOBOFFSET", "1"}}, 0);
  ASSERT_TRUE(jobcomp);
  EXPECT_EQ(jobcomp->job_id(), "1");
  EXPECT_EQ(jobcomp->het_job_offset(), 1U);
  // Not a het job: no offset, the job's own id (a bogus offset is ignored, not trusted).
  for (const char* offset : {"x", "-1"}) {
    auto plain = job_ended_from_env(
        {{"SLURM_JOB_ID", "7"}, {"SLURM_HET_JOB_ID", "5"}, {"SLURM_HET_JOB_OFFSET", offset}}, 0);
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->job_id(), "7");
    EXPECT_FALSE(plain->has_het_job_offset());
  }
}

TEST(HookEnv, JobcompScriptHasStateAndTimes) {
  auto m = job_ended_from_env({{"JOBID", "19"},
                               {"JOBSTATE", "TIMEOUT"},
                               {"NODES", "n2"},
                               {"EXITCODE", "0:15"},
                               {"START", "1700000000"},
                               {"END", "1700000100"}},
                              0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hook(), attrib::v1::HOOK_KIND_JOBCOMP_SCRIPT);
  EXPECT_EQ(m->state(), "TIMEOUT");
  EXPECT_EQ(m->node_list(), "n2");
  EXPECT_EQ(m->signal(), 15);
  EXPECT_EQ(m->start_time_us(), 1700000000LL * 1000000);
  EXPECT_EQ(m->end_time_us(), 1700000100LL * 1000000);
}

TEST(HookEnv, SlurmdEpilogUsesItsOwnNode) {
  auto m = job_ended_from_env({{"SLURM_JOB_ID", "20"}, {"SLURMD_NODENAME", "n3"}}, 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hook(), attrib::v1::HOOK_KIND_EPILOG_SLURMD);
  EXPECT_EQ(m->node_list(), "n3");
}

TEST(HookEnv, NotAHookIsAnError) {
  auto m = job_ended_from_env({{"HOME", "/root"}}, 0);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, "EPILOG_E_ENV");
}
