// The spank_records collector over record files written with the plugin's own writer
// (spank/: record_text + write_atomically), so reader and writer share one format.
#include "collectors/spank_records_collector.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "collectors/registry.h"
#include "spank/record_file.h"
#include "spank/task_record.h"

namespace attrib::collectors {
namespace {

namespace fs = std::filesystem;

class SpankRecords : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "attrib-spank-records-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // A record as spank_attrib.so writes it for `node`.
  void write(const std::string& node, uint32_t job, uint32_t step, uint32_t rank, int64_t start,
             std::optional<int64_t> end, int raw_status) {
    spank::TaskRecord record;
    record.job_id = job;
    record.step_id = step;
    record.node = node;
    record.global_rank = rank;
    record.local_rank = static_cast<int>(rank % 2);
    record.pid = 1000 + rank;
    record.start_us = start;
    record.end_us = end;
    record.raw_status = raw_status;
    const std::string dir = (root_ / node / std::to_string(job)).string();
    ASSERT_TRUE(spank::ensure_directory(dir, 0755));
    ASSERT_TRUE(spank::write_atomically(dir, spank::record_file_name(step, rank), spank::record_text(record)));
  }

  std::unique_ptr<Collector> collector() {
    YAML::Node options;
    options["directory"] = (root_ / "{node}").string();
    auto created = create_collector("spank_records", options);
    EXPECT_TRUE(created) << (created ? "" : created.error().message);
    return std::move(*created);
  }

  std::vector<Coverage> collect(const std::string& node, const std::string& job, std::vector<LogLine>& lines) {
    CollectRequest request{job, node, 0, 4'000'000'000'000'000};
    return collector()->collect(request, [&](const LogLine& line) { lines.push_back(line); });
  }

  fs::path root_;
};

TEST_F(SpankRecords, EmitsEndedTasksInOrderOfTheirEnd) {
  write("n2", 12, 0, 3, 100, 5'000, 7 << 8);
  write("n2", 12, 0, 2, 100, 9'000, 0);
  write("n2", 12, spank::kBatchStep, 0, 50, 9'500, 137 << 8);
  write("n3", 12, 0, 5, 100, 7'000, SIGKILL);  // another node: not n2's
  std::vector<LogLine> lines;
  const auto coverage = collect("n2", "12", lines);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(
      lines[0].text,
      "attrib-spank: task exited abnormally: job=12 step=0 rank=3 local_rank=1 node=n2 pid=1003 exit_code=7 signal=0");
  EXPECT_EQ(lines[0].time, 5'000);
  EXPECT_EQ(lines[0].source, "spank");
  EXPECT_EQ(lines[0].node, "n2");
  EXPECT_TRUE(lines[0].trusted) << "written by root, 0644";
  EXPECT_EQ(lines[0].seq, 0u);
  EXPECT_NE(lines[1].text.find("task exited normally: job=12 step=0 rank=2"), std::string::npos);
  EXPECT_NE(lines[2].text.find("step=batch rank=0"), std::string::npos);
  EXPECT_NE(lines[2].text.find("exit_code=137 signal=0"), std::string::npos);
  EXPECT_EQ(lines[2].seq, 2u);
  ASSERT_EQ(coverage.size(), 1u);
  EXPECT_EQ(coverage[0].status, CoverageStatus::Ok);
  EXPECT_EQ(coverage[0].source, "spank");
  EXPECT_EQ(coverage[0].lines, 3u);

  lines.clear();
  collect("n3", "12", lines);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].text.find("rank=5 local_rank=1 node=n3 pid=1005 exit_code=0 signal=9"), std::string::npos);
}

// The GPU indices the plugin recorded (SLURM_STEP_GPUS) end the line; anything but
// digits and commas in the record's field is dropped, so a record cannot extend the line.
TEST_F(SpankRecords, ATasksGpusEndItsLine) {
  spank::TaskRecord record;
  record.job_id = 5100;
  record.node = "n1";
  record.pid = 4711;
  record.start_us = 100;
  record.end_us = 200;
  record.raw_status = 1 << 8;
  record.gpus = "1,3";
  const std::string dir = (root_ / "n1" / "5100").string();
  ASSERT_TRUE(spank::ensure_directory(dir, 0755));
  ASSERT_TRUE(spank::write_atomically(dir, spank::record_file_name(0, 0), spank::record_text(record)));
  record.global_rank = 1;
  record.gpus = "1 exit_code=0";
  ASSERT_TRUE(spank::write_atomically(dir, spank::record_file_name(0, 1), spank::record_text(record)));
  std::vector<LogLine> lines;
  collect("n1", "5100", lines);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text,
            "attrib-spank: task exited abnormally: job=5100 step=0 rank=0 local_rank=0 node=n1 pid=4711 exit_code=1 "
            "signal=0 gpus=1,3");
  EXPECT_EQ(lines[1].text.find("gpus="), std::string::npos) << lines[1].text;
}

// Other jobs' tasks on the node that ran inside the window are handed over too, after the
// job's own, so the engine knows whose pid or GPU a node's line names; those outside it
// are not. A task that began before the window is stamped at the window's start: a line
// before the window is not the job's evidence, and a replay of the raw lines drops it.
TEST_F(SpankRecords, OtherJobsTasksBesideItAreHandedOver) {
  write("n1", 12, 0, 0, 1'000, 9'000, 1 << 8);
  write("n1", 4999, 0, 0, 500, std::nullopt, 0);  // still running beside job 12
  write("n1", 4996, 0, 0, 50, 400, 0);            // began before job 12's window, ended in it
  write("n1", 4998, 0, 1, 100, 200, 0);           // ended before job 12's window
  write("n2", 4997, 0, 0, 1'000, 2'000, 0);       // another node
  std::vector<LogLine> lines;
  CollectRequest request{"12", "n1", 300, 10'000};
  const auto coverage = collector()->collect(request, [&](const LogLine& line) { lines.push_back(line); });
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].text.find("task exited abnormally: job=12"), std::string::npos);
  EXPECT_EQ(lines[1].text, "attrib-spank: task of another job: job=4996 step=0 rank=0 node=n1 pid=1000");
  EXPECT_EQ(lines[1].time, 300);
  EXPECT_EQ(lines[2].text, "attrib-spank: task of another job: job=4999 step=0 rank=0 node=n1 pid=1000");
  EXPECT_EQ(lines[2].time, 500);
  EXPECT_EQ(lines[2].seq, 2u);
  EXPECT_NE(coverage[0].detail.find("2 task(s) of other jobs beside it"), std::string::npos) << coverage[0].detail;
}

TEST_F(SpankRecords, MissingSpoolIsUnavailableMissingJobIsEmpty) {
  std::vector<LogLine> lines;
  auto coverage = collect("n1", "12", lines);
  EXPECT_EQ(coverage[0].status, CoverageStatus::Unavailable);
  EXPECT_NE(coverage[0].detail.find("not loaded"), std::string::npos);
  fs::create_directories(root_ / "n1");
  coverage = collect("n1", "12", lines);
  EXPECT_EQ(coverage[0].status, CoverageStatus::Empty);
  EXPECT_TRUE(lines.empty());
}

TEST_F(SpankRecords, StartOnlyRecordsAreReportedNotEmitted) {
  write("n1", 7, 0, 0, 100, std::nullopt, 0);
  write("n1", 7, 0, 1, 100, 200, 0);
  std::vector<LogLine> lines;
  const auto coverage = collect("n1", "7", lines);
  EXPECT_EQ(lines.size(), 1u);
  EXPECT_EQ(coverage[0].status, CoverageStatus::Ok);
  EXPECT_NE(coverage[0].detail.find("1 task(s) without an exit record"), std::string::npos) << coverage[0].detail;
}

TEST_F(SpankRecords, RecordsNotOwnedByRootAreUntrusted) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown the record";
  write("n1", 8, 0, 0, 100, 200, 1 << 8);
  ASSERT_EQ(chown((root_ / "n1" / "8" / "0.0.json").c_str(), 1000, 1000), 0);
  std::vector<LogLine> lines;
  const auto coverage = collect("n1", "8", lines);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_FALSE(lines[0].trusted);
  EXPECT_NE(coverage[0].detail.find("not root-owned"), std::string::npos);
}

TEST_F(SpankRecords, BrokenLinesMakeCoveragePartialAndSkipTempFiles) {
  write("n1", 9, 0, 0, 100, 200, 0);
  std::ofstream(root_ / "n1" / "9" / "0.1.json") << "{\"event\":\"task_exit\",\"job_id\":9}\nnot json\n";
  std::ofstream(root_ / "n1" / "9" / ".0.2.json.tmp.77") << "half a rec";
  std::vector<LogLine> lines;
  const auto coverage = collect("n1", "9", lines);
  EXPECT_EQ(lines.size(), 1u);
  EXPECT_EQ(coverage[0].status, CoverageStatus::Partial);
  EXPECT_NE(coverage[0].detail.find("2 unreadable record line(s)"), std::string::npos) << coverage[0].detail;
}

TEST_F(SpankRecords, RefusesPathTricksAndUnknownOptions) {
  std::vector<LogLine> lines;
  EXPECT_EQ(collect("../n1", "9", lines)[0].status, CoverageStatus::Failed);
  EXPECT_EQ(collect("n1", "..", lines)[0].status, CoverageStatus::Failed);
  YAML::Node options;
  options["directroy"] = "/x";
  auto created = create_collector("spank_records", options);
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().code, "CONFIG_E_UNKNOWN_KEY");
}

}  // namespace
}  // namespace attrib::collectors
