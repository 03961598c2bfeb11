// The connection's statement cache (attributiond/store/sqlite.h): a statement handed out
// again is reset and unbound, two of one text can be live at once, a cached statement
// blocks no schema change, and a statement may outlive its database.
#include "attributiond/store/sqlite.h"

#include <gtest/gtest.h>

#include "tests/support/bundle_test_support.h"

namespace attrib::store {
namespace {

class SqliteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Database::open((dir_.path() / "cache.db").string());
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    db_.emplace(std::move(*opened));
    ASSERT_TRUE(db_->exec("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1), (2), (3);"));
  }
  test::TempDir dir_;
  std::optional<Database> db_;
};

TEST_F(SqliteTest, AStatementHandedOutAgainIsResetAndUnbound) {
  {
    auto first = db_->prepare("SELECT ?1");
    first.bind(1, int64_t{5});
    ASSERT_TRUE(first.step());
    EXPECT_EQ(first.int_at(0), 5);
  }  // back to the cache mid-result
  auto again = db_->prepare("SELECT ?1");
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(again.step());
  EXPECT_TRUE(again.is_null(0));  // the earlier binding is gone
  EXPECT_FALSE(again.step());
}

TEST_F(SqliteTest, TwoStatementsOfOneTextCanBeLiveAtOnce) {
  std::vector<int64_t> pairs;
  auto outer = db_->prepare("SELECT v FROM t ORDER BY v");
  while (outer.step()) {
    auto inner = db_->prepare("SELECT v FROM t ORDER BY v");
    while (inner.step()) pairs.push_back(outer.int_at(0) * 10 + inner.int_at(0));
  }
  EXPECT_EQ(pairs, (std::vector<int64_t>{11, 12, 13, 21, 22, 23, 31, 32, 33}));
  EXPECT_TRUE(outer.error().empty()) << outer.error();
}

TEST_F(SqliteTest, ACachedStatementBlocksNoSchemaChangeOrCommit) {
  {
    auto read = db_->prepare("SELECT v FROM t");
    ASSERT_TRUE(read.step());  // left mid-result: reset when handed back
  }
  {
    Transaction tx(*db_);
    ASSERT_TRUE(tx.began());
    ASSERT_TRUE(db_->prepare("INSERT INTO t VALUES (4)").run());
    ASSERT_TRUE(tx.commit());
  }
  EXPECT_TRUE(db_->exec("DROP TABLE t")) << db_->last_error();
  auto gone = db_->prepare("SELECT v FROM t");
  EXPECT_FALSE(gone.step());
  EXPECT_NE(gone.error(), "");  // no such table: the cached statement is not served stale rows
}

TEST_F(SqliteTest, AStatementMayOutliveItsDatabase) {
  auto read = db_->prepare("SELECT count(*) FROM t");
  ASSERT_TRUE(read.step());
  EXPECT_EQ(read.int_at(0), 3);
  db_.reset();  // the connection closes once the statement is finalized (AddressSanitizer checks)
}

}  // namespace
}  // namespace attrib::store
