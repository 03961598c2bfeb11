// The SPANK callbacks against link-time fakes of slurmstepd/srun (fake_spank.cpp):
// what a task's record, environment and the logs look like for each option and
// plugstack argument, and that no callback ever returns an error to Slurm.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/hostname.h"
#include "tests/support/fake_spank.h"

namespace {

namespace fs = std::filesystem;
using fake_spank::fake;

class SpankCallbacks : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_spank::reset();
    std::string pattern = (fs::temp_directory_path() / "attrib-spank-cb-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    tmp_ = pattern;
    spool_arg_ = "spool_dir=" + (tmp_ / "spool" / "%n").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }

  // slurm_spank_init with these plugstack arguments; returns its return code.
  int init(std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    args_ = std::move(args);
    return slurm_spank_init(nullptr, static_cast<int>(argv.size()), argv.data());
  }
  // One task's life in slurmstepd: init_post_opt, task_init, post_fork, exit.
  void run_task(int raw_status) {
    EXPECT_EQ(slurm_spank_init_post_opt(nullptr, 0, nullptr), 0);
    EXPECT_EQ(slurm_spank_task_init(nullptr, 0, nullptr), 0);
    EXPECT_EQ(slurm_spank_task_post_fork(nullptr, 0, nullptr), 0);
    fake.exit_status = raw_status;
    EXPECT_EQ(slurm_spank_task_exit(nullptr, 0, nullptr), 0);
  }
  fs::path job_dir() const { return tmp_ / "spool" / attrib::short_hostname() / "42"; }
  std::vector<nlohmann::json> record(const std::string& name) const {
    std::ifstream in(job_dir() / name);
    std::vector<nlohmann::json> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
    return lines;
  }

  fs::path tmp_;
  std::string spool_arg_;
  std::vector<std::string> args_;
};

TEST_F(SpankCallbacks, RecordsTaskAndExportsIdentity) {
  ASSERT_EQ(init({spool_arg_}), 0);
  EXPECT_EQ(fake.registered_options, (std::vector<std::string>{"attrib", "attrib-evidence"}));
  run_task(7 << 8);
  const auto lines = record("0.3.json");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["event"], "task_start");
  EXPECT_EQ(lines[1]["event"], "task_exit");
  EXPECT_EQ(lines[1]["job_id"], 42);
  EXPECT_EQ(lines[1]["node"], attrib::short_hostname());
  EXPECT_EQ(lines[1]["global_rank"], 3);
  EXPECT_EQ(lines[1]["local_rank"], 1);
  EXPECT_EQ(lines[1]["pid"], 4321);
  EXPECT_EQ(lines[1]["exit_code"], 7);
  EXPECT_EQ(lines[1]["signal"], 0);
  EXPECT_EQ(lines[1]["start_us"], lines[0]["start_us"]) << "the exit line keeps the start time";
  EXPECT_GE(lines[1]["end_us"].get<int64_t>(), lines[1]["start_us"].get<int64_t>());
  EXPECT_EQ(fake.env["ATTRIB_JOB_ID"], "42");
  EXPECT_EQ(fake.env["ATTRIB_STEP_ID"], "0");
  EXPECT_EQ(fake.env["ATTRIB_RANK"], "3");
  EXPECT_EQ(fake.env.count("NCCL_DEBUG"), 0u) << "evidence settings only on request";
  EXPECT_TRUE(fake.errors.empty());
}

// An array task's records are filed under "<array job>_<task>", the id the daemon
// attributes; the record keeps Slurm's raw job id.
TEST_F(SpankCallbacks, ArrayTaskIsFiledUnderItsArrayId) {
  ASSERT_EQ(init({spool_arg_}), 0);
  fake.job_id = 45;
  fake.array_job_id = 43;
  fake.array_task_id = 2;
  run_task(0);
  std::ifstream in(tmp_ / "spool" / attrib::short_hostname() / "43_2" / "0.3.json");
  std::string first;
  ASSERT_TRUE(std::getline(in, first)) << "no record under 43_2";
  EXPECT_EQ(nlohmann::json::parse(first)["job_id"], 45);
  EXPECT_FALSE(fs::exists(tmp_ / "spool" / attrib::short_hostname() / "45"));
}

TEST_F(SpankCallbacks, BatchStepIsRecordedUnderItsName) {
  ASSERT_EQ(init({spool_arg_}), 0);
  fake.step_id = 4294967291u;
  fake.global_rank = 0;
  fake.local_rank = 0;
  run_task(SIGKILL);
  const auto lines = record("batch.0.json");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["step"], "batch");
  EXPECT_EQ(lines[1]["signal"], 9);
  EXPECT_EQ(fake.env["ATTRIB_STEP_ID"], "batch");
}

TEST_F(SpankCallbacks, UnknownArgumentMakesPluginInertWithOneSlurmdError) {
  fake.context = S_CTX_SLURMD;
  ASSERT_EQ(init({spool_arg_, "colour=blue"}), 0);
  ASSERT_EQ(fake.errors.size(), 1u);
  EXPECT_NE(fake.errors[0].find("unknown key 'colour'"), std::string::npos) << fake.errors[0];
  EXPECT_NE(fake.errors[0].find("inert"), std::string::npos);

  // The step's slurmstepd: options still accepted, nothing recorded or exported, and
  // only a debug message (the error was the slurmd's, once).
  fake_spank::reset();
  ASSERT_EQ(init({spool_arg_, "colour=blue"}), 0);
  EXPECT_EQ(fake.registered_options.size(), 2u);
  EXPECT_EQ(fake_spank::invoke_option("attrib-evidence", nullptr), 0);
  run_task(1 << 8);
  EXPECT_TRUE(fake.errors.empty());
  EXPECT_FALSE(fake.debugs.empty());
  EXPECT_FALSE(fs::exists(tmp_ / "spool"));
  EXPECT_TRUE(fake.env.empty());
}

TEST_F(SpankCallbacks, SlurmdCreatesTheNodeSpool) {
  fake.context = S_CTX_SLURMD;
  ASSERT_EQ(init({spool_arg_}), 0);
  EXPECT_TRUE(fs::is_directory(tmp_ / "spool" / attrib::short_hostname()));
  EXPECT_TRUE(fake.registered_options.empty()) << "slurmd takes no user options";
}

TEST_F(SpankCallbacks, OptOutHonouredOnlyWhenTheSiteAllowsIt) {
  ASSERT_EQ(init({spool_arg_}), 0);  // allow_opt_out defaults to no
  EXPECT_EQ(fake_spank::invoke_option("attrib", "off"), 0);
  run_task(0);
  EXPECT_EQ(record("0.3.json").size(), 2u) << "opt-out refused: still recorded";
  EXPECT_EQ(fake.env["ATTRIB_RANK"], "3");

  fake_spank::reset();
  fs::remove_all(tmp_ / "spool");
  ASSERT_EQ(init({spool_arg_, "allow_opt_out=yes"}), 0);
  EXPECT_EQ(fake_spank::invoke_option("attrib", "off"), 0);
  run_task(0);
  EXPECT_FALSE(fs::exists(job_dir()));
  EXPECT_EQ(fake.env.count("ATTRIB_RANK"), 0u);
}

TEST_F(SpankCallbacks, EvidenceOptInKeepsUserSettings) {
  ASSERT_EQ(init({spool_arg_, "nccl_trace_buffer_size=123"}), 0);
  EXPECT_EQ(fake_spank::invoke_option("attrib-evidence", nullptr), 0);
  fake.env["NCCL_DEBUG"] = "INFO";  // the user's own choice wins
  fake.uid = getuid();
  fake.gid = getgid();
  run_task(0);
  EXPECT_EQ(fake.env["NCCL_DEBUG"], "INFO");
  EXPECT_EQ(fake.env["TORCH_NCCL_TRACE_BUFFER_SIZE"], "123");
  EXPECT_EQ(fake.env["TORCH_NCCL_DUMP_ON_TIMEOUT"], "1");
  EXPECT_EQ(fake.env["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"], (job_dir() / "user" / "nccl_trace_rank_").string());
  EXPECT_TRUE(fs::is_directory(job_dir() / "user"));

  fake_spank::reset();
  ASSERT_EQ(init({spool_arg_}), 0);
  EXPECT_EQ(fake_spank::invoke_option("attrib-evidence", nullptr), 0);
  run_task(0);
  EXPECT_EQ(fake.env["NCCL_DEBUG"], "WARN");
}

TEST_F(SpankCallbacks, BadOptionValueRefusedLocallyIgnoredRemotely) {
  fake.context = S_CTX_ALLOCATOR;
  ASSERT_EQ(init({}), 0);
  EXPECT_EQ(fake_spank::invoke_option("attrib", "of"), -1);
  fake_spank::reset();
  fake.context = S_CTX_REMOTE;
  ASSERT_EQ(init({spool_arg_}), 0);
  EXPECT_EQ(fake_spank::invoke_option("attrib", "of"), 0);
}

TEST_F(SpankCallbacks, MissingItemsOrUnwritableSpoolNeverFailTheTask) {
  const fs::path blocker = tmp_ / "blocker";
  std::ofstream(blocker) << "not a directory";
  ASSERT_EQ(init({"spool_dir=" + blocker.string()}), 0);
  run_task(0);
  EXPECT_FALSE(fake.errors.empty()) << "the slurmd log says why records are missing";

  fake_spank::reset();
  ASSERT_EQ(init({spool_arg_}), 0);
  fake.global_rank.reset();
  run_task(0);
  EXPECT_FALSE(fs::exists(job_dir() / "0.3.json"));
}

}  // namespace
