// Which database row of a job id is the attempt a hook reported (slurm::attempt_row), and
// when an attempt's row is final, for each combination of rows and states a requeue,
// a cancel while pending and a reused id leave.
#include <gtest/gtest.h>

#include "slurm/slurmdbd_client.h"

namespace attrib::slurm {
namespace {

constexpr TimeUs kS = 1000000;

AccountingRecord row(std::string state, std::optional<TimeUs> submit, std::optional<TimeUs> start,
                     std::optional<TimeUs> end) {
  AccountingRecord r;
  r.state = std::move(state);
  r.submit = submit;
  r.start = start;
  r.end = end;
  r.node_expr = "n1";
  r.nodes = {"n1"};
  r.alloc_nodes = 1;
  return r;
}

TEST(AttemptRow, TheHookOfARequeuedAttemptReadsItsOwnRowNotThePendingNext) {
  // scontrol requeue at 106 (attempt 1 ends, attempt 2's row is submitted), hook at 107.
  std::vector<AccountingRecord> rows = {row("REQUEUED", 100 * kS, 101 * kS, 106 * kS),
                                        row("PENDING", 106 * kS, std::nullopt, std::nullopt)};
  EXPECT_EQ(attempt_row(rows, 107 * kS), 0u);
  // Without a hook time: the newest row, as before.
  EXPECT_EQ(attempt_row(rows, std::nullopt), 1u);
  // Attempt 2 ran and failed; its hook at 300 reads it; attempt 1's hook still reads 1.
  rows[1] = row("FAILED", 106 * kS, 230 * kS, 299 * kS);
  EXPECT_EQ(attempt_row(rows, 300 * kS), 1u);
  EXPECT_EQ(attempt_row(rows, 107 * kS), 0u);
  // Row order from slurmdbd does not matter.
  std::swap(rows[0], rows[1]);
  EXPECT_EQ(attempt_row(rows, 300 * kS), 0u);
  EXPECT_EQ(attempt_row(rows, 107 * kS), 1u);
}

TEST(AttemptRow, NodeFailRequeueAndThreeAttempts) {
  std::vector<AccountingRecord> rows = {row("NODE_FAIL", 100 * kS, 101 * kS, 150 * kS),
                                        row("PREEMPTED", 150 * kS, 280 * kS, 400 * kS),
                                        row("COMPLETED", 400 * kS, 530 * kS, 600 * kS)};
  EXPECT_EQ(attempt_row(rows, 151 * kS), 0u);
  EXPECT_EQ(attempt_row(rows, 401 * kS), 1u);
  EXPECT_EQ(attempt_row(rows, 601 * kS), 2u);
}

TEST(AttemptRow, ACancelWhilePendingHasNoStartAndIsTheNewestRow) {
  std::vector<AccountingRecord> rows = {row("CANCELLED", 100 * kS, std::nullopt, 105 * kS)};
  EXPECT_EQ(attempt_row(rows, 106 * kS), 0u);
  // A requeued job cancelled while its next attempt pends: the hook reads... the attempt
  // that ran, the only one that started (the cancel's own hook sees no new start).
  rows = {row("REQUEUED", 100 * kS, 101 * kS, 106 * kS), row("CANCELLED", 106 * kS, std::nullopt, 120 * kS)};
  EXPECT_EQ(attempt_row(rows, 121 * kS), 0u);
}

TEST(AttemptRow, AReusedIdReadsTheNewJobNotTheOldOne) {
  // The same id months apart (MaxJobId wrapped, or slurmctld state lost).
  std::vector<AccountingRecord> rows = {row("COMPLETED", 1000 * kS, 1001 * kS, 1100 * kS),
                                        row("FAILED", 9000 * kS, 9001 * kS, 9100 * kS)};
  EXPECT_EQ(attempt_row(rows, 9101 * kS), 1u);
  EXPECT_EQ(attempt_row(rows, 1101 * kS), 0u);
}

TEST(AttemptRow, SubmitTiesKeepTheLaterRow) {
  std::vector<AccountingRecord> rows = {row("REQUEUED", 100 * kS, 100 * kS, 100 * kS),
                                        row("FAILED", 100 * kS, 100 * kS, 100 * kS)};
  EXPECT_EQ(attempt_row(rows, 101 * kS), 1u);
}

// Whether the rows show which attempt ran at the hook's time (tests/e2e/requeue_attempts.sh):
// attempt 1's EpilogSlurmctld can run before slurmdbd has recorded attempt 1 as started,
// and then reads attempt 0's row like attempt 0's own report did.
TEST(PickAttempt, ALaterRowThatStartedShowsTheHooksAttemptAndAPendingOneDoesNot) {
  std::vector<AccountingRecord> rows = {row("REQUEUED", 100 * kS, 101 * kS, 106 * kS),
                                        row("PENDING", 106 * kS, std::nullopt, std::nullopt)};
  AccountingRecord read = pick_attempt(rows, "7", 300 * kS);  // attempt 1's hook, its row not started yet
  EXPECT_EQ(read.state, "REQUEUED");
  EXPECT_FALSE(read.later_row_after_hook) << "attempt 1 may have run: the rows do not say";
  rows[1] = row("FAILED", 106 * kS, 230 * kS, 299 * kS);  // slurmdbd caught up
  read = pick_attempt(rows, "7", 107 * kS);               // attempt 0's report (a spool sent again)
  EXPECT_EQ(read.state, "REQUEUED");
  EXPECT_TRUE(read.later_row_after_hook) << "attempt 1 began after the hook ran";
  read = pick_attempt(rows, "7", 300 * kS);
  EXPECT_EQ(read.state, "FAILED");
  EXPECT_FALSE(read.later_row_after_hook);  // the newest row
  // A row of the same submit (as a het job's components have) is not a later one.
  rows = {row("FAILED", 100 * kS, 101 * kS, 106 * kS), row("FAILED", 100 * kS, 101 * kS, 106 * kS)};
  EXPECT_FALSE(pick_attempt(rows, "7", 107 * kS).later_row_after_hook);
}

// slurmctld submits a requeued job's next attempt only once the attempt's EpilogSlurmctld
// and slurmd Epilogs are done (cleanup_completing, then batch_requeue_fini): a pending row
// submitted after the hook ran shows the hook was the attempt before it, beyond the second
// a node's clock may be off by. And a next attempt cancelled while it pended ran no hook.
TEST(PickAttempt, APendingRowSubmittedAfterTheHookAndOneThatNeverRanShowItToo) {
  std::vector<AccountingRecord> rows = {row("REQUEUED", 100 * kS, 101 * kS, 106 * kS),
                                        row("PENDING", 110 * kS, std::nullopt, std::nullopt)};
  EXPECT_TRUE(pick_attempt(rows, "7", 107 * kS).later_row_after_hook) << "submitted 3 s after the hook";
  EXPECT_FALSE(pick_attempt(rows, "7", 109 * kS + 500000).later_row_after_hook) << "within the second";
  EXPECT_FALSE(pick_attempt(rows, "7", 300 * kS).later_row_after_hook) << "submitted before the hook";
  EXPECT_FALSE(pick_attempt(rows, "7", std::nullopt).later_row_after_hook) << "no time: the newest row";
  rows[1] = row("CANCELLED", 110 * kS, std::nullopt, 400 * kS);  // scancel while it pended
  AccountingRecord read = pick_attempt(rows, "7", 500 * kS);
  EXPECT_EQ(read.state, "REQUEUED");
  EXPECT_TRUE(read.later_row_after_hook) << "attempt 1 never ran: a hook at 500 s is attempt 0's";
}

// A row the job was not requeued after: no later attempt of the job follows it. The states
// Slurm requeues from (number_attempts continues a job after them), and a row that has not
// ended, may be followed by one.
TEST(EndedWithoutRequeue, OnlyTerminalStatesSlurmDoesNotRequeueFrom) {
  for (const char* state : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE"})
    EXPECT_TRUE(ended_without_requeue(state)) << state;
  for (const char* state : {"REQUEUED", "REQUEUE_HOLD", "SPECIAL_EXIT", "REQUEUE_FED", "NODE_FAIL", "PREEMPTED",
                            "BOOT_FAIL", "RUNNING", "PENDING", "SUSPENDED", ""})
    EXPECT_FALSE(ended_without_requeue(state)) << state;
}

// The sweep's and the backfill's listing: an ended row whose allocation count slurmdbd has
// not filled in yet is listed (a one-shot backfill that skipped it never counted the
// attempt), and a window that begins inside the second an attempt ended in keeps it.
TEST(ListedInWindow, AnEndedRowIsListedFinalOrNotAndSinceCountsFromItsSecond) {
  AccountingRecord ended = row("FAILED", 90 * kS, 95 * kS, 100 * kS);
  EXPECT_TRUE(listed_in_window(ended, 99 * kS, 101 * kS));
  AccountingRecord unfilled = ended;
  unfilled.alloc_nodes = 0;  // slurmdbd shows the end, not yet the allocation
  ASSERT_FALSE(unfilled.is_final());
  EXPECT_TRUE(listed_in_window(unfilled, 99 * kS, 101 * kS));
  // Ended at 100.6 s, stored as 100 s: a window from 100.4 s keeps it.
  EXPECT_TRUE(listed_in_window(ended, 100 * kS + 400000, 101 * kS));
  EXPECT_FALSE(listed_in_window(ended, 101 * kS, 102 * kS));
  EXPECT_FALSE(listed_in_window(ended, 90 * kS, 100 * kS));  // until is excluded
  // A row that does not show the end yet is not listed: a later sweep finds it.
  EXPECT_FALSE(listed_in_window(row("RUNNING", 90 * kS, 95 * kS, std::nullopt), 0, 1000 * kS));
  AccountingRecord completing = ended;
  completing.completing = true;
  EXPECT_FALSE(listed_in_window(completing, 0, 1000 * kS));
}

TEST(NumberAttempts, RequeuesContinueAJobAndAReusedIdStartsAgain) {
  // A job requeued twice (node failure, preemption), then months later a new job of
  // another user with the same id, then one more of that user (id wrapped again).
  std::vector<AccountingRecord> rows = {row("NODE_FAIL", 100 * kS, 101 * kS, 150 * kS),
                                        row("PREEMPTED", 150 * kS, 280 * kS, 400 * kS),
                                        row("COMPLETED", 400 * kS, 530 * kS, 600 * kS),
                                        row("FAILED", 9000 * kS, 9001 * kS, 9100 * kS),
                                        row("REQUEUED", 9500 * kS, 9501 * kS, 9600 * kS)};
  for (size_t i = 0; i < 3; ++i) rows[i].uid = 1001, rows[i].job_name = "train";
  rows[3].uid = 1002, rows[3].job_name = "train";
  rows[4].uid = 1002, rows[4].job_name = "eval";
  number_attempts(rows);
  std::vector<int> attempts;
  std::vector<TimeUs> jobs;
  for (const AccountingRecord& r : rows) attempts.push_back(r.requeue_count), jobs.push_back(*r.job_submit);
  EXPECT_EQ(attempts, (std::vector<int>{0, 1, 2, 0, 0}));
  EXPECT_EQ(jobs, (std::vector<TimeUs>{100 * kS, 100 * kS, 100 * kS, 9000 * kS, 9500 * kS}));
}

TEST(NumberAttempts, OnlyARequeueStateOfTheSameOwnerAndNameContinuesAJob) {
  for (const char* state : {"REQUEUED", "REQUEUE_HOLD", "SPECIAL_EXIT", "REQUEUE_FED", "NODE_FAIL", "PREEMPTED",
                            "BOOT_FAIL", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY"}) {
    std::vector<AccountingRecord> rows = {row(state, 100 * kS, 101 * kS, 106 * kS),
                                          row("FAILED", 106 * kS, 107 * kS, 110 * kS)};
    number_attempts(rows);
    const std::string ended = state;
    const bool requeued = ended.find("REQUEUE") == 0 || ended == "SPECIAL_EXIT" || ended == "NODE_FAIL" ||
                          ended == "PREEMPTED" || ended == "BOOT_FAIL";
    EXPECT_EQ(rows[1].requeue_count, requeued ? 1 : 0) << state;
    rows[1].uid = 7;  // another owner: another job, whatever the state
    number_attempts(rows);
    EXPECT_EQ(rows[1].requeue_count, 0) << state;
  }
}

// An array task is known as "4242_7"; its lines name its own id.
TEST(JobFactsOfARecord, NameTheIdsTheNodesLogsUse) {
  AccountingRecord task = row("FAILED", 100 * kS, 101 * kS, 130 * kS);
  task.job_id = "4242_7";
  task.db_job_id = 4250;
  task.uid = 1000;
  const JobFacts facts = task.to_job_facts();
  EXPECT_EQ(facts.allocation.slurm_ids, std::vector<std::string>{"4250"});
  EXPECT_EQ(facts.uid, std::optional<uint32_t>(1000));
}

TEST(JoinHetComponents, AHetJobIsOneRecordWithEachComponentAndTheFirstFailingState) {
  auto component = [](uint32_t offset, std::string state, std::string node, TimeUs start, std::optional<TimeUs> end) {
    AccountingRecord r = row(std::move(state), 100 * kS, start, end);
    r.db_job_id = 40 + offset;
    r.het_job_id = 40;
    r.het_job_offset = offset;
    r.node_expr = node;
    r.nodes = {node};
    r.exit_code = r.state == "COMPLETED" ? 0 : 5;
    return r;
  };
  std::vector<AccountingRecord> rows = {component(1, "FAILED", "n3", 102 * kS, 130 * kS),
                                        component(0, "COMPLETED", "n1", 101 * kS, 131 * kS)};
  AccountingRecord joint = join_het_components(rows, 0, "40");
  EXPECT_EQ(joint.job_id, "40");
  EXPECT_EQ(joint.state, "FAILED");
  EXPECT_EQ(joint.exit_code, 5);
  EXPECT_EQ(joint.nodes, (std::vector<std::string>{"n1", "n3"}));
  EXPECT_EQ(*joint.start, 101 * kS);
  EXPECT_EQ(*joint.end, 131 * kS);
  ASSERT_EQ(joint.components.size(), 2U);
  EXPECT_EQ(joint.components[0], (JobComponent{"40+0", "COMPLETED", 0, 0, {"n1"}}));
  EXPECT_EQ(joint.components[1], (JobComponent{"40+1", "FAILED", 5, 0, {"n3"}}));
  EXPECT_TRUE(joint.is_final());
  EXPECT_EQ(joint.to_job_facts().components, joint.components);
  // The ids the nodes' logs name the components by (job_40, StepId=41.0): both are the job's.
  EXPECT_EQ(joint.to_job_facts().allocation.slurm_ids, (std::vector<std::string>{"40", "41"}));
  // One component still running: the whole job is not final, whatever the other says.
  rows[1] = component(0, "RUNNING", "n1", 101 * kS, std::nullopt);
  EXPECT_FALSE(join_het_components(rows, 0, "40").is_final());
  rows[1] = component(0, "COMPLETED", "n1", 101 * kS, 131 * kS);
  rows[0].completing = true;
  EXPECT_FALSE(join_het_components(rows, 1, "40").is_final());
  // Not a het job: the row as it is.
  std::vector<AccountingRecord> plain = {row("FAILED", 100 * kS, 101 * kS, 130 * kS)};
  EXPECT_TRUE(join_het_components(plain, 0, "7").components.empty());
}

TEST(CountRestarts, AStepStartedAgainAfterTheSameStepFailedIsARestart) {
  auto step = [](std::string id, std::string name, uint32_t ntasks, std::string state, TimeUs start, TimeUs end) {
    StepRecord s;
    s.step_id = std::move(id);
    s.name = std::move(name);
    s.ntasks = ntasks;
    s.state = std::move(state);
    s.start = start * kS;
    s.end = end * kS;
    return s;
  };
  // for i in 1 2 3; do srun -n2 train && break; done: two failures, then a success.
  std::vector<StepRecord> retried = {step("9.batch", "batch", 1, "FAILED", 1, 40),
                                     step("9.0", "train", 2, "FAILED", 2, 10),
                                     step("9.1", "train", 2, "FAILED", 11, 20),
                                     step("9.2", "train", 2, "COMPLETED", 21, 39)};
  EXPECT_EQ(count_restarts(retried), 2);
  // Different steps one after the other, or after a success: no restart.
  std::vector<StepRecord> pipeline = {step("9.0", "prep", 2, "COMPLETED", 2, 10),
                                      step("9.1", "train", 2, "FAILED", 11, 20),
                                      step("9.2", "cleanup", 1, "COMPLETED", 21, 22),
                                      step("9.3", "train", 4, "COMPLETED", 23, 30)};
  EXPECT_EQ(count_restarts(pipeline), 0);
  std::vector<StepRecord> twice = {step("9.0", "train", 2, "COMPLETED", 2, 10),
                                   step("9.1", "train", 2, "COMPLETED", 11, 20)};
  EXPECT_EQ(count_restarts(twice), 0);
  // slurmdbd's whole seconds: quick steps share their times, their numbers order them.
  std::vector<StepRecord> quick = {step("9.2", "train", 2, "COMPLETED", 5, 5), step("9.0", "train", 2, "FAILED", 5, 5),
                                   step("9.1", "train", 2, "FAILED", 5, 5)};
  EXPECT_EQ(count_restarts(quick), 2);
  // Concurrent steps of the same name are not restarts of one another.
  std::vector<StepRecord> parallel = {step("9.0", "train", 2, "FAILED", 2, 10), step("9.1", "train", 2, "FAILED", 3, 9)};
  EXPECT_EQ(count_restarts(parallel), 0);
}

TEST(AccountingRecordFinal, RequeueStatesEndAnAttempt) {
  for (const char* state : {"REQUEUED", "REQUEUE_HOLD", "SPECIAL_EXIT", "REQUEUE_FED", "NODE_FAIL", "PREEMPTED"})
    EXPECT_TRUE(row(state, 100 * kS, 101 * kS, 106 * kS).is_final()) << state;
  for (const char* state : {"PENDING", "RUNNING", "SUSPENDED"})
    EXPECT_FALSE(row(state, 100 * kS, 101 * kS, 106 * kS).is_final()) << state;
  AccountingRecord completing = row("REQUEUED", 100 * kS, 101 * kS, 106 * kS);
  completing.completing = true;
  EXPECT_FALSE(completing.is_final());
  EXPECT_FALSE(row("REQUEUED", 100 * kS, 101 * kS, std::nullopt).is_final());
}

}  // namespace
}  // namespace attrib::slurm
