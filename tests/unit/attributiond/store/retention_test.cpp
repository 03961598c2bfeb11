// Retention over a real SQLite archive: what goes, in which order, and what never does.
#include "attributiond/store/retention.h"

#include <filesystem>
#include <random>

#include <gtest/gtest.h>

namespace fs = std::filesystem;
using namespace attrib;
using namespace attrib::store;

namespace {

constexpr TimeUs kDay = 86400LL * 1000000;

class RetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("attrib-retention-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    Cleanup();
    auto opened = JobStore::open(path_.string());
    ASSERT_TRUE(opened) << opened.error().message;
    store_ = std::move(*opened);
  }
  void TearDown() override {
    store_.reset();
    Cleanup();
  }
  void Cleanup() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }

  // A run queued at `day`, and unless `stage` is "queued", archived with raw evidence of
  // `evidence_bytes` incompressible bytes; "done" also writes its comment.
  void Run(const std::string& id, TimeUs day, const std::string& stage, size_t evidence_bytes = 4096) {
    v1::JobEnded request;
    request.set_job_id(id);
    request.set_node_list("n1");
    ASSERT_TRUE(store_->enqueue(request, "lab", day));
    if (stage == "queued") return;
    Verdict verdict;
    verdict.job_id = id;
    verdict.cluster = "lab";
    verdict.domain = "UNATTRIBUTED";
    Event event;
    event.id = "e1";
    event.node = "n1";
    event.source = "kernel";
    event.line = "a line";
    ArchivedEvidence evidence;
    std::mt19937 random(static_cast<unsigned>(std::hash<std::string>{}(id)));
    evidence.blob.resize(evidence_bytes);
    for (char& c : evidence.blob) c = static_cast<char>(random());
    evidence.raw_bytes = evidence_bytes;
    evidence.lines = 1;
    evidence.complete = true;
    ASSERT_TRUE(store_->archive({"lab", id}, verdict, {event}, day + 1, std::nullopt, &evidence));
    if (stage == "done") {
      ASSERT_TRUE(store_->mark_done({"lab", id}, day + 2));
    }
  }

  int64_t Count(const std::string& sql) {
    return store_->with_read_db([&](Database& db) {
      auto stmt = db.prepare(sql);
      EXPECT_TRUE(stmt.step()) << stmt.error();
      return stmt.int_at(0);
    });
  }
  bool HasEvidence(const std::string& id) {
    auto e = store_->evidence({"lab", id});
    return e.ok() && e->has_value();
  }
  bool HasRun(const std::string& id) {
    auto r = store_->lookup("lab", id);
    return r.ok() && r->has_value();
  }

  fs::path path_;
  std::unique_ptr<JobStore> store_;
};

TEST_F(RetentionTest, OldEvidenceGoesFirstAndItsVerdictStays) {
  const TimeUs now = 100 * kDay;
  Run("old", 10 * kDay, "done");
  Run("new", 95 * kDay, "done");
  RetentionPolicy policy;
  policy.evidence_before = now - 30 * kDay;
  policy.keep_runs_after = now - kDay;
  auto report = prune_archive(*store_, policy, now);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->evidence_pruned, 1u);
  EXPECT_EQ(report->runs_pruned, 0u);
  EXPECT_FALSE(HasEvidence("old"));
  EXPECT_TRUE(HasEvidence("new"));
  EXPECT_TRUE(HasRun("old"));  // the verdict, its events and history stay
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE job_id = 'old'"), 1);
  EXPECT_EQ(Count("SELECT evidence_pruned_us FROM jobs WHERE job_id = 'old'"), now);
  EXPECT_EQ(Count("SELECT count(*) FROM jobs WHERE evidence_pruned_us IS NOT NULL"), 1);
}

TEST_F(RetentionTest, OldRunsGoWholeButNeverOnesTheSweepStillLooksFor) {
  const TimeUs now = 100 * kDay;
  Run("old", 10 * kDay, "done");
  Run("recent", 99 * kDay, "done");
  RetentionPolicy policy;
  policy.runs_before = now;                 // everything by age ...
  policy.keep_runs_after = now - 2 * kDay;  // ... but what the sweep's lookback covers
  auto report = prune_archive(*store_, policy, now);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->runs_pruned, 1u);
  EXPECT_FALSE(HasRun("old"));
  EXPECT_TRUE(HasRun("recent"));
  for (const char* table : {"events", "coverage", "history", "evidence"})
    EXPECT_EQ(Count(std::string("SELECT count(*) FROM ") + table + " WHERE job_id = 'old'"), 0) << table;
  EXPECT_EQ(Count("SELECT count(*) FROM history WHERE job_id = 'recent'"), 1);
}

// The test: however old, however far over the cap, a queued attempt and one
// archived with its comment still to write keep everything.
TEST_F(RetentionTest, PruningNeverTouchesAQueuedOrInFlightAttempt) {
  const TimeUs now = 100 * kDay;
  Run("queued", 1 * kDay, "queued");
  Run("in_flight", 1 * kDay, "archived", 256 * 1024);
  Run("done", 2 * kDay, "done", 256 * 1024);
  RetentionPolicy policy;
  policy.evidence_before = now;
  policy.runs_before = now;
  policy.max_bytes = 1;  // far under anything: all that may go, goes
  policy.keep_runs_after = now;
  auto report = prune_archive(*store_, policy, now);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->over_cap);
  EXPECT_FALSE(HasRun("done"));
  ASSERT_TRUE(HasRun("queued"));
  EXPECT_EQ((*store_->lookup("lab", "queued"))->status, "queued");
  ASSERT_TRUE(HasRun("in_flight"));
  EXPECT_EQ((*store_->lookup("lab", "in_flight"))->status, "archived");
  EXPECT_TRUE(HasEvidence("in_flight"));
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE job_id = 'in_flight'"), 1);
  // The queue still hands both out.
  auto due = store_->next_due(now, {});
  ASSERT_TRUE(due && due->has_value());
}

TEST_F(RetentionTest, TheSizeCapTakesTheOldestEvidenceUntilUnderThenStops) {
  const TimeUs now = 100 * kDay;
  for (int i = 0; i < 20; ++i) Run("job" + std::to_string(10 + i), (10 + i) * kDay, "done", 64 * 1024);
  auto before = archive_stats(*store_);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->evidence_runs, 20);
  EXPECT_GT(before->used_bytes, 20u * 64 * 1024);
  RetentionPolicy policy;
  policy.max_bytes = before->used_bytes - 5 * 64 * 1024;  // about five runs' evidence too much
  policy.keep_runs_after = now;
  auto report = prune_archive(*store_, policy, now);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_FALSE(report->over_cap);
  EXPECT_LE(report->bytes_after, policy.max_bytes);
  EXPECT_GE(report->evidence_pruned, 5u);
  EXPECT_LE(report->evidence_pruned, 7u);  // just enough, not everything
  EXPECT_EQ(report->runs_pruned, 0u);      // evidence sufficed
  EXPECT_FALSE(HasEvidence("job10"));      // oldest first
  EXPECT_TRUE(HasEvidence("job29"));
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(HasRun("job" + std::to_string(10 + i)));
  auto after = archive_stats(*store_);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->evidence_pruned, static_cast<int64_t>(report->evidence_pruned));
  EXPECT_EQ(after->runs, 20);
}

TEST_F(RetentionTest, StatsCountRunsByStateAndEvidence) {
  Run("a", 10 * kDay, "done", 1000);
  Run("b", 20 * kDay, "archived", 2000);
  Run("c", 30 * kDay, "queued");
  auto stats = archive_stats(*store_);
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(stats->runs, 3);
  EXPECT_EQ(stats->queued, 2);  // b (its comment not written yet) and c
  EXPECT_EQ(stats->dead_lettered, 0);
  EXPECT_EQ(stats->evidence_runs, 2);
  EXPECT_EQ(stats->evidence_raw_bytes, 3000u);
  EXPECT_EQ(stats->oldest_run, 10 * kDay);
  EXPECT_EQ(stats->newest_run, 30 * kDay);
  EXPECT_EQ(stats->oldest_evidence, 10 * kDay);
  EXPECT_GE(stats->file_bytes, stats->used_bytes);
}

}  // namespace

namespace {

// The configuration's defaults: raw evidence kept 30 days, runs kept, no cap, and the
// sweep's lookback plus its wait for a final record protected.
TEST(RetentionPolicy, FollowsTheConfiguration) {
  const TimeUs now = 100 * kDay;
  common::ArchiveConfig archive;
  common::HeadConfig head;
  RetentionPolicy defaults = retention_policy(archive, head, now);
  EXPECT_EQ(defaults.evidence_before, now - 30 * kDay);
  EXPECT_FALSE(defaults.runs_before);
  EXPECT_EQ(defaults.max_bytes, 0u);
  EXPECT_EQ(defaults.keep_runs_after, now - (head.sweep_lookback_s + head.scope_max_wait_s) * 1000000LL);
  archive.evidence_retention_days = 0;
  archive.retention_days = 90;
  archive.max_bytes = 1 << 20;
  RetentionPolicy set = retention_policy(archive, head, now);
  EXPECT_FALSE(set.evidence_before);
  EXPECT_EQ(set.runs_before, now - 90 * kDay);
  EXPECT_EQ(set.max_bytes, 1u << 20);
}

}  // namespace
