// Scoping a job from slurmdbd over simulated time (a real SQLite queue; slurmdbd replaced
// by a scripted stand-in, the real one is in the e2e suite): an outage is waited out and
// the final record used; a record slurmdbd never stored is given up with its reason.
#include <filesystem>

#include <gtest/gtest.h>

#include "attributiond/pipeline/attribution.h"
#include "rules/engine.h"
#include "tests/support/memory_accounting.h"
#include "tests/support/test_paths.h"

namespace attrib::pipeline {
namespace {

namespace fs = std::filesystem;
constexpr TimeUs kSecond = 1000000;
constexpr TimeUs kMinute = 60 * kSecond;
constexpr TimeUs kStart = 1'796'032'800 * kSecond;  // 2026-11-30T10:00:00Z: when the hook reported the job

class ScopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("attrib-scope-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    Cleanup();
    auto store = store::JobStore::open(path_.string());
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    auto pack = rules::load_rule_pack({attrib::test::rules_pack_dir(), {}});
    ASSERT_TRUE(pack) << pack.error().message;
    pack_ = *pack;
    config_.write_comment = false;
    // slurmdbd as the head sees it: unreachable until reachable_from, then it has job 7's
    // record (or none), as final as each test makes it. Every read is counted.
    accounting_.state().now = &now_;
    accounting_.state().lag_reads.reset();
    v1::JobEnded hook = HookReport(kStart);  // what the hook knew: it saw the job fail
    hook.set_state("FAILED");
    hook.set_exit_code(1);
    ASSERT_TRUE(store_->enqueue(hook, "lab", kStart));
  }
  void TearDown() override {
    store_.reset();
    Cleanup();
  }
  void Cleanup() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }

  // Runs the worker's loop on simulated time, a second at a time, until the job leaves
  // the queue or `until`; returns the job's record.
  store::JobRecord RunUntil(TimeUs until) {
    AttributionContext context{config_, cluster_, pack_, collectors_, nullptr, *store_};
    for (now_ = kStart; now_ <= until; now_ += kSecond) {
      auto due = store_->next_due(now_, {});
      EXPECT_TRUE(due) << due.error().message;
      if (!due || !*due) continue;
      if (attribute_once(context, accounting_, **due, now_) == Outcome::Done) break;
    }
    auto record = store_->lookup("lab", "7");
    EXPECT_TRUE(record && *record);
    return record && *record ? **record : store::JobRecord{};
  }

  // Job 7's report on n1 by a hook that ran at hook_time and knew no start (Slurm 22.05's
  // epilogs): what a requeued attempt's, or a late second, report looks like.
  static v1::JobEnded HookReport(TimeUs hook_time) {
    v1::JobEnded report;
    report.set_job_id("7");
    report.set_node_list("n1");
    report.set_hook_time_us(hook_time);
    return report;
  }
  static slurm::JobRecordFacts FinalRecord() {
    slurm::JobRecordFacts record;
    record.final = true;
    record.facts.job_id = "7";
    record.facts.cluster = "lab";
    record.facts.state = "NODE_FAIL";  // what only the final record knows
    record.facts.exit_code = 0;
    record.facts.start = kStart - 3600 * kSecond;
    record.facts.end = kStart - kSecond;
    record.facts.nodes = {"n1"};
    return record;
  }

  fs::path path_;
  std::unique_ptr<store::JobStore> store_;
  std::shared_ptr<const rules::RulePack> pack_;
  common::HeadConfig config_;
  std::string cluster_ = "lab";
  std::vector<std::unique_ptr<collectors::Collector>> collectors_;
  // Job 7's row in slurmdbd, and how often it was read.
  void Record(const slurm::JobRecordFacts& record) { accounting_.state().records["7"] = record; }
  int Reads() { return accounting_.state().reads["7"]; }

  test::MemoryAccounting accounting_;
  TimeUs now_ = kStart;
};

TEST_F(ScopeTest, AnAccountingOutageIsWaitedOutAndTheFinalRecordIsUsed) {
  accounting_.state().reachable_from = kStart + 15 * kMinute;  // slurmdbd down for 15 minutes
  Record(FinalRecord());

  store::JobRecord during = RunUntil(kStart + 15 * kMinute - kSecond);
  EXPECT_EQ(during.status, "queued") << "an outage is waited out, not guessed around";
  EXPECT_EQ(during.last_error.rfind("waiting for slurmdbd: cannot connect", 0), 0u) << during.last_error;
  // Polled at growing intervals (retry_backoff_s .. retry_max_backoff_s), not every poll interval.
  EXPECT_LE(Reads(), 40) << Reads();
  EXPECT_GE(Reads(), 5) << Reads();

  store::JobRecord after = RunUntil(kStart + 30 * kMinute);
  EXPECT_EQ(after.status, "done") << after.last_error;
  ASSERT_TRUE(after.verdict_json);
  auto verdict = nlohmann::json::parse(*after.verdict_json);
  EXPECT_EQ(verdict["terminal_state"], "NODE_FAIL") << "the verdict rests on the final record, not the hook's facts";
}

// Found by the slurmdbd-down fault scenario (tests/e2e/faults/slurmdbd_down.sh): the
// outage used to count against scope_max_wait_s, so the first read after it found the
// job's row still RUNNING, past the wait, and the job was judged RUNNING with exit 0.
TEST_F(ScopeTest, AfterAnOutageLongerThanTheScopeWaitTheRecordStillGetsItsWait) {
  config_.scope_max_wait_s = 60;
  accounting_.state().reachable_from = kStart + 15 * kMinute;
  accounting_.state().final_from = kStart + 15 * kMinute + 30 * kSecond;  // slurmctld catches up after 30 s
  Record(FinalRecord());
  store::JobRecord record = RunUntil(kStart + 30 * kMinute);
  EXPECT_EQ(record.status, "done") << record.last_error;
  ASSERT_TRUE(record.verdict_json);
  EXPECT_EQ(nlohmann::json::parse(*record.verdict_json)["terminal_state"], "NODE_FAIL");
}

TEST_F(ScopeTest, ARecordThatNeverBecomesFinalLeavesHowTheJobEndedToTheHook) {
  config_.scope_max_wait_s = 60;
  accounting_.state().reachable_from = kStart + 15 * kMinute;
  accounting_.state().final_from = kStart + 3600 * kMinute;  // never within the test
  Record(FinalRecord());
  store::JobRecord record = RunUntil(kStart + 30 * kMinute);
  EXPECT_EQ(record.status, "done") << record.last_error;
  ASSERT_TRUE(record.verdict_json);
  auto verdict = nlohmann::json::parse(*record.verdict_json);
  EXPECT_EQ(verdict["terminal_state"], "FAILED") << "the hook saw the job fail; RUNNING is the stale row's";
  EXPECT_EQ(verdict["exit_code"], 1);
}

TEST_F(ScopeTest, AnOutageLongerThanTheLimitFallsBackToTheHooksFacts) {
  config_.accounting_outage_max_wait_s = 600;
  accounting_.state().reachable_from = kStart + 3600 * kMinute;  // never within the test
  store::JobRecord record = RunUntil(kStart + 20 * kMinute);
  EXPECT_EQ(record.status, "done") << record.last_error;
  ASSERT_TRUE(record.verdict_json);
  EXPECT_EQ(nlohmann::json::parse(*record.verdict_json)["terminal_state"], "FAILED") << "the hook's state";
}

TEST_F(ScopeTest, AJobSlurmdbdNeverStoredIsGivenUpAfterMaxFailuresWithTheReason) {
  accounting_.state().reachable_from = 0;  // slurmdbd up, but it has no record
  config_.scope_max_wait_s = 60;
  config_.max_failures = 4;
  config_.retry_backoff_s = 5;
  store::JobRecord record = RunUntil(kStart + 3600 * kMinute);
  EXPECT_EQ(record.status, "failed");
  EXPECT_EQ(record.last_error.rfind("scope: slurmdbd has no record of job 7 on cluster lab", 0), 0u)
      << record.last_error;
  auto failed = store_->failed_jobs(10);
  ASSERT_TRUE(failed);
  ASSERT_EQ(failed->size(), 1u);
  EXPECT_EQ((*failed)[0].failures, 4);
  // Polled during scope_max_wait_s (every scope_poll_interval_ms, here 1 s steps), then four counted attempts.
  EXPECT_LE(Reads(), 60 + 4 + 1);
}

TEST_F(ScopeTest, ANonFinalRecordIsUsedAfterTheScopeWaitWithTheHooksEnd) {
  slurm::JobRecordFacts lagging = FinalRecord();
  lagging.final = false;
  lagging.facts.state = "RUNNING";
  Record(lagging);
  config_.scope_max_wait_s = 30;
  store::JobRecord record = RunUntil(kStart + 5 * kMinute);
  EXPECT_EQ(record.status, "done") << record.last_error;
  // The row's nodes and start are used; how the job ended (RUNNING in the row) is the hook's.
  EXPECT_EQ(nlohmann::json::parse(*record.verdict_json)["terminal_state"], "FAILED");
}

// slurmdbd shows a job's end (state, exit code, end time) at once, and its allocation
// count about 2.5 s later (the placeholder row; bench/e2e_sacct_latency.sh). When the hook
// named the job's nodes that count adds nothing: the first read that shows the end is used.
TEST_F(ScopeTest, ARecordThatShowsTheEndIsUsedAtOnceWhenTheHookNamedTheNodes) {
  slurm::JobRecordFacts ended = FinalRecord();
  ended.final = false;
  ended.ended = true;
  Record(ended);
  store::JobRecord record = RunUntil(kStart + 5 * kMinute);
  EXPECT_EQ(record.status, "done") << record.last_error;
  EXPECT_LE(Reads(), 2) << "not polled until the allocation count appears, only head.hook_settle_ms";
  EXPECT_EQ(nlohmann::json::parse(*record.verdict_json)["terminal_state"], "NODE_FAIL") << "the record's end";
}

// A requeued job (tests/e2e/requeue_attempts.sh): attempt 0 is judged on its row. Attempt
// 1's EpilogSlurmctld (no start: Slurm 22.05) reports before slurmdbd has recorded attempt
// 1's row as started, so the report reads attempt 0's row, which run 0 was judged on. The
// rows do not show that it is attempt 0 reported again (the row is REQUEUED, and no later
// row came after the hook): it was dropped as such ("no verdict for run 1"); now it waits
// for the rows, and is judged on attempt 1's row once slurmdbd shows it.
TEST_F(ScopeTest, ARequeuedAttemptWhoseRowIsNotRecordedYetWaitsForItAndIsNotDropped) {
  config_.scope_max_wait_s = 60;
  slurm::JobRecordFacts attempt0 = FinalRecord();
  attempt0.facts.state = "REQUEUED";
  attempt0.submit = kStart - 7200 * kSecond;
  Record(attempt0);
  ASSERT_EQ(RunUntil(kStart + 10 * kSecond).status, "done");

  const TimeUs reported = kStart + 10 * kMinute;  // attempt 1 ended; its hook's report
  v1::JobEnded hook = HookReport(reported);
  hook.set_state("FAILED");
  hook.set_exit_code(7);
  ASSERT_TRUE(*store_->enqueue(hook, "lab", reported));
  store::JobRecord waiting = RunUntil(reported + 30 * kSecond);
  EXPECT_EQ(waiting.key.run, 1);
  EXPECT_EQ(waiting.status, "queued") << "waited for, not dropped as a second report of attempt 0";
  EXPECT_EQ(waiting.last_error.rfind("slurmdbd shows no row for this report's attempt yet", 0), 0u)
      << waiting.last_error;

  slurm::JobRecordFacts attempt1 = FinalRecord();  // slurmdbd records attempt 1's row
  attempt1.facts.state = "FAILED";
  attempt1.facts.exit_code = 7;
  attempt1.facts.attempt = 1;
  attempt1.facts.start = reported - 5 * kSecond;
  attempt1.facts.end = reported - kSecond;
  attempt1.submit = kStart;  // the requeue
  Record(attempt1);
  store::JobRecord judged = RunUntil(reported + 50 * kSecond);
  EXPECT_EQ(judged.key.run, 1);
  EXPECT_EQ(judged.status, "done") << judged.last_error;
  ASSERT_TRUE(judged.verdict_json);
  auto verdict = nlohmann::json::parse(*judged.verdict_json);
  EXPECT_EQ(verdict["terminal_state"], "FAILED");
  EXPECT_EQ(verdict["attempt"], 1) << "judged on attempt 1's own row";
  auto first = store_->lookup("lab", "7", 0);
  ASSERT_TRUE(first && *first && (*first)->verdict_json);
  EXPECT_EQ(nlohmann::json::parse(*(*first)->verdict_json)["terminal_state"], "REQUEUED");
}

// slurmdbd never shows the attempt's row within head.scope_max_wait_s: the report is judged
// as an attempt of its own from the hook's facts, never dropped.
TEST_F(ScopeTest, ARequeuedAttemptSlurmdbdNeverShowsIsJudgedFromTheHooksFacts) {
  config_.scope_max_wait_s = 60;
  slurm::JobRecordFacts attempt0 = FinalRecord();
  attempt0.facts.state = "REQUEUED";
  attempt0.submit = kStart - 7200 * kSecond;
  Record(attempt0);
  ASSERT_EQ(RunUntil(kStart + 10 * kSecond).status, "done");
  const TimeUs reported = kStart + 10 * kMinute;
  v1::JobEnded hook = HookReport(reported);
  hook.set_state("FAILED");
  hook.set_exit_code(7);
  ASSERT_TRUE(*store_->enqueue(hook, "lab", reported));
  store::JobRecord judged = RunUntil(reported + 5 * kMinute);
  EXPECT_EQ(judged.key.run, 1);
  EXPECT_EQ(judged.runs, 2);
  EXPECT_EQ(judged.status, "done") << judged.last_error;
  ASSERT_TRUE(judged.verdict_json);
  auto verdict = nlohmann::json::parse(*judged.verdict_json);
  EXPECT_EQ(verdict["terminal_state"], "FAILED") << "the hook's, not attempt 0's row";
  EXPECT_EQ(verdict["exit_code"], 7);
}

// The rows do show it: a report whose start is the row's is that attempt reported again
// (a spool sent again after the attempt was judged), folded into its run.
TEST_F(ScopeTest, AReportWhoseStartIsTheJudgedRowsIsASecondReportOfItAndFolded) {
  slurm::JobRecordFacts attempt0 = FinalRecord();
  attempt0.submit = kStart - 7200 * kSecond;
  Record(attempt0);
  ASSERT_EQ(RunUntil(kStart + 10 * kSecond).status, "done");
  v1::JobEnded again = HookReport(kStart + kMinute);
  again.set_start_time_us(*attempt0.facts.start);
  ASSERT_TRUE(*store_->enqueue(again, "lab", kStart + kMinute));
  store::JobRecord folded = RunUntil(kStart + 2 * kMinute);
  EXPECT_EQ(folded.key.run, 0);
  EXPECT_EQ(folded.runs, 1) << "run 1 folded into run 0";
}

// A job that was not requeued (its row FAILED): a report of the same hook at another time
// (a hook run twice for the attempt), without a start (Slurm 22.05's epilogs), reads the row
// run 0 was judged on. No later attempt can have run: it is folded into run 0 at once, not
// held for head.scope_max_wait_s and then judged as a second attempt with a verdict and a
// Comment of its own.
TEST_F(ScopeTest, ALateReportWithoutAStartOfAJobThatWasNotRequeuedIsFoldedAtOnce) {
  slurm::JobRecordFacts attempt0 = FinalRecord();
  attempt0.facts.state = "FAILED";
  attempt0.submit = kStart - 7200 * kSecond;
  Record(attempt0);
  ASSERT_EQ(RunUntil(kStart + 10 * kSecond).status, "done");
  const int reads = Reads();
  const TimeUs reported = kStart + 10 * kMinute;
  v1::JobEnded again = HookReport(reported);
  ASSERT_TRUE(*store_->enqueue(again, "lab", reported));
  auto queued = store_->lookup("lab", "7");
  ASSERT_TRUE(queued && *queued);
  EXPECT_EQ((*queued)->key.run, 1) << "a run of its own until the rows are read";
  store::JobRecord folded = RunUntil(reported + 5 * kSecond);
  EXPECT_EQ(folded.key.run, 0);
  EXPECT_EQ(folded.runs, 1) << "run 1 folded into run 0";
  EXPECT_LE(Reads() - reads, 2) << "decided on the first read, not waited on";
}

// Which rows show the report's attempt: its start, to slurmdbd's whole second; without a
// start, a later row of the id that came after the hook, or a row the job was not requeued
// after.
TEST(RowsShowReportedAttemptTest, TheReportsStartALaterRowOrAnEndWithoutRequeueShowIt) {
  slurm::JobRecordFacts row;
  row.facts.start = kStart;
  row.facts.end = kStart + kMinute;
  row.facts.state = "REQUEUED";
  v1::JobEnded report;
  EXPECT_FALSE(rows_show_reported_attempt(report, row)) << "EpilogSlurmctld's report, the newest row, requeued";
  row.later_row_after_hook = true;
  EXPECT_TRUE(rows_show_reported_attempt(report, row));
  row.later_row_after_hook = false;
  for (const char* state : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY"}) {
    row.facts.state = state;  // not requeued: no later attempt follows
    EXPECT_TRUE(rows_show_reported_attempt(report, row)) << state;
  }
  for (const char* state : {"NODE_FAIL", "PREEMPTED", "REQUEUE_HOLD", "BOOT_FAIL"}) {
    row.facts.state = state;  // Slurm may have requeued the job: the next attempt may be the report's
    EXPECT_FALSE(rows_show_reported_attempt(report, row)) << state;
  }
  row.facts.state = "FAILED";
  row.facts.end.reset();  // the row does not show the end yet: it says nothing of a requeue
  EXPECT_FALSE(rows_show_reported_attempt(report, row));
  row.facts.end = kStart + kMinute;
  report.set_start_time_us(kStart + 400000);  // jobcomp/script's START, SLURM_JOB_START_TIME: whole seconds
  EXPECT_TRUE(rows_show_reported_attempt(report, row));
  report.set_start_time_us(kStart + 5 * kSecond);  // a later attempt's start: not this row
  EXPECT_FALSE(rows_show_reported_attempt(report, row)) << "the start decides, not the row's state";
  row.later_row_after_hook = true;  // nor a later row, when the report has one
  EXPECT_FALSE(rows_show_reported_attempt(report, row));
  row.facts.start.reset();
  EXPECT_FALSE(rows_show_reported_attempt(report, row));
}

TEST(ScopeStepTest, AnEndedRowIsUsedOnlyWhenItNamesTheHooksNodesAndTheOtherHooksHadTheirTime) {
  common::HeadConfig config;
  config.hook_settle_ms = 500;
  slurm::JobRecordFacts ended;
  ended.ended = true;
  ended.facts.nodes = {"n1"};
  const Result<slurm::JobRecordFacts> read = ended;
  const TimeUs settled = kStart + 500000;
  EXPECT_EQ(scope_step(config, read, kStart, settled, {"n1"}).kind, ScopeStep::Use);
  // Before the settle time: the job's other hook (jobcomp/script, EpilogSlurmctld) may
  // still report; the next attempt is due when it has passed.
  const ScopeStep early = scope_step(config, read, kStart, kStart + 1000, {"n1"});
  EXPECT_EQ(early.kind, ScopeStep::Wait);
  EXPECT_EQ(early.next_attempt, settled);
  // A slurmd Epilog names only its own node: the whole row is waited for.
  EXPECT_EQ(scope_step(config, read, kStart, settled, {}).kind, ScopeStep::Wait);
  // The placeholder of a 3-node job names only the batch host.
  EXPECT_EQ(scope_step(config, read, kStart, settled, {"n1", "n2", "n3"}).kind, ScopeStep::Wait);
  ended.ended = false;  // still RUNNING or COMPLETING in the row
  EXPECT_EQ(scope_step(config, Result<slurm::JobRecordFacts>(ended), kStart, settled, {"n1"}).kind, ScopeStep::Wait);
}

}  // namespace
}  // namespace attrib::pipeline

namespace attrib::pipeline {
namespace {

// The nodes a verdict covers: the hook's list, plus the record's when the hook names only
// part of the job (a slurmd Epilog names its own node).
TEST(MergeFactsTest, ASlurmdEpilogsNodeIsJoinedByTheRecordsNodes) {
  slurm::JobRecordFacts record;
  record.final = true;
  record.facts.nodes = {"n1", "n2"};
  v1::JobEnded hook;
  hook.set_job_id("7");
  hook.set_hook(v1::HOOK_KIND_EPILOG_SLURMD);
  EXPECT_EQ(merge_facts(hook, record, {"n2"}, "lab").nodes, (std::vector<std::string>{"n2", "n1"}));
  // EpilogSlurmctld's list is the whole job's: the record (which may lag) adds nothing.
  hook.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
  EXPECT_EQ(merge_facts(hook, record, {"n2"}, "lab").nodes, (std::vector<std::string>{"n2"}));
}

}  // namespace
}  // namespace attrib::pipeline
