// Record format, wait-status decoding and atomic writes.
#include "spank/task_record.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "spank/record_file.h"

namespace attrib::spank {
namespace {

namespace fs = std::filesystem;

TEST(SpankTaskRecord, DecodesExitCodesAndSignals) {
  const ExitStatus exited = decode_wait_status(7 << 8);  // as wait() reports exit(7)
  EXPECT_EQ(exited.exit_code, 7);
  EXPECT_EQ(exited.signal, 0);
  EXPECT_TRUE(exited.abnormal());
  const ExitStatus killed = decode_wait_status(SIGKILL);
  EXPECT_EQ(killed.exit_code, 0);
  EXPECT_EQ(killed.signal, 9);
  EXPECT_FALSE(killed.core_dumped);
  const ExitStatus dumped = decode_wait_status(SIGSEGV | 0x80);
  EXPECT_EQ(dumped.signal, SIGSEGV);
  EXPECT_TRUE(dumped.core_dumped);
  EXPECT_FALSE(decode_wait_status(0).abnormal());
}

TEST(SpankTaskRecord, NamesSpecialSteps) {
  EXPECT_EQ(step_label(4294967291u), "batch");
  EXPECT_EQ(step_label(4294967292u), "extern");
  EXPECT_EQ(step_label(0), "0");
  EXPECT_EQ(record_file_name(kBatchStep, 0), "batch.0.json");
  EXPECT_EQ(record_file_name(3, 17), "3.17.json");
}

TEST(SpankTaskRecord, EscapesJsonStrings) {
  const std::string nasty = std::string("a\"b\\c\nd\te") + '\x01' + '\x7f';
  const auto parsed = nlohmann::json::parse(json_string(nasty));
  EXPECT_EQ(parsed.get<std::string>(), nasty);
}

TEST(SpankTaskRecord, StartOnlyThenStartAndExit) {
  TaskRecord record;
  record.job_id = 77;
  record.step_id = kBatchStep;
  record.node = "n\"2";
  record.global_rank = 5;
  record.local_rank = 1;
  record.pid = 999;
  record.start_us = 1'000'000;
  std::istringstream start_only(record_text(record));
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(start_only, line)) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["event"], "task_start");
  EXPECT_EQ(lines[0]["node"], "n\"2");
  EXPECT_EQ(lines[0]["step"], "batch");
  EXPECT_EQ(lines[0]["step_id"], 4294967291u);

  record.end_us = 3'000'000;
  record.raw_status = SIGKILL;
  std::istringstream both(record_text(record));
  lines.clear();
  while (std::getline(both, line)) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["event"], "task_exit");
  EXPECT_EQ(lines[1]["global_rank"], 5);
  EXPECT_EQ(lines[1]["local_rank"], 1);
  EXPECT_EQ(lines[1]["pid"], 999);
  EXPECT_EQ(lines[1]["start_us"], 1'000'000);
  EXPECT_EQ(lines[1]["end_us"], 3'000'000);
  EXPECT_EQ(lines[1]["exit_code"], 0);
  EXPECT_EQ(lines[1]["signal"], 9);
  EXPECT_EQ(lines[1]["raw_status"], 9);
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "attrib-spank-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(SpankRecordFile, CreatesDirectoriesAndReplacesAtomically) {
  TempDir tmp;
  const std::string dir = (tmp.path() / "a" / "b" / "42").string();
  ASSERT_TRUE(ensure_directory(dir, 0755));
  ASSERT_TRUE(ensure_directory(dir, 0755)) << "existing directories are fine";
  ASSERT_TRUE(write_atomically(dir, "0.1.json", "first\n"));
  ASSERT_TRUE(write_atomically(dir, "0.1.json", "second\n"));
  EXPECT_EQ(slurp(fs::path(dir) / "0.1.json"), "second\n");
  // No temporary file is left behind.
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);
  struct stat st {};
  ASSERT_EQ(stat((fs::path(dir) / "0.1.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(SpankRecordFile, ReportsUnwritableDirectoryAsError) {
  TempDir tmp;
  const fs::path file = tmp.path() / "plain-file";
  std::ofstream(file) << "x";
  auto made = ensure_directory((file / "sub").string(), 0755);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, "SPANK_E_IO");
  auto written = write_atomically((tmp.path() / "missing").string(), "x.json", "x");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().code, "SPANK_E_IO");
}

}  // namespace
}  // namespace attrib::spank
