// Archives written by earlier attributiond versions open in this one (issue 21). Each
// tests/fixtures/archive/schema-v<k>.sql is the .dump of an archive that the commit with
// k migrations wrote (README.md there): a judged job with its verdict, events, coverage,
// history and remediation rows, an opted-out job, a dead-lettered job (schema 3 on) and a
// job still queued; from schema 5 each row's reports and the judged attempt's submit time,
// from schema 6 the queued job's slurmdbd outage, from schema 7 the judged job's raw evidence. Opening one migrates it
// to the current schema; nothing is lost and the queued job is still attributed. An archive from a newer attributiond
// is refused.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attributiond/store/fleet_queries.h"
#include "attributiond/store/job_store.h"
#include "common/evidence_archive.h"
#include "core/verdict.h"
#include "tests/support/test_paths.h"
#include "core/whole_file.h"

namespace fs = std::filesystem;
using attrib::store::Database;
using attrib::store::JobKey;
using attrib::store::JobStore;

namespace {

constexpr attrib::TimeUs kSecond = 1000000;
constexpr attrib::TimeUs kJobEnd = 1796034000LL * kSecond;  // 2026-11-30T10:20:00Z, job 4242's end

int64_t Scalar(Database& db, const std::string& sql) {
  auto stmt = db.prepare(sql);
  EXPECT_TRUE(stmt.step()) << sql << ": " << stmt.error();
  return stmt.int_at(0);
}

}  // namespace

class ArchiveFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(test->test_suite_name()) + "-" + test->name();
    for (char& c : name)
      if (c == '/') c = '-';
    path_ = fs::temp_directory_path() / ("attrib-archive-" + std::to_string(::getpid()) + "-" + name + ".db");
    Cleanup();
  }
  void TearDown() override { Cleanup(); }
  void Cleanup() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }
  // The schema version this attributiond writes: that of a new archive.
  static int64_t CurrentVersion() {
    const fs::path fresh =
        fs::temp_directory_path() / ("attrib-archive-" + std::to_string(::getpid()) + "-current-version.db");
    int64_t version = -1;
    {
      auto store = JobStore::open(fresh.string());
      EXPECT_TRUE(store) << store.error().message;
      if (store) version = (*store)->with_db([](Database& db) { return Scalar(db, "PRAGMA user_version"); });
    }
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(fresh.string() + suffix);
    return version;
  }
  fs::path path_;
};

class ArchiveMigrationTest : public ArchiveFileTest, public ::testing::WithParamInterface<int> {
 protected:
  // Loads schema-v<k>.sql into a new file, as the older attributiond left it.
  void LoadDump() {
    const fs::path dump =
        fs::path(attrib::test::fixtures_dir()) / "archive" / ("schema-v" + std::to_string(GetParam()) + ".sql");
    const std::string sql = attrib::read_whole_file(dump).value_or("");
    ASSERT_FALSE(sql.empty()) << "cannot read " << dump;
    auto db = Database::open(path_.string());
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE(db->exec(sql)) << dump;
    EXPECT_EQ(Scalar(*db, "PRAGMA user_version"), GetParam());
  }
};

TEST_P(ArchiveMigrationTest, OpensMigratedWithNothingLost) {
  const int from = GetParam();
  ASSERT_NO_FATAL_FAILURE(LoadDump());
  const int64_t current = CurrentVersion();
  ASSERT_GT(current, from);

  auto opened = JobStore::open(path_.string());
  ASSERT_TRUE(opened) << opened.error().code << ": " << opened.error().message;
  auto& store = *opened;
  store->with_db([&](Database& db) {
    EXPECT_EQ(Scalar(db, "PRAGMA user_version"), current);
    EXPECT_EQ(Scalar(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0) << "no row may point at a missing job";
    EXPECT_EQ(Scalar(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%_v4'"), 0);
    EXPECT_EQ(Scalar(db, "SELECT count(*) FROM jobs"), from >= 3 ? 4 : 3);
    EXPECT_EQ(Scalar(db, "SELECT count(*) FROM jobs WHERE run != 0"), 0);
    // The judged job's evidence: every event and coverage row, as run 0.
    EXPECT_EQ(Scalar(db, "SELECT count(*) FROM events WHERE cluster = 'lab' AND job_id = '4242' AND run = 0"), 9);
    EXPECT_EQ(Scalar(db, "SELECT count(*) FROM coverage WHERE cluster = 'lab' AND job_id = '4242' AND run = 0"), 5);
    EXPECT_EQ(Scalar(db,
                     "SELECT count(*) FROM events WHERE job_id = '4242' AND event_id = 'e3' AND trusted = 1 AND "
                     "time_us IS NOT NULL AND fields LIKE '%\"xid\":79%'"),
              1);
    // History: the old row, or (schema 1, before the table) the row backfilled from the verdict.
    EXPECT_EQ(Scalar(db, "SELECT count(*) FROM history WHERE cluster = 'lab' AND job_id = '4242' AND run = 0"), 1);
    // Owners: filled at open for rows archived before owner_uid (schema 4).
    EXPECT_EQ(Scalar(db, "SELECT owner_uid FROM jobs WHERE job_id = '4242'"), 1000);
    EXPECT_EQ(Scalar(db, "SELECT owner_uid FROM history WHERE job_id = '4242'"), 1000);
  });

  // What later schemas added to the rows: each run's reports (5), the judged attempt's
  // submit time (5), the queued job's slurmdbd outage (6): the scope wait restarts at its end.
  store->with_db([&](Database& db) {
    if (from >= 5) {
      EXPECT_EQ(Scalar(db, "SELECT count(*) FROM jobs WHERE job_id = '4242' AND hooks = ',2@" +
                               std::to_string(kJobEnd + kSecond) + ",'"),
                1);
      EXPECT_EQ(Scalar(db, "SELECT attempt_submit_us FROM jobs WHERE job_id = '4242'"), kJobEnd - 3600 * kSecond);
    }
    if (from >= 6) {
      EXPECT_EQ(Scalar(db, "SELECT accounting_back_us - accounting_down_us FROM jobs WHERE job_id = '4250'"),
                20 * kSecond);
    }
  });
  // The judged job's raw evidence (schema 7 on): the files of the bundle its verdict was
  // made from, unpacked as archived.
  auto evidence = store->evidence({"lab", "4242", 0});
  ASSERT_TRUE(evidence) << evidence.error().message;
  if (from >= 7) {
    ASSERT_TRUE(evidence->has_value());
    EXPECT_TRUE((*evidence)->complete);
    auto files = attrib::common::unpack_evidence((*evidence)->blob);
    ASSERT_TRUE(files) << files.error().message;
    const fs::path bundle = fs::path(attrib::test::fixtures_dir()) / "xid79_nccl_timeouts";
    for (const char* path : {"job.json", "gpu001/app.log", "gpu001/slurm.log", "gpu002/app.log", "gpu017/kernel.log",
                             "gpu017/syslog.log"}) {
      ASSERT_EQ(files->count(path), 1u) << path;
      EXPECT_EQ(files->at(path), attrib::read_whole_file(bundle / path).value_or("")) << path;
    }
    EXPECT_EQ(files->size(), 6u);
  } else {
    EXPECT_FALSE(evidence->has_value());
  }

  // The judged job: done, its verdict readable as it was archived.
  auto judged = store->lookup("lab", "4242");
  ASSERT_TRUE(judged && judged->has_value());
  EXPECT_EQ((*judged)->status, "done");
  EXPECT_EQ((*judged)->key.run, 0);
  EXPECT_EQ((*judged)->runs, 1);
  EXPECT_EQ((*judged)->uid, 1000u);
  EXPECT_EQ((*judged)->user, "alice");
  ASSERT_TRUE((*judged)->verdict_json.has_value());
  auto json = nlohmann::json::parse(*(*judged)->verdict_json, nullptr, false);
  ASSERT_FALSE(json.is_discarded());
  auto verdict = attrib::verdict_from_json(json);
  ASSERT_TRUE(verdict) << verdict.error().message;
  EXPECT_EQ(verdict->job_id, "4242");
  EXPECT_EQ(verdict->domain, "GPU_HARDWARE");
  ASSERT_TRUE(verdict->root_cause.has_value());
  EXPECT_EQ(verdict->root_cause->rule, "gpu.fallen_off_bus");
  EXPECT_EQ(verdict->root_cause->event.node, "gpu017");
  EXPECT_EQ(verdict->recommended_action, "DRAIN_NODE");
  EXPECT_EQ(verdict->coverage.size(), 5u);

  // Its history row blames the node and GPU, and its owner lists it (no one else does).
  auto blame = store->with_read_db([](Database& db) { return attrib::store::job_blame(db, {"lab", "4242", 0}); });
  ASSERT_TRUE(blame && blame->has_value()) << (blame ? "no history row" : blame.error().message);
  EXPECT_EQ((*blame)->node, "gpu017");
  EXPECT_EQ((*blame)->gpu, "0000:3b:00.0");
  EXPECT_EQ((*blame)->rule, "gpu.fallen_off_bus");
  EXPECT_EQ((*blame)->action, "DRAIN_NODE");
  EXPECT_EQ((*blame)->time_us, kJobEnd);
  EXPECT_TRUE((*blame)->trusted);
  auto listed = [&](uint32_t owner) {
    attrib::store::VerdictQuery query;
    query.owner = owner;
    auto page = store->with_read_db([&](Database& db) { return attrib::store::verdict_page(db, query); });
    EXPECT_TRUE(page) << page.error().message;
    std::vector<std::string> jobs;
    if (page)
      for (const auto& row : page->rows) jobs.push_back(row.job_id);
    return jobs;
  };
  EXPECT_EQ(listed(1000), std::vector<std::string>{"4242"});
  EXPECT_TRUE(listed(1001).empty());

  // Remediation decisions (schema 2 on) survive: the node is not drained a second time.
  if (from >= 2) {
    auto decisions =
        store->with_read_db([](Database& db) { return attrib::store::remediation_history(db, "gpu017", 0); });
    ASSERT_TRUE(decisions) << decisions.error().message;
    ASSERT_EQ(decisions->size(), 1u);
    EXPECT_EQ(decisions->front().id, 1);
    EXPECT_EQ(decisions->front().job_id, "4242");
    EXPECT_EQ(decisions->front().action, "would_drain");
    EXPECT_EQ(decisions->front().reason, "attrib: job 4242 rule gpu.fallen_off_bus GPU_HARDWARE");
    auto decided =
        store->with_db([](Database& db) { return attrib::store::remediation_decided(db, "lab", "4242", "gpu017"); });
    ASSERT_TRUE(decided);
    EXPECT_TRUE(*decided);
  }

  // The opted-out job stays done, without a verdict, with why.
  auto opted_out = store->lookup("lab", "4244");
  ASSERT_TRUE(opted_out && opted_out->has_value());
  EXPECT_EQ((*opted_out)->status, "done");
  EXPECT_FALSE((*opted_out)->verdict_json.has_value());
  EXPECT_EQ((*opted_out)->last_error, "opted out by the user (--attrib=off)");

  // The dead-lettered job (schema 3 on) is still listed for attrib-show --failed.
  auto failed = store->failed_jobs(10);
  ASSERT_TRUE(failed) << failed.error().message;
  if (from >= 3) {
    ASSERT_EQ(failed->size(), 1u);
    EXPECT_EQ(failed->front().key.job_id, "4246");
    EXPECT_EQ(failed->front().failures, 10);
    EXPECT_EQ(failed->front().user, "dave");
    EXPECT_EQ((*store->lookup("lab", "4246"))->status, "failed");
  } else {
    EXPECT_TRUE(failed->empty());
  }

  // The sweep leaves the attempts the old archive knew alone.
  auto known = store->knows_attempt("lab", "4242", kJobEnd - 3600 * kSecond, kJobEnd);
  ASSERT_TRUE(known);
  EXPECT_TRUE(*known);
  // A hook's report re-sent after the upgrade is the attempt already judged, not a new run.
  attrib::v1::JobEnded again;
  again.set_job_id("4242");
  again.set_cluster("lab");
  again.set_hook(attrib::v1::HOOK_KIND_JOBCOMP_SCRIPT);
  again.set_hook_time_us(kJobEnd + kSecond);
  EXPECT_FALSE(*store->enqueue(again, "lab", kJobEnd + 3600 * kSecond));
  EXPECT_EQ((*store->lookup("lab", "4242"))->runs, 1);

  // The queued job is still queued and is attributed: nothing was lost.
  auto queued = store->lookup("lab", "4250");
  ASSERT_TRUE(queued && queued->has_value());
  EXPECT_EQ((*queued)->status, "queued");
  EXPECT_EQ((*queued)->attempts, 1);
  EXPECT_EQ((*queued)->user, "bob");
  EXPECT_EQ(*store->pending_count(), 1);
  auto due = store->next_due(std::numeric_limits<attrib::TimeUs>::max(), {});
  ASSERT_TRUE(due && due->has_value()) << (due ? "nothing due" : due.error().message);
  EXPECT_EQ((*due)->key, (JobKey{"lab", "4250", 0}));
  EXPECT_EQ((*due)->request.node_list(), "gpu[003-004]");
  EXPECT_EQ((*due)->request.uid(), 1001u);
  EXPECT_FALSE((*due)->verdict_json.has_value());
  // Its other hook's report still merges into it.
  attrib::v1::JobEnded jobcomp;
  jobcomp.set_job_id("4250");
  jobcomp.set_hook(attrib::v1::HOOK_KIND_JOBCOMP_SCRIPT);
  jobcomp.set_state("COMPLETED");
  EXPECT_FALSE(*store->enqueue(jobcomp, "lab", kJobEnd + 3600 * kSecond));
  EXPECT_EQ((*store->lookup("lab", "4250"))->runs, 1);

  attrib::Verdict judged_now;
  judged_now.job_id = "4250";
  judged_now.cluster = "lab";
  judged_now.terminal_state = "COMPLETED";
  judged_now.domain = "NONE";
  judged_now.recommended_action = "NONE";
  const JobKey run0{"lab", "4250", 0};
  ASSERT_TRUE(store->archive(run0, judged_now, {}, kJobEnd + 3700 * kSecond, kJobEnd - 600 * kSecond));
  ASSERT_TRUE(store->mark_done(run0, kJobEnd + 3701 * kSecond));
  EXPECT_EQ((*store->lookup("lab", "4250"))->status, "done");
  EXPECT_EQ(*store->pending_count(), 0);
  EXPECT_EQ(store->with_db([](Database& db) { return Scalar(db, "SELECT count(*) FROM history"); }), 2);

  // Opened again: nothing to migrate, nothing changes.
  store.reset();
  auto reopened = JobStore::open(path_.string());
  ASSERT_TRUE(reopened) << reopened.error().message;
  EXPECT_EQ((*reopened)->with_db([](Database& db) { return Scalar(db, "SELECT count(*) FROM history"); }), 2);
  EXPECT_EQ((*(*reopened)->lookup("lab", "4242"))->status, "done");
}

INSTANTIATE_TEST_SUITE_P(EarlierSchemas, ArchiveMigrationTest, ::testing::Range(1, 10),
                         [](const ::testing::TestParamInfo<int>& info) { return "v" + std::to_string(info.param); });

// An archive a newer attributiond wrote (one migration more than this one knows) is
// refused, and left as it was: this version cannot know what the newer schema means.
TEST_F(ArchiveFileTest, ANewerSchemaIsRefusedAndLeftAlone) {
  const int64_t current = CurrentVersion();
  ASSERT_GT(current, 0);
  {
    auto store = JobStore::open(path_.string());
    ASSERT_TRUE(store) << store.error().message;
    attrib::v1::JobEnded job;
    job.set_job_id("1");
    ASSERT_TRUE(*(*store)->enqueue(job, "lab", 100));
  }
  {
    auto db = Database::open(path_.string());
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE(db->exec(
        "ALTER TABLE jobs ADD COLUMN from_the_future TEXT; PRAGMA user_version=" + std::to_string(current + 1) + ";"));
  }

  auto refused = JobStore::open(path_.string());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "DB_E_MIGRATE");
  EXPECT_NE(refused.error().message.find("newer than this attributiond"), std::string::npos) << refused.error().message;
  EXPECT_NE(refused.error().message.find("version " + std::to_string(current + 1)), std::string::npos)
      << refused.error().message;

  auto db = Database::open(path_.string());
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_EQ(Scalar(*db, "PRAGMA user_version"), current + 1);
  EXPECT_EQ(Scalar(*db, "SELECT count(*) FROM jobs WHERE job_id = '1' AND status = 'queued'"), 1);
}
