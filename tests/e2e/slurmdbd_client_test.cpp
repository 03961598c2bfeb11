// The slurmdbd client against the real cluster started by scripts/cluster.sh (fixture
// `cluster`): real jobs are submitted with sbatch and their accounting records read back.
// Needs SLURM_CONF (set by CTest) and root.
#include "slurm/slurmdbd_client.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/clock.h"

using namespace attrib;
using namespace attrib::slurm;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> kAllNodes = {"n1", "n2", "n3"};

std::string cluster_name() {
  const char* name = std::getenv("ATTRIB_CLUSTER_NAME");
  return name ? name : "lab";
}

struct CommandResult {
  int status = -1;
  std::string output;
};

// Shell commands are fine in tests (the library itself never shells out).
CommandResult run(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  result.status = pclose(pipe);
  while (!result.output.empty() && (result.output.back() == '\n' || result.output.back() == ' ')) {
    result.output.pop_back();
  }
  return result;
}

// The jobs this test submitted: a test that fails half way must not leave one running,
// or the next test that needs the whole cluster waits for it and fails too.
std::vector<std::string> submitted_jobs;

// sbatch ARGS; returns the job id ("" on failure, with the reason in the test log).
std::string submit(const std::string& args) {
  CommandResult r = run("sbatch --parsable --output=/dev/null " + args);
  EXPECT_EQ(r.status, 0) << "sbatch " << args << ": " << r.output;
  if (r.status != 0) return "";
  std::string id = r.output.substr(0, r.output.find(';'));  // "<id>;<cluster>" on federated setups
  submitted_jobs.push_back(id);
  return id;
}

class SlurmdbdClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto opened = SlurmdbdConnection::open();
    ASSERT_TRUE(opened.ok()) << opened.error().code << ": " << opened.error().message;
    connection_ = std::move(*opened);
  }
  static void TearDownTestSuite() { connection_.reset(); }

  void SetUp() override { ASSERT_NE(connection_, nullptr) << "no slurmdbd connection"; }
  void TearDown() override {
    for (const std::string& id : submitted_jobs) run("scancel " + id);
    submitted_jobs.clear();
  }

  // Polls until the record is final (the accounting record lags the job's end).
  static AccountingRecord wait_final(const std::string& job_id, std::chrono::seconds timeout = 60s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string last = "no read yet";
    while (std::chrono::steady_clock::now() < deadline) {
      auto record = connection_->read_job(cluster_name(), job_id);
      if (record.ok()) {
        if (record->is_final()) return *record;
        last = "state " + record->state + " name " + record->job_name + " nodes " + record->node_expr;
      } else {
        last = record.error().code + ": " + record.error().message;
      }
      std::this_thread::sleep_for(100ms);
    }
    ADD_FAILURE() << "job " << job_id << " never became final; last read: " << last;
    return {};
  }

  // Waits until slurmctld runs the job.
  static bool wait_running(const std::string& job_id) {
    for (int i = 0; i < 300; ++i) {
      if (run("squeue -h -j " + job_id + " -o %T").output == "RUNNING") return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }

  static inline std::unique_ptr<SlurmdbdConnection> connection_;
};

TEST(ExpandHostlist, ExpandsRangesAndLists) {
  EXPECT_EQ(expand_hostlist("n[1-3]"), (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(expand_hostlist("gpu[07-08],login"), (std::vector<std::string>{"gpu07", "gpu08", "login"}));
  EXPECT_EQ(expand_hostlist("n2"), (std::vector<std::string>{"n2"}));
  EXPECT_TRUE(expand_hostlist("").empty());
  EXPECT_TRUE(expand_hostlist("None assigned").empty());
}

StepRecord step(const std::string& id, uint32_t ntasks, const std::string& layout) {
  StepRecord s;
  s.step_id = id;
  s.nodes = kAllNodes;
  s.ntasks = ntasks;
  s.layout = layout;
  return s;
}

TEST(StepRankNodes, MapsOnlyLayoutsTheRecordDetermines) {
  using Ranks = std::map<int, std::string>;
  EXPECT_EQ(step_rank_nodes(step("9.0", 3, "Block")), (Ranks{{0, "n1"}, {1, "n2"}, {2, "n3"}}));
  EXPECT_EQ(step_rank_nodes(step("9.0", 3, "Plane")), (Ranks{{0, "n1"}, {1, "n2"}, {2, "n3"}}));
  EXPECT_EQ(step_rank_nodes(step("9.0", 6, "Block")),
            (Ranks{{0, "n1"}, {1, "n1"}, {2, "n2"}, {3, "n2"}, {4, "n3"}, {5, "n3"}}));
  EXPECT_EQ(step_rank_nodes(step("9.0", 6, "Cyclic")),
            (Ranks{{0, "n1"}, {1, "n2"}, {2, "n3"}, {3, "n1"}, {4, "n2"}, {5, "n3"}}));
  // Not determined by node list + task count + distribution: no guess.
  EXPECT_TRUE(step_rank_nodes(step("9.0", 4, "Block")).empty());
  EXPECT_TRUE(step_rank_nodes(step("9.0", 6, "Arbitrary")).empty());
  EXPECT_TRUE(step_rank_nodes(step("9.0", 6, "Plane")).empty());
  EXPECT_TRUE(step_rank_nodes(step("9.0", 0, "Block")).empty());
}

TEST(JobRankNodes, TakesTheLargestNumberedStep) {
  std::vector<StepRecord> steps = {step("9.batch", 1, "Block"), step("9.extern", 3, "Block"), step("9.0", 3, "Cyclic"),
                                   step("9.1", 6, "Cyclic"), step("9.2", 6, "Block")};
  EXPECT_EQ(job_rank_nodes(steps).at(3), "n1");                // 9.1, the first of the two largest
  EXPECT_EQ(job_rank_nodes({steps[0], steps[1]}).size(), 0u);  // no numbered step
}

TEST(ParseJobRef, AcceptsPlainArrayAndHetIds) {
  auto plain = parse_job_ref("4242");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->job_id, 4242u);
  EXPECT_FALSE(plain->array_task_id);
  EXPECT_FALSE(plain->het_job_offset);

  auto array = parse_job_ref("4242_7");
  ASSERT_TRUE(array.ok());
  EXPECT_EQ(array->job_id, 4242u);
  EXPECT_EQ(array->array_task_id, 7u);

  auto het = parse_job_ref("4242+1");
  ASSERT_TRUE(het.ok());
  EXPECT_EQ(het->job_id, 4242u);
  EXPECT_EQ(het->het_job_offset, 1u);

  for (const char* bad : {"", "abc", "42_", "42+x", "0", "-1", "42 "}) {
    auto r = parse_job_ref(bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "'";
    EXPECT_EQ(r.error().code, kSlurmdbBadJobId);
  }
}

TEST_F(SlurmdbdClientTest, ExitThreeIsFailedThreeZero) {
  std::string id = submit("--job-name=exit3 --wrap 'exit 3'");
  ASSERT_FALSE(id.empty());
  AccountingRecord r = wait_final(id);
  EXPECT_EQ(r.job_id, id);
  EXPECT_EQ(r.cluster, cluster_name());
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.raw_exit_status, 768u);
  EXPECT_EQ(r.job_name, "exit3");
  EXPECT_EQ(r.user, "root");
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].substr(0, 1), "n");
  ASSERT_TRUE(r.start && r.end);
  EXPECT_LE(*r.start, *r.end);
  EXPECT_EQ(r.requeue_count, 0);

  JobFacts facts = r.to_job_facts();
  EXPECT_EQ(facts.state, "FAILED");
  EXPECT_EQ(facts.exit_code, 3);
  EXPECT_EQ(facts.nodes, r.nodes);
}

TEST_F(SlurmdbdClientTest, SuccessIsCompletedZeroZero) {
  std::string id = submit("--wrap 'true'");
  ASSERT_FALSE(id.empty());
  AccountingRecord r = wait_final(id);
  EXPECT_EQ(r.state, "COMPLETED");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.signal, 0);
}

TEST_F(SlurmdbdClientTest, KilledBySignalKeepsTheSignal) {
  std::string id = submit("--wrap 'kill -9 $$'");
  ASSERT_FALSE(id.empty());
  AccountingRecord r = wait_final(id);
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.signal, 9);
}

TEST_F(SlurmdbdClientTest, ScancelIsCancelled) {
  std::string id = submit("--wrap 'sleep 300'");
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(wait_running(id)) << "job " << id << " never ran";
  auto running = connection_->read_job(cluster_name(), id);
  ASSERT_TRUE(running.ok()) << running.error().message;
  EXPECT_FALSE(running->is_final());
  ASSERT_EQ(run("scancel " + id).status, 0);
  AccountingRecord r = wait_final(id);
  EXPECT_EQ(r.state, "CANCELLED");
  EXPECT_EQ(r.nodes.size(), 1u);
}

TEST_F(SlurmdbdClientTest, CancelledWhilePendingIsFinalWithoutNodes) {
  std::string id = submit("--hold --wrap 'true'");
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(run("scancel " + id).status, 0);
  AccountingRecord r = wait_final(id);
  EXPECT_EQ(r.state, "CANCELLED");
  EXPECT_TRUE(r.nodes.empty());
  EXPECT_TRUE(r.end);  // (Slurm records start = end for a held job it cancels)
}

// Reads the record every 50 ms from submission on: the first read that says "final"
// must already hold the values every later read shows for 5 s (the record lags the
// job's end by 2.5-5 s; that lag must not leak through is_final()).
TEST_F(SlurmdbdClientTest, ThreeNodeJobExpandsAndFinalNeverChanges) {
  std::string id = submit("--nodes=3 --job-name=three --wrap 'srun true'");
  ASSERT_FALSE(id.empty());
  std::optional<AccountingRecord> first_final;
  int reads_after_final = 0;
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto record = connection_->read_job(cluster_name(), id);
    if (record.ok() && record->is_final()) {
      if (!first_final) {
        first_final = *record;
        deadline = std::chrono::steady_clock::now() + 5s;
      } else {
        ++reads_after_final;
        EXPECT_EQ(record->state, first_final->state);
        EXPECT_EQ(record->job_name, first_final->job_name);
        EXPECT_EQ(record->nodes, first_final->nodes);
        EXPECT_EQ(record->end, first_final->end);
      }
    } else if (first_final) {
      ADD_FAILURE() << "record of job " << id << " stopped being final";
    }
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(first_final) << "job " << id << " never became final";
  EXPECT_GT(reads_after_final, 10);
  EXPECT_EQ(first_final->state, "COMPLETED");
  EXPECT_EQ(first_final->job_name, "three");
  EXPECT_EQ(first_final->nodes, kAllNodes);
  EXPECT_EQ(first_final->node_expr, "n[1-3]");
}

TEST_F(SlurmdbdClientTest, WriteCommentKeepsExactText) {
  std::string id = submit("--comment='user note' --wrap 'exit 1'");
  ASSERT_FALSE(id.empty());
  AccountingRecord before = wait_final(id);
  EXPECT_EQ(before.comment, "user note");

  const std::string comment = "user note | attrib: APPLICATION  Exit=1:0 | Mixed Case key=value=x | rule=app.exit  ";
  Status written = connection_->write_comment(cluster_name(), id, comment);
  ASSERT_TRUE(written.ok()) << written.error().code << ": " << written.error().message;

  auto after = connection_->read_job(cluster_name(), id);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->comment, comment);
  EXPECT_EQ(after->state, "FAILED");  // nothing else changed
  EXPECT_EQ(after->exit_code, 1);
  // sacct (another client) sees the same text.
  EXPECT_EQ(run("sacct -n -X -P -j " + id + " -o Comment").output,
            comment.substr(0, comment.find_last_not_of(' ') + 1));  // sacct trims trailing blanks

  // A second write replaces the first.
  ASSERT_TRUE(connection_->write_comment(cluster_name(), id, "second").ok());
  auto again = connection_->read_job(cluster_name(), id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->comment, "second");
}

// The head's batch of comments (write_comments): one transaction, each job its own text,
// an unknown id failing alone, committed so that other clients see it; the batch costs
// slurmdbd a request a write, one read-back and one commit.
TEST_F(SlurmdbdClientTest, WritesSeveralCommentsInOneTransaction) {
  const std::string plain = submit("--comment='user note' --wrap 'exit 1'");
  const std::string array = submit("--array=1-2 --wrap 'exit 0'");
  ASSERT_FALSE(plain.empty() || array.empty());
  wait_final(plain);
  wait_final(array + "_1");
  wait_final(array + "_2");
  const std::vector<CommentWrite> writes = {{cluster_name(), plain, "user note | attrib: APPLICATION one"},
                                            {cluster_name(), array + "_2", "attrib: NONE task two"},
                                            {cluster_name(), "987654", "x"},
                                            {cluster_name(), array + "_1", "attrib: NONE task one"}};
  const uint64_t requests_before = slurmdbd_requests();
  const std::vector<Status> written = connection_->write_comments(writes);
  EXPECT_EQ(slurmdbd_requests() - requests_before, writes.size() + 2) << "a write each, one read-back, one commit";
  ASSERT_EQ(written.size(), writes.size());
  for (size_t i : {0, 1, 3}) EXPECT_TRUE(written[i].ok()) << writes[i].job_id << ": " << written[i].error().message;
  ASSERT_FALSE(written[2].ok());
  EXPECT_EQ(written[2].error().code, kSlurmdbNotFound);
  for (size_t i : {0, 1, 3}) {
    auto after = connection_->read_job(cluster_name(), writes[i].job_id);
    ASSERT_TRUE(after.ok()) << after.error().message;
    EXPECT_EQ(after->comment, writes[i].comment) << writes[i].job_id;
  }
  EXPECT_EQ(run("sacct -n -X -P -j " + plain + " -o Comment").output, writes[0].comment);
}

// head.comment_field: AdminComment and SystemComment are written and read back like the
// Comment, each on its own, and sacct shows each in its column.
TEST_F(SlurmdbdClientTest, WritesEachCommentFieldOnItsOwn) {
  std::string id = submit("--comment='user note' --wrap 'exit 0'");
  ASSERT_FALSE(id.empty());
  wait_final(id);
  ASSERT_TRUE(connection_->write_comment(cluster_name(), id, "attrib: NONE admin", CommentField::kAdminComment).ok());
  ASSERT_TRUE(connection_->write_comment(cluster_name(), id, "attrib: NONE system", CommentField::kSystemComment).ok());
  auto after = connection_->read_job(cluster_name(), id);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->comment, "user note");
  EXPECT_EQ(after->comment_in(CommentField::kAdminComment), "attrib: NONE admin");
  EXPECT_EQ(after->comment_in(CommentField::kSystemComment), "attrib: NONE system");
  EXPECT_EQ(run("sacct -n -X -P -j " + id + " -o Comment,AdminComment,SystemComment").output,
            "user note|attrib: NONE admin|attrib: NONE system");
}

// A requeued job keeps one row per attempt (sacct -D). When attempt 0's hooks run, the
// next attempt's row may already be there (pending, or even started within the same
// second: slurmdbd keeps whole seconds): attempt 0 read by its own start is the first
// (REQUEUED, final, number 0), the newest row is the second. The Comment lives on the
// newest row.
TEST_F(SlurmdbdClientTest, RequeuedJobIsReadPerAttempt) {
  std::string id = submit(
      "--requeue --comment='user note' --wrap "
      "'if [ \"${SLURM_RESTART_COUNT:-0}\" = 0 ]; then sleep 300; else exit 7; fi'");
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(wait_running(id)) << "job " << id << " never ran";
  // slurmctld tells slurmdbd of the start through its agent queue, which lags on a busy
  // machine: squeue may say RUNNING before the accounting row has its start time.
  auto running = connection_->read_job(cluster_name(), id);
  for (int i = 0; i < 300 && !(running.ok() && running->start); ++i) {
    std::this_thread::sleep_for(100ms);
    running = connection_->read_job(cluster_name(), id);
  }
  ASSERT_TRUE(running.ok() && running->start) << "no start time while running";
  const TimeUs start0 = *running->start;  // what attempt 0's jobcomp/script reports as START
  std::this_thread::sleep_for(1s);
  ASSERT_EQ(run("scontrol requeue " + id).status, 0);
  std::optional<AccountingRecord> first, second;
  for (int i = 0; i < 600 && !(first && second); ++i) {
    // Slurm holds a requeued job for two minutes (BeginTime); let attempt 1 start now.
    // The update is refused while the job is still completing, so it is repeated.
    if (!second && i % 10 == 0) run("scontrol update jobid=" + id + " StartTime=now");
    if (!first)
      if (auto read = connection_->read_job(cluster_name(), id, false, start0); read.ok() && read->is_final())
        first = *read;
    if (!second)
      if (auto read = connection_->read_job(cluster_name(), id);
          read.ok() && read->is_final() && read->requeue_count == 1)
        second = *read;
    if (!(first && second)) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(first) << "attempt 0 of job " << id << " never became final";
  ASSERT_TRUE(second) << "attempt 1 of job " << id << " never became final";
  EXPECT_EQ(first->state, "REQUEUED");
  EXPECT_EQ(first->requeue_count, 0);
  EXPECT_EQ(first->start, start0);
  EXPECT_EQ(second->state, "FAILED");
  ASSERT_TRUE(second->start && first->end);
  EXPECT_GE(*second->start, *first->end);
  // Read at a time after attempt 1 started, the attempt is the second.
  auto later = connection_->read_job(cluster_name(), id, false, wall_clock_us());
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->requeue_count, 1);
  EXPECT_EQ(later->state, "FAILED");

  // slurmdbd writes the Comment on one row: the newest, as sacct -D shows.
  ASSERT_TRUE(connection_->write_comment(cluster_name(), id, "written").ok());
  EXPECT_EQ(run("sacct -D -n -X -P -j " + id + " -o State,Comment").output, "REQUEUED|user note\nFAILED|written");
  auto read_back = connection_->read_job(cluster_name(), id, false, start0);
  ASSERT_TRUE(read_back.ok());
  EXPECT_EQ(read_back->state, "REQUEUED");
  EXPECT_EQ(read_back->comment, "written");  // the job's current Comment, whichever attempt is read
}

// The sweep's listing: a job that ended inside the window is there (with its own id),
// one that ended before it is not; a job's attempts come oldest first.
TEST_F(SlurmdbdClientTest, EndedAttemptsListsTheJobsThatEndedInTheWindow) {
  const TimeUs before = wall_clock_us() - 2000000;
  std::string id = submit("--wrap 'exit 4'");
  ASSERT_FALSE(id.empty());
  AccountingRecord done = wait_final(id);
  const TimeUs after = wall_clock_us() + 2000000;
  auto listed = connection_->ended_attempts(cluster_name(), before, after);
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  auto found = std::find_if(listed->begin(), listed->end(), [&](const AccountingRecord& r) { return r.job_id == id; });
  ASSERT_NE(found, listed->end()) << listed->size() << " attempts listed, none is job " << id;
  EXPECT_EQ(found->state, "FAILED");
  EXPECT_EQ(found->end, done.end);
  EXPECT_EQ(found->submit, done.submit);
  auto later = connection_->ended_attempts(cluster_name(), after, after + 60000000);
  ASSERT_TRUE(later.ok());
  EXPECT_TRUE(std::none_of(later->begin(), later->end(), [&](const AccountingRecord& r) { return r.job_id == id; }));
  auto attempts = connection_->job_attempts(cluster_name(), id);
  ASSERT_TRUE(attempts.ok()) << attempts.error().message;
  ASSERT_EQ(attempts->size(), 1u);
  EXPECT_EQ(attempts->front().requeue_count, 0);
}

// The step layout as slurmdbd records it: srun -n6 over three nodes, block and cyclic.
TEST_F(SlurmdbdClientTest, StepLayoutMapsRanksToNodes) {
  std::string id = submit("--nodes=3 --ntasks=6 --wrap 'srun -n3 true; srun -n6 -m cyclic true; srun -n6 true'");
  ASSERT_FALSE(id.empty());
  wait_final(id);
  auto record = connection_->read_job(cluster_name(), id, /*with_steps=*/true);
  ASSERT_TRUE(record.ok()) << record.error().message;
  std::map<std::string, const StepRecord*> by_id;
  for (const StepRecord& s : record->steps) by_id[s.step_id] = &s;
  ASSERT_TRUE(by_id.count(id + ".1") && by_id.count(id + ".2")) << record->steps.size() << " steps";
  EXPECT_EQ(by_id[id + ".1"]->ntasks, 6u);
  EXPECT_EQ(by_id[id + ".1"]->layout, "Cyclic");
  EXPECT_EQ(by_id[id + ".2"]->layout, "Block");
  EXPECT_EQ(step_rank_nodes(*by_id[id + ".1"]).at(4), "n2");
  // The job's ranks come from the first six-task step (cyclic): rank 4 ran on n2.
  JobFacts facts = record->to_job_facts();
  ASSERT_EQ(facts.ranks.size(), 6u);
  EXPECT_EQ(facts.ranks.at(4), "n2");
  EXPECT_EQ(facts.ranks.at(5), "n3");
}

TEST_F(SlurmdbdClientTest, ArrayTasksAreAddressedByTaskId) {
  std::string array_id = submit("--array=1-2 --wrap 'exit $SLURM_ARRAY_TASK_ID'");
  ASSERT_FALSE(array_id.empty());
  AccountingRecord task1 = wait_final(array_id + "_1");
  AccountingRecord task2 = wait_final(array_id + "_2");
  EXPECT_EQ(task1.state, "FAILED");
  EXPECT_EQ(task1.exit_code, 1);
  EXPECT_EQ(task1.array_task_id, 1u);
  EXPECT_EQ(task2.exit_code, 2);
  EXPECT_EQ(task2.array_job_id, std::stoul(array_id));
  EXPECT_NE(task1.db_job_id, task2.db_job_id);

  // The raw id of a task reads the same record.
  auto by_raw_id = connection_->read_job(cluster_name(), std::to_string(task1.db_job_id));
  ASSERT_TRUE(by_raw_id.ok()) << by_raw_id.error().message;
  EXPECT_EQ(by_raw_id->exit_code, 1);
  EXPECT_EQ(by_raw_id->requeue_count, 0);

  // A comment on one task does not touch the other.
  ASSERT_TRUE(connection_->write_comment(cluster_name(), array_id + "_2", "task two").ok());
  auto t1 = connection_->read_job(cluster_name(), array_id + "_1");
  auto t2 = connection_->read_job(cluster_name(), array_id + "_2");
  ASSERT_TRUE(t1.ok() && t2.ok());
  EXPECT_EQ(t2->comment, "task two");
  EXPECT_EQ(t1->comment, "");
}

TEST_F(SlurmdbdClientTest, HetJobComponentsAreAddressedByOffset) {
  // Component 0 on one node, component 1 on two; the batch script runs in component 0.
  CommandResult submitted =
      run("printf '#!/bin/sh\\n#SBATCH -N1 --output=/dev/null\\n#SBATCH hetjob\\n#SBATCH -N2\\n"
          "srun --het-group=1 true\\nexit 4\\n' | sbatch --parsable");
  ASSERT_EQ(submitted.status, 0) << submitted.output;
  std::string het_id = submitted.output.substr(0, submitted.output.find(';'));
  AccountingRecord leader = wait_final(het_id + "+0");
  AccountingRecord second = wait_final(het_id + "+1");
  EXPECT_EQ(leader.state, "FAILED");
  EXPECT_EQ(leader.exit_code, 4);
  EXPECT_EQ(leader.nodes.size(), 1u);
  EXPECT_EQ(second.nodes.size(), 2u);
  EXPECT_NE(leader.db_job_id, second.db_job_id);
  // The het job's own id reads the whole job (the joint verdict's record): every
  // component's nodes, each component's state, the first failing component's exit.
  auto whole = connection_->read_job(cluster_name(), het_id);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  std::vector<std::string> all_nodes = leader.nodes;
  all_nodes.insert(all_nodes.end(), second.nodes.begin(), second.nodes.end());
  EXPECT_EQ(whole->nodes, all_nodes);
  ASSERT_EQ(whole->components.size(), 2u);
  EXPECT_EQ(whole->components[0].job_id, het_id + "+0");
  EXPECT_EQ(whole->components[1].nodes, second.nodes);
  EXPECT_EQ(whole->exit_code, 4);
  EXPECT_TRUE(whole->is_final());

  ASSERT_TRUE(connection_->write_comment(cluster_name(), het_id + "+1", "component one").ok());
  auto one = connection_->read_job(cluster_name(), het_id + "+1");
  auto zero = connection_->read_job(cluster_name(), het_id + "+0");
  ASSERT_TRUE(one.ok() && zero.ok());
  EXPECT_EQ(one->comment, "component one");
  EXPECT_EQ(zero->comment, "");
}

TEST_F(SlurmdbdClientTest, UnknownJobIsNotFound) {
  auto r = connection_->read_job(cluster_name(), "987654");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, kSlurmdbNotFound);

  Status w = connection_->write_comment(cluster_name(), "987654", "x");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, kSlurmdbNotFound);

  auto other_cluster = connection_->read_job("no-such-cluster", "1");
  ASSERT_FALSE(other_cluster.ok());
  EXPECT_EQ(other_cluster.error().code, kSlurmdbNotFound);

  auto bad = connection_->read_job(cluster_name(), "not-a-job");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, kSlurmdbBadJobId);
}

}  // namespace
