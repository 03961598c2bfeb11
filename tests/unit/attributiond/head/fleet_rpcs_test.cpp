// Reads that never hold the queue (fleet_rpcs.cpp), through the service itself,
// in-process (auth.mode none).
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>

#include <gtest/gtest.h>

#include "attributiond/head/attribution_service.h"
#include "attributiond/store/job_store.h"

namespace fs = std::filesystem;
using namespace attrib;

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
  auto record = store_->lookup({"lab", "9001"});
  ASSERT_TRUE(record && record->has_value());
  EXPECT_EQ((*record)->status, "queued");
}
