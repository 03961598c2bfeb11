// The write-ahead log's checkpoints off the writer's path (attributiond/store/wal_checkpointer.h),
// on a real SQLite file: the thread copies the log into the database file while the
// writer only commits; past the bound the writer checkpoints itself; once stopped, the
// writer has SQLite's own autocheckpoint back.
#include "attributiond/store/wal_checkpointer.h"

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/bundle_test_support.h"

namespace attrib::store {
namespace {

constexpr int64_t kRowBytes = 3000;  // about a page a row

class WalCheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Database::open(path());
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    writer_.emplace(std::move(*opened));
    ASSERT_TRUE(writer_->exec("CREATE TABLE t (v BLOB)"));
  }
  std::string path() const { return (dir_.path() / "log.db").string(); }
  uint64_t file_size() const { return std::filesystem::file_size(path()); }
  // `rows` commits of a row each.
  void commit_rows(int rows) {
    for (int i = 0; i < rows; ++i) ASSERT_TRUE(writer_->exec("INSERT INTO t VALUES (randomblob(3000))"));
  }
  test::TempDir dir_;
  std::optional<Database> writer_;
};

TEST_F(WalCheckpointerTest, TheThreadCopiesTheLogWhileTheWriterOnlyCommits) {
  auto checkpointer = WalCheckpointer::start(*writer_, path(), /*pages=*/16);
  ASSERT_TRUE(checkpointer.ok()) << checkpointer.error().message;
  const uint64_t before = file_size();
  commit_rows(40);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  // The count goes up once the checkpoint call returns, after the file has grown.
  while ((file_size() < before + 16 * kRowBytes || (*checkpointer)->background_checkpoints() == 0) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GE(file_size(), before + 16 * kRowBytes);  // the rows reached the database file
  EXPECT_GE((*checkpointer)->background_checkpoints(), 1u);
  EXPECT_EQ((*checkpointer)->inline_checkpoints(), 0u);
  EXPECT_EQ((*checkpointer)->last_error(), "");
}

TEST_F(WalCheckpointerTest, PastTheBoundTheWriterCheckpointsItself) {
  auto checkpointer = WalCheckpointer::start(*writer_, path(), /*pages=*/4);
  ASSERT_TRUE(checkpointer.ok()) << checkpointer.error().message;
  {
    // A reader's snapshot keeps every checkpoint from copying past it: the log only grows.
    auto reader = Database::open(path());
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    ASSERT_TRUE(reader->exec("BEGIN; SELECT count(*) FROM t;"));
    commit_rows(4 * WalCheckpointer::kInlineFactor + 4);
    EXPECT_GE((*checkpointer)->inline_checkpoints(), 1u);  // tried in the writer's commit
    ASSERT_TRUE(reader->exec("COMMIT"));
  }
  // The reader gone, the next commit's own checkpoint copies the whole log at once.
  const uint64_t inline_before = (*checkpointer)->inline_checkpoints();
  commit_rows(1);
  EXPECT_EQ((*checkpointer)->inline_checkpoints(), inline_before + 1);
  EXPECT_GE(file_size(), static_cast<uint64_t>((4 * WalCheckpointer::kInlineFactor + 5) * kRowBytes));
}

TEST_F(WalCheckpointerTest, StoppedTheWriterHasSqlitesAutocheckpointBack) {
  {
    auto checkpointer = WalCheckpointer::start(*writer_, path(), /*pages=*/1'000'000);
    ASSERT_TRUE(checkpointer.ok()) << checkpointer.error().message;
    commit_rows(10);
  }
  // Past SQLite's own threshold (1,000 pages), the commit that crosses it checkpoints.
  const uint64_t before = file_size();
  commit_rows(WalCheckpointer::kDefaultPages + 10);
  EXPECT_GE(file_size(), before + static_cast<uint64_t>(WalCheckpointer::kDefaultPages) * kRowBytes);
}

}  // namespace
}  // namespace attrib::store
