#include "attributiond/store/job_store.h"

#include <filesystem>
#include <future>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/verdict.h"

namespace fs = std::filesystem;
using attrib::store::JobStore;

class JobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("attrib-store-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    Cleanup();
  }
  void TearDown() override { Cleanup(); }
  void Cleanup() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }
  std::unique_ptr<JobStore> Open() {
    auto store = JobStore::open(path_.string());
    EXPECT_TRUE(store) << store.error().message;
    return std::move(*store);
  }
  static attrib::v1::JobEnded Job(const std::string& id) {
    attrib::v1::JobEnded m;
    m.set_job_id(id);
    m.set_node_list("n[1-2]");
    return m;
  }
  // EpilogSlurmctld's report of one attempt of job `id`, its hook run at hook_time.
  static attrib::v1::JobEnded EpilogReport(const std::string& id, int64_t hook_time) {
    attrib::v1::JobEnded m = Job(id);
    m.set_hook(attrib::v1::HOOK_KIND_EPILOG_SLURMCTLD);
    m.set_hook_time_us(hook_time);
    return m;
  }

  fs::path path_;
};

TEST_F(JobStoreTest, EnqueueIsDurableAndDeduplicated) {
  {
    auto store = Open();
    EXPECT_TRUE(*store->enqueue(Job("1"), "lab", 100));
    EXPECT_FALSE(*store->enqueue(Job("1"), "lab", 200));   // the epilog may retry
    EXPECT_TRUE(*store->enqueue(Job("1"), "other", 200));  // same id, other cluster
  }
  auto reopened = Open();  // a restarted daemon sees what was accepted
  EXPECT_EQ(*reopened->pending_count(), 2);
  auto record = reopened->lookup("lab", "1");
  ASSERT_TRUE(record && record->has_value());
  EXPECT_EQ((*record)->status, "queued");
}

// The spool drain queues a burst at once: what each would have been alone, one commit.
TEST_F(JobStoreTest, EnqueueAllQueuesEachAsEnqueueWouldInOneCommit) {
  {
    auto store = Open();
    EXPECT_TRUE(*store->enqueue(Job("1"), "lab", 100));
    auto ctld = Job("2");
    ctld.set_cluster("lab");
    ctld.set_hook(attrib::v1::HOOK_KIND_EPILOG_SLURMCTLD);
    auto jobcomp = ctld;  // the same attempt's other hook: joins the run queued just before it
    jobcomp.set_hook(attrib::v1::HOOK_KIND_JOBCOMP_SCRIPT);
    jobcomp.set_state("FAILED");
    auto again = Job("1");
    again.set_cluster("lab");
    auto other = Job("1");
    other.set_cluster("other");
    auto queued = store->enqueue_all({ctld, jobcomp, again, other}, 200);
    ASSERT_TRUE(queued) << queued.error().message;
    EXPECT_EQ(*queued, (std::vector<bool>{true, false, false, true}));
    EXPECT_TRUE(store->enqueue_all({}, 300));
  }
  auto reopened = Open();  // committed: a restarted daemon sees the batch
  EXPECT_EQ(*reopened->pending_count(), 3);
  auto due = reopened->next_due(1000, {{"lab", "1"}, {"other", "1"}});
  ASSERT_TRUE(due && due->has_value());
  EXPECT_EQ((*due)->key.job_id, "2");
  EXPECT_EQ((*due)->request.state(), "FAILED");  // the second report filled what the first lacked
}

TEST_F(JobStoreTest, NextDueSkipsBusyAndFutureJobs) {
  auto store = Open();
  store->enqueue(Job("1"), "lab", 100);
  store->enqueue(Job("2"), "lab", 200);
  auto first = store->next_due(1000, {});
  ASSERT_TRUE(first && first->has_value());
  EXPECT_EQ((*first)->key.job_id, "1");
  EXPECT_EQ((*first)->request.node_list(), "n[1-2]");
  auto second = store->next_due(1000, {{"lab", "1"}});
  ASSERT_TRUE(second && second->has_value());
  EXPECT_EQ((*second)->key.job_id, "2");

  ASSERT_TRUE(store->reschedule({"lab", "1"}, 5000, "accounting record not final yet"));
  ASSERT_TRUE(store->reschedule({"lab", "2"}, 5000, "slurmdbd down"));
  auto none = store->next_due(1000, {});
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  auto later = store->next_due(5000, {});
  ASSERT_TRUE(later && later->has_value());
  EXPECT_EQ((*later)->attempts, 1);
  auto record = store->lookup("lab", "2");
  EXPECT_EQ((*record)->last_error, "slurmdbd down");
}

// A batch of comments written together is marked done in one transaction: the archived
// runs are done; a run with no verdict yet is not (its comment cannot have been written).
TEST_F(JobStoreTest, MarkDoneFinishesSeveralArchivedRunsAtOnce) {
  auto store = Open();
  attrib::Verdict verdict;
  verdict.cluster = "lab";
  verdict.domain = "NONE";
  for (const char* id : {"11", "12", "13"}) store->enqueue(Job(id), "lab", 100);
  for (const char* id : {"11", "12"}) {
    verdict.job_id = id;
    ASSERT_TRUE(store->archive({"lab", id}, verdict, {}, 200));
  }
  ASSERT_TRUE(store->mark_all_done({{"lab", "11"}, {"lab", "12"}, {"lab", "13"}}, 300));
  EXPECT_EQ((*store->lookup("lab", "11"))->status, "done");
  EXPECT_EQ((*store->lookup("lab", "12"))->status, "done");
  EXPECT_EQ((*store->lookup("lab", "13"))->status, "queued");
  EXPECT_EQ(*store->pending_count(), 1);
}

// The archive and the done marks commit without waiting for the disk (work redone when a
// power cut loses them); the connection is back to FULL after each, so the queue's inserts
// keep their fsync.
TEST_F(JobStoreTest, ArchiveAndDoneMarksRelaxTheSyncOnlyForThemselves) {
  auto store = Open();
  auto synchronous = [&] {
    return store->with_db([](attrib::store::Database& db) {
      auto stmt = db.prepare("PRAGMA synchronous");
      return stmt.step() ? stmt.int_at(0) : -1;
    });
  };
  EXPECT_EQ(synchronous(), 2) << "FULL";
  store->enqueue(Job("21"), "lab", 100);
  attrib::Verdict verdict;
  verdict.job_id = "21";
  verdict.cluster = "lab";
  verdict.domain = "NONE";
  ASSERT_TRUE(store->archive({"lab", "21"}, verdict, {}, 200));
  EXPECT_EQ(synchronous(), 2);
  ASSERT_TRUE(store->mark_done({"lab", "21"}, 300));
  EXPECT_EQ(synchronous(), 2);
  store->with_db([&](attrib::store::Database& db) {
    attrib::store::RelaxedSync relaxed(db);
    auto stmt = db.prepare("PRAGMA synchronous");
    ASSERT_TRUE(stmt.step());
    EXPECT_EQ(stmt.int_at(0), 1) << "NORMAL inside";
  });
  EXPECT_EQ(synchronous(), 2);
}

TEST_F(JobStoreTest, ArchiveKeepsTheFirstVerdictAndMarkDoneFinishes) {
  auto store = Open();
  store->enqueue(Job("7"), "lab", 100);
  attrib::Verdict verdict;
  verdict.job_id = "7";
  verdict.cluster = "lab";
  verdict.domain = "GPU_HARDWARE";
  verdict.comment = "attrib: GPU_HARDWARE node=n2";
  attrib::Event event;
  event.id = "e1";
  event.kind = "gpu.xid";
  event.node = "n2";
  event.source = "kernel";
  event.line = "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";
  event.fields = {{"xid", 79}};
  verdict.coverage.push_back({"n2", "kernel", attrib::CoverageStatus::Ok, 10, 1, 0, 1, ""});
  ASSERT_TRUE(store->archive({"lab", "7"}, verdict, {event}, 300));

  attrib::Verdict second = verdict;
  second.domain = "NONE";
  ASSERT_TRUE(store->archive({"lab", "7"}, second, {event}, 400));  // a retry after a crash
  auto record = store->lookup("lab", "7");
  ASSERT_TRUE(record && record->has_value());
  EXPECT_EQ((*record)->status, "archived");
  ASSERT_TRUE((*record)->verdict_json.has_value());
  EXPECT_NE((*record)->verdict_json->find("GPU_HARDWARE"), std::string::npos);

  auto due = store->next_due(1000, {});  // comment still to write: still due
  ASSERT_TRUE(due && due->has_value());
  EXPECT_TRUE((*due)->verdict_json.has_value());

  ASSERT_TRUE(store->mark_done({"lab", "7"}, 500));
  EXPECT_EQ((*store->lookup("lab", "7"))->status, "done");
  EXPECT_EQ(*store->pending_count(), 0);
  EXPECT_FALSE(store->next_due(1000, {})->has_value());
}

TEST_F(JobStoreTest, UnknownJobIsEmpty) {
  auto store = Open();
  auto record = store->lookup("lab", "404");
  ASSERT_TRUE(record);
  EXPECT_FALSE(record->has_value());
}

TEST_F(JobStoreTest, UnopenablePathIsAnError) {
  auto store = JobStore::open("/nonexistent-dir/x/attrib.db");
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, "DB_E_OPEN");
}

TEST_F(JobStoreTest, AToolOpensOnlyACurrentArchiveAndNeverCreatesOrMigratesOne) {
  using attrib::store::StoreAccess;
  auto missing = JobStore::open(path_.string(), StoreAccess::Tool);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "DB_E_OPEN");
  EXPECT_FALSE(fs::exists(path_)) << "a tool created the archive";

  {  // an archive an older daemon left: three migrations
    auto db = attrib::store::Database::open(path_.string());
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE(db->exec("CREATE TABLE jobs (x INTEGER); PRAGMA user_version=3;"));
  }
  auto old = JobStore::open(path_.string(), StoreAccess::Tool);
  ASSERT_FALSE(old);
  EXPECT_EQ(old.error().code, "DB_E_SCHEMA");
  EXPECT_NE(old.error().message.find("schema version 3"), std::string::npos) << old.error().message;
  EXPECT_NE(old.error().message.find("start the attributiond"), std::string::npos) << old.error().message;
  auto db = attrib::store::Database::open_read_only(path_.string());
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->schema_version(), 3) << "the tool migrated the archive";

  Cleanup();
  Open()->enqueue(Job("7"), "lab", 100);  // the daemon makes it current
  auto tool = JobStore::open(path_.string(), StoreAccess::Tool);
  ASSERT_TRUE(tool) << tool.error().message;
  auto record = (*tool)->lookup("lab", "7");
  ASSERT_TRUE(record && record->has_value());
}

TEST_F(JobStoreTest, AnArchivedVerdictNamesItsRun) {
  auto store = Open();
  attrib::Verdict verdict;
  verdict.job_id = "7";
  verdict.cluster = "lab";
  verdict.domain = "NONE";
  for (int run = 0; run < 2; ++run) {  // the id reported again after its verdict: run 1
    store->enqueue(EpilogReport("7", 100 + run), "lab", 100 + run);
    auto due = store->next_due(1000, {});
    ASSERT_TRUE(due && due->has_value());
    ASSERT_EQ((*due)->key.run, run);
    ASSERT_TRUE(store->archive((*due)->key, verdict, {}, 300));
    ASSERT_TRUE(store->mark_done((*due)->key, 400));
    auto record = store->lookup("lab", "7", run);
    ASSERT_TRUE(record && record->has_value() && (*record)->verdict_json);
    auto parsed = attrib::verdict_from_json(nlohmann::json::parse(*(*record)->verdict_json));
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(parsed->run, run);
  }
}

TEST_F(JobStoreTest, SecondHookFillsWhatTheFirstLacked) {
  auto store = Open();
  attrib::v1::JobEnded jobcomp = Job("8");
  jobcomp.set_state("FAILED");  // jobcomp/script knows the state, not the SPANK options
  attrib::v1::JobEnded epilog = Job("8");
  epilog.set_node_list("n[1-3]");
  (*epilog.mutable_spank_options())["attrib_attrib"] = "off";
  EXPECT_TRUE(*store->enqueue(jobcomp, "lab", 100));
  EXPECT_FALSE(*store->enqueue(epilog, "lab", 110));
  auto due = store->next_due(1000, {});
  ASSERT_TRUE(due && due->has_value());
  EXPECT_EQ((*due)->request.state(), "FAILED");
  EXPECT_EQ((*due)->request.node_list(), "n[1-2]") << "the first report's fields win";
  EXPECT_EQ((*due)->request.spank_options().at("attrib_attrib"), "off");
}

TEST_F(JobStoreTest, TheSecondHooksReportSentTwiceIsStillTheSameAttempt) {
  // jobcomp/script at 100, EpilogSlurmctld at 105; the stored request keeps the first
  // report's hook time, and the epilog's spool file is sent again (two hooks re-sending
  // the same spool, e2e spool_resend): still one run, until a report at a new time.
  auto store = Open();
  attrib::v1::JobEnded jobcomp = Job("14");
  jobcomp.set_hook(attrib::v1::HOOK_KIND_JOBCOMP_SCRIPT);
  jobcomp.set_hook_time_us(100);
  attrib::v1::JobEnded epilog = Job("14");
  epilog.set_hook(attrib::v1::HOOK_KIND_EPILOG_SLURMCTLD);
  epilog.set_hook_time_us(105);
  EXPECT_TRUE(*store->enqueue(jobcomp, "lab", 100));
  EXPECT_FALSE(*store->enqueue(epilog, "lab", 105));
  EXPECT_FALSE(*store->enqueue(epilog, "lab", 106));
  EXPECT_FALSE(*store->enqueue(jobcomp, "lab", 107));
  EXPECT_EQ((*store->lookup("lab", "14", std::nullopt))->runs, 1);
  epilog.set_hook_time_us(900);  // the requeued job's next attempt
  EXPECT_TRUE(*store->enqueue(epilog, "lab", 900));
}

TEST_F(JobStoreTest, TwoRunsOfOneAttemptJudgedAtOnceAreArchivedOnce) {
  // Two workers judged two runs of the same attempt (same accounting row) at once: the
  // archive keeps the first, drops the second run and says so.
  auto store = Open();
  attrib::v1::JobEnded first = Job("15");
  first.set_hook_time_us(100);
  attrib::v1::JobEnded second = Job("15");
  second.set_hook_time_us(200);
  EXPECT_TRUE(*store->enqueue(first, "lab", 100));
  EXPECT_TRUE(*store->enqueue(second, "lab", 200));
  attrib::Verdict verdict;
  verdict.job_id = "15";
  ASSERT_TRUE(store->archive({"lab", "15", 0}, verdict, {}, 300, 42));
  auto again = store->archive({"lab", "15", 1}, verdict, {}, 301, 42);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, attrib::kQueueSameAttempt);
  EXPECT_EQ((*store->lookup("lab", "15", std::nullopt))->key.run, 0) << "run 1 is gone";
  // A run of another attempt (another row) archives as usual.
  EXPECT_TRUE(*store->enqueue(second, "lab", 400));
  EXPECT_TRUE(store->archive({"lab", "15", 1}, verdict, {}, 401, 43));
}

TEST_F(JobStoreTest, EveryComponentsReportsOfAHetJobFoldIntoOneRunWithAllTheirNodes) {
  auto store = Open();
  // Both hooks of both components of het job 12 (component 1 on n3), at their own times.
  std::vector<attrib::v1::JobEnded> reports;
  for (uint32_t offset : {0U, 1U})
    for (auto kind : {attrib::v1::HOOK_KIND_JOBCOMP_SCRIPT, attrib::v1::HOOK_KIND_EPILOG_SLURMCTLD}) {
      attrib::v1::JobEnded report = Job("12");
      report.set_node_list(offset == 0 ? "n1" : "n3");
      report.set_het_job_offset(offset);
      report.set_hook(kind);
      report.set_hook_time_us(1000 + offset * 10 + kind);
      reports.push_back(report);
    }
  EXPECT_TRUE(*store->enqueue(reports[0], "lab", 100));
  for (size_t i = 1; i < reports.size(); ++i) EXPECT_FALSE(*store->enqueue(reports[i], "lab", 100)) << i;
  auto record = store->lookup("lab", "12", std::nullopt);
  ASSERT_TRUE(record && record->has_value());
  EXPECT_EQ((*record)->runs, 1);
  auto due = store->next_due(1000, {});
  ASSERT_TRUE(due && due->has_value());
  EXPECT_EQ((*due)->request.node_list(), "n1,n3");
  // The same component's hook again at another time: the het job's next attempt.
  attrib::v1::JobEnded again = reports[2];
  again.set_hook_time_us(5000);
  EXPECT_TRUE(*store->enqueue(again, "lab", 200));
}

TEST_F(JobStoreTest, EveryNodesSlurmdEpilogReportIsOneAttemptWithAllTheNodes) {
  // A two-node job reported by each node's slurmd Epilog (naming only its node), then by
  // EpilogSlurmctld with the whole list, each at its own time: one run. Taking the second
  // node's report for a later attempt queued the job twice (found on the real cluster).
  auto store = Open();
  auto slurmd_report = [](const std::string& node, int64_t time) {
    attrib::v1::JobEnded report = Job("16");
    report.set_hook(attrib::v1::HOOK_KIND_EPILOG_SLURMD);
    report.set_node_list(node);
    report.set_hook_time_us(time);
    return report;
  };
  EXPECT_TRUE(*store->enqueue(slurmd_report("n2", 1000), "lab", 100));
  EXPECT_FALSE(*store->enqueue(slurmd_report("n1", 1010), "lab", 101));
  attrib::v1::JobEnded controller = Job("16");
  controller.set_hook(attrib::v1::HOOK_KIND_EPILOG_SLURMCTLD);
  controller.set_node_list("n[1-2]");
  controller.set_hook_time_us(1020);
  EXPECT_FALSE(*store->enqueue(controller, "lab", 102));
  EXPECT_FALSE(*store->enqueue(slurmd_report("n1", 1010), "lab", 103)) << "n1's spool sent again";
  EXPECT_EQ((*store->lookup("lab", "16", std::nullopt))->runs, 1);
  auto due = store->next_due(1000, {});
  ASSERT_TRUE(due && due->has_value());
  EXPECT_EQ((*due)->request.node_list(), "n2,n1,n[1-2]");
  // A node's Epilog at another time is the requeued job's next attempt.
  EXPECT_TRUE(*store->enqueue(slurmd_report("n1", 9000), "lab", 200));
}

// A reader holding the read connection with a read transaction open (a listing under way)
// must not delay the queue: the job is durably queued meanwhile, and the open snapshot
// does not see it. With reads on the queue's own connection and lock, the insert waited
// for the read to finish.
TEST_F(JobStoreTest, AnOpenReadDoesNotBlockTheQueue) {
  auto store = Open();
  ASSERT_TRUE(*store->enqueue(Job("1"), "lab", 100));
  bool queued_during_read = false;
  int64_t seen_by_the_read = -1;
  std::future<attrib::Result<bool>> queued;
  store->with_read_db([&](attrib::store::Database& db) {
    ASSERT_TRUE(db.exec("BEGIN"));
    auto count = db.prepare("SELECT count(*) FROM jobs");
    ASSERT_TRUE(count.step());  // the read transaction now holds its snapshot
    queued = std::async(std::launch::async, [&] { return store->enqueue(Job("2"), "lab", 200); });
    queued_during_read = queued.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
    auto again = db.prepare("SELECT count(*) FROM jobs");
    if (again.step()) seen_by_the_read = again.int_at(0);
    ASSERT_TRUE(db.exec("COMMIT"));
  });
  EXPECT_TRUE(queued_during_read) << "the queue insert waited for a reader";
  auto result = queued.get();
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(*result);
  EXPECT_EQ(seen_by_the_read, 1) << "the reader keeps its snapshot";
  EXPECT_EQ(*store->pending_count(), 2);
}

// A job id reported again after its verdict is a new run (a requeued job's next attempt,
// a reused id): each run has its own row and verdict; lookup serves the newest or the one
// asked for; a run found to be a second report of an attributed attempt is dropped.
TEST_F(JobStoreTest, AReportAfterTheVerdictIsANewRunWithItsOwnVerdict) {
  auto store = Open();
  auto epilog = [](int64_t hook_time) { return EpilogReport("8", hook_time); };
  ASSERT_TRUE(*store->enqueue(epilog(100), "lab", 100));
  attrib::Verdict first;
  first.job_id = "8";
  first.domain = "GPU_HARDWARE";
  const attrib::store::JobKey run0{"lab", "8", 0};
  ASSERT_TRUE(store->archive(run0, first, {}, 200, /*attempt_submit=*/50));
  ASSERT_TRUE(store->mark_done(run0, 210));
  EXPECT_FALSE(*store->enqueue(epilog(100), "lab", 220));  // the same report again

  ASSERT_TRUE(*store->enqueue(epilog(300), "lab", 300));  // attempt 2 ended
  attrib::v1::JobEnded jobcomp = Job("8");
  jobcomp.set_hook(attrib::v1::HOOK_KIND_JOBCOMP_SCRIPT);
  EXPECT_FALSE(*store->enqueue(jobcomp, "lab", 310));  // ... and its other hook merges
  auto newest = store->lookup("lab", "8");
  ASSERT_TRUE(newest && newest->has_value());
  EXPECT_EQ((*newest)->key.run, 1);
  EXPECT_EQ((*newest)->runs, 2);
  EXPECT_EQ((*newest)->status, "queued");
  attrib::Verdict second;
  second.job_id = "8";
  second.domain = "APPLICATION";
  const attrib::store::JobKey run1{"lab", "8", 1};
  EXPECT_FALSE(store->same_attempt(run1, 260)->has_value());  // another row: a new attempt
  ASSERT_TRUE(store->archive(run1, second, {}, 400, 260));
  auto old = store->lookup("lab", "8", 0);
  ASSERT_TRUE(old && old->has_value());
  EXPECT_NE((*old)->verdict_json->find("GPU_HARDWARE"), std::string::npos);
  EXPECT_NE((*store->lookup("lab", "8"))->verdict_json->find("APPLICATION"), std::string::npos);

  // A report that looked like a third attempt but reads attempt 1's row (submitted at 50):
  // folded into run 0.
  ASSERT_TRUE(*store->enqueue(epilog(500), "lab", 500));
  const attrib::store::JobKey run2{"lab", "8", 2};
  auto same = store->same_attempt(run2, 50);
  ASSERT_TRUE(same && same->has_value());
  EXPECT_EQ(**same, 0);
  ASSERT_TRUE(store->drop_second_report(run2));
  EXPECT_EQ((*store->lookup("lab", "8"))->runs, 2);
  EXPECT_FALSE(store->lookup("lab", "8", 2)->has_value());
}

// An archive written by the schema before runs (version 4) opens with every row as run 0.
TEST_F(JobStoreTest, AVersion4ArchiveUpgradesWithEveryJobAsRunZero) {
  {
    auto db = attrib::store::Database::open(path_.string());
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE(db->exec(R"sql(
CREATE TABLE jobs (cluster TEXT NOT NULL, job_id TEXT NOT NULL, status TEXT NOT NULL, request BLOB NOT NULL,
  received_us INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_attempt_us INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '', verdict_json TEXT, domain TEXT, archived_us INTEGER, done_us INTEGER,
  failures INTEGER NOT NULL DEFAULT 0, failed_us INTEGER, owner_uid INTEGER, PRIMARY KEY (cluster, job_id));
CREATE TABLE events (cluster TEXT NOT NULL, job_id TEXT NOT NULL, event_id TEXT NOT NULL, kind TEXT NOT NULL,
  rule TEXT NOT NULL, node TEXT NOT NULL, source TEXT NOT NULL, time_us INTEGER, seq INTEGER NOT NULL,
  trusted INTEGER NOT NULL, line TEXT NOT NULL, fields TEXT NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY (cluster, job_id, event_id), FOREIGN KEY (cluster, job_id) REFERENCES jobs (cluster, job_id));
CREATE TABLE coverage (cluster TEXT NOT NULL, job_id TEXT NOT NULL, node TEXT NOT NULL, source TEXT NOT NULL,
  status TEXT NOT NULL, lines INTEGER NOT NULL, events INTEGER NOT NULL, detail TEXT NOT NULL,
  PRIMARY KEY (cluster, job_id, node, source), FOREIGN KEY (cluster, job_id) REFERENCES jobs (cluster, job_id));
CREATE TABLE history (cluster TEXT NOT NULL, job_id TEXT NOT NULL, time_us INTEGER NOT NULL,
  user_name TEXT NOT NULL, uid INTEGER NOT NULL, state TEXT NOT NULL, domain TEXT NOT NULL, rule TEXT NOT NULL,
  action TEXT NOT NULL, node TEXT NOT NULL, gpu TEXT NOT NULL, affected_nodes TEXT NOT NULL,
  trusted INTEGER NOT NULL, owner_uid INTEGER, PRIMARY KEY (cluster, job_id),
  FOREIGN KEY (cluster, job_id) REFERENCES jobs (cluster, job_id));
CREATE TABLE remediation (id INTEGER PRIMARY KEY AUTOINCREMENT, time_us INTEGER NOT NULL, cluster TEXT NOT NULL,
  node TEXT NOT NULL, job_id TEXT NOT NULL, rule TEXT NOT NULL, action TEXT NOT NULL, reason TEXT NOT NULL,
  detail TEXT NOT NULL);
INSERT INTO jobs (cluster, job_id, status, request, received_us, verdict_json, domain, archived_us, owner_uid)
  VALUES ('lab', '9', 'done', x'', 100, '{"domain":"NONE"}', 'NONE', 200, 1000);
INSERT INTO events VALUES ('lab', '9', 'e1', 'gpu.xid', 'nvidia.xid', 'n1', 'kernel', 150, 1, 1, 'l', '{}', 1);
INSERT INTO coverage VALUES ('lab', '9', 'n1', 'kernel', 'ok', 10, 1, '');
INSERT INTO history VALUES ('lab', '9', 150, 'alice', 1000, 'FAILED', 'NONE', '', 'NONE', '', '', '', 0, 1000);
PRAGMA user_version = 4;
)sql"));
  }
  auto store = Open();
  auto record = store->lookup("lab", "9");
  ASSERT_TRUE(record && record->has_value());
  EXPECT_EQ((*record)->key.run, 0);
  EXPECT_EQ((*record)->runs, 1);
  EXPECT_EQ((*record)->status, "done");
  auto counts = store->with_db([](attrib::store::Database& db) {
    auto stmt = db.prepare(
        "SELECT (SELECT count(*) FROM events WHERE run = 0), (SELECT count(*) FROM coverage WHERE run = 0), "
        "(SELECT count(*) FROM history WHERE run = 0), (SELECT count(*) FROM sqlite_master WHERE name LIKE '%_v4')");
    stmt.step();
    return std::vector<int64_t>{stmt.int_at(0), stmt.int_at(1), stmt.int_at(2), stmt.int_at(3)};
  });
  EXPECT_EQ(counts, (std::vector<int64_t>{1, 1, 1, 0}));
  // A hook's report of job 9 now is of the attempt already judged; the sweep's (an attempt
  // the archive does not know) is its second run.
  EXPECT_FALSE(*store->enqueue(Job("9"), "lab", 300));
  attrib::v1::JobEnded swept = Job("9");
  swept.set_hook(attrib::v1::HOOK_KIND_SWEEP);
  EXPECT_TRUE(*store->enqueue(swept, "lab", 310));
  EXPECT_EQ((*store->lookup("lab", "9"))->key.run, 1);
}

// Reports of one attempt merge into one run (EpilogSlurmctld and jobcomp/script; a retry
// of either); the same hook again at another time is the next attempt's, even while the
// first attempt still waits for its verdict (a requeued job that ran again quickly).
TEST_F(JobStoreTest, ASecondReportOfTheSameHookAtAnotherTimeIsTheNextAttempt) {
  auto store = Open();
  auto report = [](attrib::v1::HookKind hook, int64_t hook_time) {
    attrib::v1::JobEnded m = Job("5");
    m.set_hook(hook);
    m.set_hook_time_us(hook_time);
    return m;
  };
  EXPECT_TRUE(*store->enqueue(report(attrib::v1::HOOK_KIND_JOBCOMP_SCRIPT, 1000), "lab", 1));
  EXPECT_FALSE(*store->enqueue(report(attrib::v1::HOOK_KIND_EPILOG_SLURMCTLD, 1001), "lab", 2));
  EXPECT_FALSE(*store->enqueue(report(attrib::v1::HOOK_KIND_JOBCOMP_SCRIPT, 1000), "lab", 3));  // re-sent
  EXPECT_EQ((*store->lookup("lab", "5"))->runs, 1);
  EXPECT_TRUE(*store->enqueue(report(attrib::v1::HOOK_KIND_JOBCOMP_SCRIPT, 9000), "lab", 4));  // attempt 2
  EXPECT_FALSE(*store->enqueue(report(attrib::v1::HOOK_KIND_EPILOG_SLURMCTLD, 9001), "lab", 5));
  auto newest = store->lookup("lab", "5");
  ASSERT_TRUE(newest && newest->has_value());
  EXPECT_EQ((*newest)->runs, 2);
  EXPECT_EQ((*newest)->key.run, 1);
  EXPECT_EQ(*store->pending_count(), 2);
}

// A report whose attempt slurmdbd's rows do not show yet waits for the id's earlier runs
// that are still to be judged (pipeline::attribute_once), so that two reports read onto
// one row do not race to the archive: a queued earlier run counts; a judged one, a
// dead-lettered one and a later one do not.
TEST_F(JobStoreTest, AnEarlierRunWaitsUntilItIsJudgedOrGivenUp) {
  auto store = Open();
  auto report = [](int64_t hook_time) { return EpilogReport("16", hook_time); };
  ASSERT_TRUE(*store->enqueue(report(100), "lab", 100));
  ASSERT_TRUE(*store->enqueue(report(200), "lab", 200));  // the next attempt's, by the look of it
  const attrib::store::JobKey run0{"lab", "16", 0}, run1{"lab", "16", 1}, run2{"lab", "16", 2};
  EXPECT_FALSE(*store->earlier_run_waiting(run0));
  EXPECT_TRUE(*store->earlier_run_waiting(run1));
  attrib::Verdict verdict;
  verdict.job_id = "16";
  ASSERT_TRUE(store->archive(run0, verdict, {}, 300, 42));
  EXPECT_FALSE(*store->earlier_run_waiting(run1)) << "judged: only its comment is left";
  ASSERT_TRUE(*store->enqueue(report(400), "lab", 400));
  EXPECT_TRUE(*store->earlier_run_waiting(run2)) << "run 1 is queued";
  auto dead = store->record_failure(run1, 500, "scope: no record", attrib::store::RetryPolicy{1, 1, 1});
  ASSERT_TRUE(dead && *dead);
  EXPECT_FALSE(*store->earlier_run_waiting(run2)) << "run 1 is given up: it holds nothing back";
}

// The archive file locked by another process (a sqlite3 shell left in a write transaction)
// past the busy wait: the archive write fails as a whole, naming the file. It used to go
// on statement by statement in autocommit once BEGIN had failed, and wrote the verdict
// without its events when the lock went away in the middle.
TEST_F(JobStoreTest, AnArchiveLockedByAnotherProcessFailsWholeNamingTheFile) {
  auto store = Open();
  ASSERT_TRUE(*store->enqueue(Job("21"), "lab", 100));
  auto other = attrib::store::Database::open(path_.string());
  ASSERT_TRUE(other) << other.error().message;
  ASSERT_TRUE(other->exec("BEGIN EXCLUSIVE"));
  attrib::Verdict verdict;
  verdict.job_id = "21";
  attrib::Event event;
  event.id = "e1";
  event.kind = "xid";
  auto archived = std::async(std::launch::async, [&] {
    return store->archive({"lab", "21", 0}, verdict, {event}, 200);
  });
  // BEGIN gives up after the 5 s busy wait; the lock goes away a second later.
  const bool done_while_locked = archived.wait_for(std::chrono::milliseconds(6000)) == std::future_status::ready;
  ASSERT_TRUE(other->exec("ROLLBACK"));
  auto status = archived.get();
  EXPECT_TRUE(done_while_locked) << "the archive write went on after BEGIN failed";
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find(path_.string()), std::string::npos) << status.error().message;
  EXPECT_NE(status.error().message.find("locked"), std::string::npos) << status.error().message;
  auto record = store->lookup("lab", "21");
  ASSERT_TRUE(record && record->has_value());
  EXPECT_FALSE((*record)->verdict_json) << "half an archive written";
  // Unlocked, the retry archives it whole.
  EXPECT_TRUE(store->archive({"lab", "21", 0}, verdict, {event}, 300));
  EXPECT_TRUE((*store->lookup("lab", "21"))->verdict_json);
}
