// The archive's listings (fleet_queries.h): pages continue by key and return every row
// once, owners are filtered in SQL by the owner_uid column (filled for older rows at
// open), and no page is longer than kMaxPageRows, whoever asks.
#include "attributiond/store/fleet_queries.h"

#include <unistd.h>

#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "attributiond/fleet/array_report.h"
#include "attributiond/store/job_store.h"
#include "tests/support/history_rows.h"

namespace fs = std::filesystem;
using namespace attrib;

namespace {

constexpr TimeUs kSecond = 1000000;
constexpr TimeUs kStart = 1796000000LL * kSecond;

std::string Key(TimeUs time_us, const std::string& cluster, const std::string& job_id) {
  return std::to_string(time_us) + "/" + cluster + "/" + job_id;
}

}  // namespace

class FleetQueriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("attrib-queries-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    Cleanup();
    Open();
  }
  void TearDown() override {
    store_.reset();
    Cleanup();
  }
  void Cleanup() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }
  void Open() {
    store_.reset();
    auto store = store::JobStore::open(path_.string());
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
  }

  // Archives one job through the store, as the workers do.
  void Archive(const std::string& job, uint32_t uid, const std::string& user,
               const std::string& domain = "APPLICATION") {
    Verdict verdict;
    verdict.domain = domain;
    verdict.terminal_state = "FAILED";
    verdict.recommended_action = "FIX_APPLICATION";
    ArchiveVerdict(job, uid, user, verdict);
  }
  // Archives `verdict` as job `job`'s, ended job seconds after kStart, as the workers do.
  void ArchiveVerdict(const std::string& job, uint32_t uid, const std::string& user, Verdict verdict) {
    v1::JobEnded request;
    request.set_job_id(job);
    request.set_uid(uid);
    request.set_user(user);
    request.set_end_time_us(kStart + std::stoll(job) * kSecond);
    ASSERT_TRUE(store_->enqueue(request, "lab", kStart));
    verdict.job_id = job;
    verdict.cluster = "lab";
    ASSERT_TRUE(store_->archive({"lab", job}, verdict, {}, kStart + kSecond));
  }

  // Every page of query, each continuing after the previous one's next, on the read
  // connection; the keys in the order returned.
  std::vector<std::string> AllPages(store::VerdictQuery query, size_t* pages = nullptr) {
    std::vector<std::string> keys;
    size_t n = 0;
    while (true) {
      auto page = store_->with_read_db([&](store::Database& db) { return store::verdict_page(db, query); });
      EXPECT_TRUE(page) << page.error().message;
      if (!page) break;
      ++n;
      EXPECT_LE(page->rows.size(), query.limit);
      for (const auto& row : page->rows) keys.push_back(Key(row.time_us, row.cluster, row.job_id));
      if (!page->next) break;
      EXPECT_EQ(page->rows.size(), query.limit) << "only the last page is short";
      query.after = page->next;
    }
    if (pages != nullptr) *pages = n;
    return keys;
  }

  std::vector<std::string> Jobs(const store::VerdictQuery& query) {
    auto page = store_->with_read_db([&](store::Database& db) { return store::verdict_page(db, query); });
    EXPECT_TRUE(page) << page.error().message;
    std::vector<std::string> jobs;
    if (page)
      for (const auto& row : page->rows) jobs.push_back(row.job_id);
    return jobs;
  }

  fs::path path_;
  std::unique_ptr<store::JobStore> store_;
};

TEST_F(FleetQueriesTest, PagesReturnEveryRowExactlyOnceInOrder) {
  const auto rows = test::write_history_rows(*store_, 2500, kStart);
  auto expected = [&](std::optional<uint32_t> owner, const std::string& cluster) {
    std::vector<std::string> keys;
    for (const auto& r : rows)
      if (r.domain != "NONE" && (!owner || r.owner == *owner) && (cluster.empty() || r.cluster == cluster))
        keys.push_back(Key(r.time_us, r.cluster, r.job_id));
    return keys;
  };
  for (size_t limit : {size_t{1}, size_t{7}, size_t{100}, store::kMaxPageRows}) {
    store::VerdictQuery query;
    query.limit = limit;
    size_t pages = 0;
    auto keys = AllPages(query, &pages);
    EXPECT_EQ(keys, expected(std::nullopt, "")) << "limit " << limit;
    EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), keys.size()) << "none twice";
    EXPECT_EQ(pages, (keys.size() + limit - 1) / limit) << "limit " << limit;
  }
  // The same with the owner, the cluster and a start time: still every row once, in order.
  store::VerdictQuery query;
  query.limit = 50;
  query.owner = 1001;
  query.cluster = "lab";
  EXPECT_EQ(AllPages(query), expected(1001u, "lab"));
  query.since_us = rows[rows.size() / 2].time_us;
  auto later = expected(1001u, "lab");
  std::erase_if(later, [&](const std::string& key) { return std::stoll(key) < query.since_us; });
  EXPECT_EQ(AllPages(query), later);
  // A key from before the start time starts at the start time.
  query.after = store::PageKey{kStart - kSecond, "", ""};
  EXPECT_EQ(AllPages(query), later);
}

TEST_F(FleetQueriesTest, ANonAdminSeesOnlyTheirOwnJobs) {
  Archive("1", 1000, "alice");
  Archive("2", 1001, "bob");
  Archive("3", 0, "");      // the hook sent no owner: admins only
  Archive("4", 0, "root");  // a name only (an older hook): resolved, root is uid 0
  Archive("5", 1000, "alice", "NONE");
  store::VerdictQuery query;
  query.owner = 1000;
  EXPECT_EQ(Jobs(query), std::vector<std::string>{"1"});
  query.domain = "NONE";
  EXPECT_EQ(Jobs(query), std::vector<std::string>{"5"});
  query.domain = "";
  query.owner = 1001;
  EXPECT_EQ(Jobs(query), std::vector<std::string>{"2"});
  query.owner = 0;
  EXPECT_EQ(Jobs(query), std::vector<std::string>{"4"});
  query.owner.reset();
  EXPECT_EQ(Jobs(query), (std::vector<std::string>{"1", "2", "3", "4"}));

  // Counts follow the same rule.
  query.owner = 1000;
  auto counts = store_->with_read_db([&](store::Database& db) { return store::domain_counts(db, query); });
  ASSERT_TRUE(counts) << counts.error().message;
  ASSERT_EQ(counts->size(), 2u);
  EXPECT_EQ((*counts)[0].jobs + (*counts)[1].jobs, 2);

  // The owner is a column of both the history and the archived job, not a decode per row.
  auto owners = store_->with_read_db([](store::Database& db) {
    std::vector<std::string> out;
    auto stmt = db.prepare(
        "SELECT j.job_id, IFNULL(j.owner_uid, -1), IFNULL(h.owner_uid, -1) FROM jobs j JOIN history h "
        "USING (cluster, job_id) ORDER BY j.job_id");
    while (stmt.step())
      out.push_back(stmt.text_at(0) + ":" + std::to_string(stmt.int_at(1)) + ":" + std::to_string(stmt.int_at(2)));
    return out;
  });
  EXPECT_EQ(owners, (std::vector<std::string>{"1:1000:1000", "2:1001:1001", "3:-1:-1", "4:0:0", "5:1000:1000"}));
}

TEST_F(FleetQueriesTest, OwnersOfOlderRowsAreFilledAtOpen) {
  Archive("1", 1000, "alice");
  Archive("2", 0, "root");
  Archive("3", 0, "");
  // As a database archived before the owner column existed (migration 4) holds them.
  ASSERT_TRUE(store_->with_db([](store::Database& db) {
    return db.exec("UPDATE history SET owner_uid = NULL; UPDATE jobs SET owner_uid = NULL;");
  }));
  store::VerdictQuery query;
  query.owner = 1000;
  EXPECT_TRUE(Jobs(query).empty());
  Open();
  EXPECT_EQ(Jobs(query), std::vector<std::string>{"1"});
  query.owner = 0;
  EXPECT_EQ(Jobs(query), std::vector<std::string>{"2"});
  auto unknown = store_->with_read_db([](store::Database& db) {
    auto stmt = db.prepare("SELECT count(*) FROM jobs WHERE owner_uid IS NULL AND verdict_json IS NOT NULL");
    return stmt.step() ? stmt.int_at(0) : -1;
  });
  EXPECT_EQ(unknown, 1) << "job 3's owner is unknown: admins only";
}

TEST_F(FleetQueriesTest, APageHoldsAtMostTheMaximumForAdminsToo) {
  test::write_history_rows(*store_, 2500, kStart);
  store::VerdictQuery query;  // no owner: an admin
  query.limit = 1000000;
  auto page = store_->with_read_db([&](store::Database& db) { return store::verdict_page(db, query); });
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_EQ(page->rows.size(), store::kMaxPageRows);
  ASSERT_TRUE(page->next.has_value());
  EXPECT_EQ(page->next->job_id, page->rows.back().job_id);
}

namespace {

// A task's verdict: its domain and, for a root cause, the node and GPU it blames.
Verdict TaskVerdict(const std::string& job, const std::string& domain, const std::string& node = "",
                    const std::string& gpu = "") {
  Verdict verdict;
  verdict.job_id = job;
  verdict.cluster = "lab";
  verdict.domain = domain;
  verdict.terminal_state = domain == "NONE" ? "COMPLETED" : "FAILED";
  if (!node.empty()) {
    RootCause cause;
    cause.rule = domain == "GPU_HARDWARE" ? "gpu.fallen_off_bus" : "app.exit";
    cause.event.node = node;
    verdict.root_cause = cause;
    verdict.affected_nodes = {node};
    if (!gpu.empty()) verdict.affected_gpus = {{node, gpu}};
  }
  return verdict;
}

}  // namespace

TEST_F(FleetQueriesTest, AnArrayRollUpHasTheNewestRunOfEachTaskItsOwnersAndWhatRecurs) {
  auto archive = [&](const std::string& job, uint32_t uid, const Verdict& verdict, TimeUs hook_time) {
    v1::JobEnded request;
    request.set_job_id(job);
    request.set_uid(uid);
    request.set_user("u" + std::to_string(uid));
    request.set_hook_time_us(hook_time);
    auto queued = store_->enqueue(request, "lab", hook_time);
    ASSERT_TRUE(queued && *queued) << job;
    auto run = store_->with_db([&](store::Database& db) {
      auto stmt = db.prepare("SELECT MAX(run) FROM jobs WHERE cluster = 'lab' AND job_id = ?");
      stmt.bind(1, job);
      return stmt.step() ? stmt.int_at(0) : int64_t{-1};
    });
    ASSERT_TRUE(store_->archive({"lab", job, run}, verdict, {}, hook_time));
  };
  // Array 77: tasks 1..12 of uid 1001, but task 12 of uid 1002. Tasks 10 and 11 lost the
  // same GPU on n2; task 12 failed on n1; task 3's first run failed, its requeue succeeded.
  for (int task = 1; task <= 12; ++task) {
    const std::string job = "77_" + std::to_string(task);
    Verdict verdict = task == 10 || task == 11 ? TaskVerdict(job, "GPU_HARDWARE", "n2", "0000:3b:00.0")
                      : task == 12             ? TaskVerdict(job, "APPLICATION", "n1")
                      : task == 3              ? TaskVerdict(job, "APPLICATION", "n3")
                                               : TaskVerdict(job, "NONE");
    archive(job, task == 12 ? 1002 : 1001, verdict, kStart + task * kSecond);
  }
  archive("77_3", 1001, TaskVerdict("77_3", "NONE"), kStart + 100 * kSecond);
  archive("770_1", 1001, TaskVerdict("770_1", "APPLICATION", "n2"), kStart);  // another array's task
  archive("77", 1001, TaskVerdict("77", "APPLICATION", "n2"), kStart);        // not a task: no "_"
  v1::JobEnded waiting;
  waiting.set_job_id("77_13");
  ASSERT_TRUE(store_->enqueue(waiting, "lab", kStart));

  auto read = [&](std::optional<uint32_t> owner) {
    auto tasks = store_->with_read_db([&](store::Database& db) { return store::array_tasks(db, "lab", "77", owner); });
    EXPECT_TRUE(tasks) << tasks.error().message;
    return tasks ? *tasks : store::ArrayTasks{};
  };
  const store::ArrayTasks all = read(std::nullopt);
  std::vector<std::string> ids;
  for (const auto& row : all.judged) ids.push_back(row.job_id + ":" + row.domain);
  EXPECT_EQ(ids, (std::vector<std::string>{"77_1:NONE", "77_2:NONE", "77_3:NONE", "77_4:NONE", "77_5:NONE",
                                           "77_6:NONE", "77_7:NONE", "77_8:NONE", "77_9:NONE", "77_10:GPU_HARDWARE",
                                           "77_11:GPU_HARDWARE", "77_12:APPLICATION"}));
  EXPECT_EQ(all.waiting, 1);
  EXPECT_EQ(read(1002).judged.size(), 1U);
  EXPECT_EQ(read(1002).waiting, 0) << "a queued task's owner is not known: admins only";
  EXPECT_TRUE(read(1003).judged.empty());

  const nlohmann::json report = fleet::array_rollup_report("lab", "77", all);
  EXPECT_EQ(report["schema"], "attrib.array_rollup.v1");
  EXPECT_EQ(report["tasks"], 12);
  EXPECT_EQ(report["waiting"], 1);
  EXPECT_EQ(report["domains"], (nlohmann::json{{"APPLICATION", 1}, {"GPU_HARDWARE", 2}, {"NONE", 9}}));
  EXPECT_EQ(report["states"], (nlohmann::json{{"COMPLETED", 9}, {"FAILED", 3}}));
  ASSERT_EQ(report["recurring_nodes"].size(), 1U);  // n1 and n3 failed one task each
  EXPECT_EQ(report["recurring_nodes"][0]["node"], "n2");
  EXPECT_EQ(report["recurring_nodes"][0]["task_ids"], (nlohmann::json{"77_10", "77_11"}));
  ASSERT_EQ(report["recurring_gpus"].size(), 1U);
  EXPECT_EQ(report["recurring_gpus"][0]["gpu"], "0000:3b:00.0");
  EXPECT_EQ(report["recurring_gpus"][0]["domains"], (nlohmann::json{{"GPU_HARDWARE", 2}}));
  std::vector<std::string> failed;
  for (const auto& task : report["failed_tasks"]) failed.push_back(task["job_id"]);
  EXPECT_EQ(failed, (std::vector<std::string>{"77_10", "77_11", "77_12"}));
  EXPECT_EQ(report["failed_tasks_omitted"], 0);
}

// A node's earlier unexplained failures (rule host.unexplained_failures_repeat): other
// jobs that failed there within the window with no trusted cause, and their other users.
TEST_F(FleetQueriesTest, UnexplainedFailuresOnANodeCountOtherJobsWithoutATrustedCause) {
  const auto archive = [&](const std::string& job, uint32_t uid, const std::string& domain, const std::string& node,
                           bool trusted_root) {
    Verdict verdict;
    verdict.domain = domain;
    verdict.terminal_state = domain == "NONE" ? "COMPLETED" : "FAILED";
    verdict.affected_nodes = {node};
    if (domain != "UNATTRIBUTED" && domain != "NONE") {
      verdict.root_cause = RootCause{};
      verdict.root_cause->event.node = node;
      verdict.root_cause->event.trusted = trusted_root;
    }
    ArchiveVerdict(job, uid, "", verdict);
  };
  archive("1", 1001, "UNATTRIBUTED", "n_2", false);  // counted
  archive("2", 1002, "APPLICATION", "n_2", false);   // an untrusted inference: counted
  archive("3", 1003, "GPU_HARDWARE", "n_2", true);   // a trusted cause: not counted
  archive("4", 1004, "UNATTRIBUTED", "nx2", false);  // another node ('_' is no wildcard)
  archive("5", 1005, "NONE", "n_2", false);          // succeeded
  archive("6", 1001, "AMBIGUOUS", "n_2", false);     // counted; the same user as job 1
  const auto count = [&](TimeUs since, std::optional<uint32_t> uid) {
    auto found = store_->with_read_db([&](store::Database& db) {
      return store::unexplained_failures_on(db, "lab", "n_2", since, kStart + 100 * kSecond, "9", uid);
    });
    EXPECT_TRUE(found) << found.error().message;
    return found ? std::make_pair(found->jobs, found->other_users) : std::make_pair(int64_t{-1}, int64_t{-1});
  };
  EXPECT_EQ(count(kStart, 1001), std::make_pair(int64_t{3}, int64_t{1}));          // jobs 1, 2, 6; user 1002
  EXPECT_EQ(count(kStart, std::nullopt), std::make_pair(int64_t{3}, int64_t{2}));  // users 1001, 1002
  EXPECT_EQ(count(kStart + 3 * kSecond, 1001), std::make_pair(int64_t{1}, int64_t{0}));  // only job 6 is recent
  auto without_job = store_->with_read_db([&](store::Database& db) {
    return store::unexplained_failures_on(db, "lab", "n_2", kStart, kStart + 100 * kSecond, "6", 1001);
  });
  ASSERT_TRUE(without_job);
  EXPECT_EQ(without_job->jobs, 2);  // the job being judged is never its own history
}
