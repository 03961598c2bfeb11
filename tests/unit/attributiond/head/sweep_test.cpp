// The reconciliation sweep against a real SQLite archive and an accounting that lists
// ended attempts: what no hook reported is queued, once; what the archive knows is not.
#include "attributiond/head/sweep.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "tests/support/memory_accounting.h"

namespace fs = std::filesystem;

namespace attrib::head {
namespace {

constexpr TimeUs kS = 1000000;

slurm::JobRecordFacts attempt(const std::string& job_id, TimeUs submit, TimeUs start, TimeUs end) {
  slurm::JobRecordFacts a;
  a.facts.job_id = job_id;
  a.facts.cluster = "lab";
  a.facts.state = "FAILED";
  a.facts.start = start;
  a.facts.end = end;
  a.facts.nodes = {"n1", "n2"};
  a.facts.uid = 1000;
  a.final = true;
  a.submit = submit;
  return a;
}

class SweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("attrib-sweep-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    Cleanup();
    auto store = store::JobStore::open(path_.string());
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    Cleanup();
  }
  void Cleanup() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }
  fs::path path_;
  std::unique_ptr<store::JobStore> store_;
};

TEST_F(SweepTest, AnAttemptNoHookReportedIsQueuedOnceAsTheHookWouldHave) {
  test::MemoryAccounting accounting;  // slurmdbd listing the ended attempts
  accounting.state().ended = {attempt("40", 100 * kS, 110 * kS, 200 * kS)};
  auto queued = sweep_once(*store_, accounting, "lab", 0, 1000 * kS, 1100 * kS);
  ASSERT_TRUE(queued) << queued.error().message;
  EXPECT_EQ(queued->queued, 1);
  auto due = store_->next_due(2000 * kS, {});
  ASSERT_TRUE(due && due->has_value());
  const v1::JobEnded& report = (*due)->request;
  EXPECT_EQ(report.job_id(), "40");
  EXPECT_EQ(report.hook(), v1::HOOK_KIND_SWEEP);
  EXPECT_EQ(report.node_list(), "n1,n2");
  EXPECT_EQ(report.start_time_us(), 110 * kS);  // the worker finds the attempt's row by it
  EXPECT_EQ(report.uid(), 1000u);
  // The same window again (or overlapping): nothing new.
  EXPECT_EQ(sweep_once(*store_, accounting, "lab", 0, 1000 * kS, 1200 * kS)->queued, 0);
  EXPECT_EQ((*store_->lookup("lab", "40"))->runs, 1);
}

TEST_F(SweepTest, AttemptsTheArchiveKnowsAreLeftAlone) {
  test::MemoryAccounting accounting;  // slurmdbd listing the ended attempts
  // 41: judged on its row; 42: its hook's report is queued, not judged yet.
  accounting.state().ended = {attempt("41", 100 * kS, 110 * kS, 200 * kS), attempt("42", 300 * kS, 310 * kS, 400 * kS)};
  v1::JobEnded hooked;
  hooked.set_job_id("41");
  ASSERT_TRUE(*store_->enqueue(hooked, "lab", 201 * kS));
  Verdict verdict;
  verdict.domain = "APPLICATION";
  ASSERT_TRUE(store_->archive({"lab", "41", 0}, verdict, {}, 202 * kS, 100 * kS));
  hooked.set_job_id("42");
  ASSERT_TRUE(*store_->enqueue(hooked, "lab", 401 * kS));
  auto count = sweep_once(*store_, accounting, "lab", 0, 1000 * kS, 1100 * kS);
  ASSERT_TRUE(count);
  EXPECT_EQ(count->queued, 0);
  EXPECT_EQ(count->known, 2);

  // A requeued 41's next attempt, which no hook reported: a run of its own.
  accounting.state().ended.push_back(attempt("41", 200 * kS, 500 * kS, 600 * kS));
  EXPECT_EQ(sweep_once(*store_, accounting, "lab", 0, 1000 * kS, 1100 * kS)->queued, 1);
  EXPECT_EQ((*store_->lookup("lab", "41"))->runs, 2);
}

// slurmdbd shows an attempt's end at once and its allocation count seconds later (more
// under load). attrib-show --backfill lists once: the attempt is queued then, not skipped
// as not final (it was never counted at all), with no node list, for the row names only
// the batch host until then: the worker waits for the whole row and takes the job's nodes
// from it. The final row listed later is the same attempt.
TEST_F(SweepTest, AnAttemptWhoseRowIsNotFinalYetIsQueuedOnceWithoutItsPartialNodes) {
  test::MemoryAccounting accounting;  // slurmdbd listing the ended attempts
  slurm::JobRecordFacts unfilled = attempt("43", 100 * kS, 110 * kS, 200 * kS);
  unfilled.final = false;
  unfilled.facts.nodes = {"n1"};  // the batch host only
  accounting.state().ended = {unfilled};
  auto queued = sweep_once(*store_, accounting, "lab", 0, 1000 * kS, 201 * kS);
  ASSERT_TRUE(queued) << queued.error().message;
  EXPECT_EQ(queued->queued, 1);
  auto due = store_->next_due(2000 * kS, {});
  ASSERT_TRUE(due && due->has_value());
  EXPECT_EQ((*due)->request.node_list(), "");
  EXPECT_EQ((*due)->request.start_time_us(), 110 * kS);
  accounting.state().ended = {attempt("43", 100 * kS, 110 * kS, 200 * kS)};  // final now
  auto again = sweep_once(*store_, accounting, "lab", 0, 1000 * kS, 230 * kS);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->queued, 0);
  EXPECT_EQ(again->known, 1);
  EXPECT_EQ((*store_->lookup("lab", "43"))->runs, 1);
}

}  // namespace
}  // namespace attrib::head
