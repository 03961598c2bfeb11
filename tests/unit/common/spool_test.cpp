#include "common/spool.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace fs = std::filesystem;

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attrib-spool-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SpoolTest, WriteThenReadRoundTrips) {
  attrib::v1::JobEnded message;
  message.set_job_id("4242_7");
  message.set_cluster("lab");
  message.set_node_list("n[1-3]");
  message.set_exit_code(3);
  (*message.mutable_spank_options())["attrib_attrib"] = "off";
  auto path = attrib::common::write_spool_file(dir_, message);
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(path->extension(), ".jobended");
  auto listed = attrib::common::list_spool_files(dir_);
  ASSERT_EQ(listed.size(), 1u);
  auto read = attrib::common::read_spool_file(listed[0]);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->job_id(), "4242_7");
  EXPECT_EQ(read->node_list(), "n[1-3]");
  EXPECT_EQ(read->exit_code(), 3);
  EXPECT_EQ(read->spank_options().at("attrib_attrib"), "off");
}

TEST_F(SpoolTest, TemporaryAndForeignFilesAreNotListed) {
  std::ofstream(dir_ / ".lab_1_2_3.tmp") << "half";
  std::ofstream(dir_ / "notes.txt") << "x";
  EXPECT_TRUE(attrib::common::list_spool_files(dir_).empty());
}

TEST_F(SpoolTest, CorruptFileIsAnErrorNamingItAndCanBeQuarantined) {
  auto bad = dir_ / "lab_1_2_3.jobended";
  std::ofstream(bad) << "\xff\xff\xff not protobuf";
  auto read = attrib::common::read_spool_file(bad);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find(bad.string()), std::string::npos);
  ASSERT_TRUE(attrib::common::quarantine_spool_file(bad));
  EXPECT_TRUE(fs::exists(dir_ / "bad" / "lab_1_2_3.jobended"));
  EXPECT_TRUE(attrib::common::list_spool_files(dir_).empty());
}

TEST_F(SpoolTest, UnwritableDirectoryIsAnError) {
  attrib::v1::JobEnded message;
  message.set_job_id("1");
  auto path = attrib::common::write_spool_file(dir_ / "missing", message);
  ASSERT_FALSE(path);
  EXPECT_EQ(path.error().code, "SPOOL_E_IO");
}
