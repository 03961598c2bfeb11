// ListVerdicts in pages, and reads that never hold the queue (fleet_rpcs.cpp), through the
// service itself, in-process (auth.mode none: the caller is an admin; a non-admin's
// listing is FleetQueriesTest's and AuthTest's).
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attributiond/head/attribution_service.h"
#include "tests/support/history_rows.h"

namespace fs = std::filesystem;
using namespace attrib;

namespace {

constexpr TimeUs kStart = 1796000000LL * 1000000;

}  // namespace

class FleetRpcsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("attrib-rpcs-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    Cleanup();
    auto store = store::JobStore::open(path_.string());
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    service_ = std::make_unique<head::AttributionService>(
        *store_, "lab", [] {}, common::Authenticator::none());
  }
  void TearDown() override {
    service_.reset();
    store_.reset();
    Cleanup();
  }
  void Cleanup() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }

  fs::path path_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<head::AttributionService> service_;
};

TEST_F(FleetRpcsTest, ListVerdictsServesCappedPagesThatFollowEachOther) {
  const auto rows = test::write_history_rows(*store_, 2500, kStart);
  std::vector<std::string> expected;  // cluster "lab", every domain but NONE, in order
  for (const auto& r : rows)
    if (r.cluster == "lab" && r.domain != "NONE") expected.push_back(r.job_id);
  ASSERT_GT(expected.size(), 1000u);

  v1::VerdictListRequest request;
  request.set_limit(100000);  // an admin asking for everything gets one capped page
  std::vector<std::string> listed;
  int pages = 0;
  while (true) {
    v1::FleetReport report;
    ASSERT_TRUE(service_->ListVerdicts(nullptr, &request, &report).ok());
    auto json = nlohmann::json::parse(report.json());
    ++pages;
    EXPECT_LE(json["verdicts"].size(), 1000u);
    EXPECT_EQ(json.contains("counts"), pages == 1) << "counts come with the first page only";
    EXPECT_EQ(json["truncated"], report.has_next());
    for (const auto& v : json["verdicts"]) listed.push_back(v["job_id"].get<std::string>());
    if (!report.has_next()) break;
    *request.mutable_after() = report.next();
  }
  EXPECT_EQ(pages, static_cast<int>((expected.size() + 999) / 1000));
  EXPECT_EQ(listed, expected) << "every verdict once, in order";

  // No limit: the daemon's default page.
  v1::VerdictListRequest plain;
  v1::FleetReport report;
  ASSERT_TRUE(service_->ListVerdicts(nullptr, &plain, &report).ok());
  EXPECT_EQ(nlohmann::json::parse(report.json())["verdicts"].size(), 500u);
  EXPECT_TRUE(report.has_next());
}

// The epilog's RPC while a listing holds the read connection with a read transaction
// open: SubmitJobEnded answers at once. On the old single connection it waited for the
// read (and past the epilog's deadline, the job was spooled).
TEST_F(FleetRpcsTest, SubmitJobEndedAnswersWhileAReadIsOpen) {
  v1::JobEnded job;
  job.set_job_id("9001");
  job.set_node_list("n1");
  v1::SubmitResponse response;
  std::future<grpc::Status> submitted;
  bool answered_during_read = false;
  store_->with_read_db([&](store::Database& db) {
    ASSERT_TRUE(db.exec("BEGIN"));
    auto listing = db.prepare("SELECT count(*) FROM history");
    ASSERT_TRUE(listing.step());  // a listing under way, its snapshot held
    submitted = std::async(std::launch::async, [&] { return service_->SubmitJobEnded(nullptr, &job, &response); });
    answered_during_read = submitted.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
    ASSERT_TRUE(db.exec("COMMIT"));
  });
  EXPECT_TRUE(answered_during_read) << "SubmitJobEnded waited for a reader";
  EXPECT_TRUE(submitted.get().ok());
  EXPECT_TRUE(response.accepted());
  auto record = store_->lookup("lab", "9001");
  ASSERT_TRUE(record && record->has_value());
  EXPECT_EQ((*record)->status, "queued");
}

// attrib-show --stats: the store's figures with the retention the daemon applies.
TEST_F(FleetRpcsTest, ArchiveStatsReportSizeAgeAndRetention) {
  v1::JobEnded request;
  request.set_job_id("1");
  request.set_node_list("n1");
  ASSERT_TRUE(store_->enqueue(request, "lab", kStart));
  common::ArchiveConfig retention;
  retention.evidence_retention_days = 7;
  retention.max_bytes = 1 << 30;
  service_->set_retention(retention);
  v1::ArchiveStatsRequest stats_request;
  v1::FleetReport report;
  ASSERT_TRUE(service_->GetArchiveStats(nullptr, &stats_request, &report).ok());
  auto json = nlohmann::json::parse(report.json());
  EXPECT_EQ(json["runs"], 1);
  EXPECT_EQ(json["queued"], 1);
  EXPECT_EQ(json["oldest_run"], format_time(kStart));
  EXPECT_GT(json["used_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(json["evidence"]["runs"], 0);
  EXPECT_EQ(json["retention"]["evidence_retention_days"], 7);
  EXPECT_EQ(json["retention"]["max_bytes"], 1 << 30);
}
