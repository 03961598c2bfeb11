// The head daemon in-process: real gRPC server on a Unix socket, real SQLite archive,
// real journald collector over journal files written by systemd-journal-remote, the
// shipped rule pack. Only slurmdbd is replaced (by an in-memory accounting record);
// the real one is exercised by the end-to-end suite.
#include "attributiond/head/head_daemon.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "attrib/v1/attrib.grpc.pb.h"
#include "attributiond/node/node_collect_service.h"
#include "collectors/registry.h"
#include "common/evidence_archive.h"
#include "common/spool.h"
#include "core/clock.h"
#include "core/json_text.h"
#include "rules/evidence/bundle.h"
#include "rules/evidence/bundle_export.h"
#include "tests/support/head_test_config.h"
#include "tests/support/memory_accounting.h"
#include "tests/support/rule_test_support.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using namespace attrib;
using namespace std::chrono_literals;

namespace {

constexpr TimeUs kSecond = 1000000;

// slurmdbd stand-in (tests/support/memory_accounting.h): the record turns final only after
// `lag_reads` reads, like the real accounting record that lags the hook by seconds.
using test::MemoryAccounting;
using AccountingState = MemoryAccounting::State;

}  // namespace

class HeadDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = test::head_test_config("attrib-head", attrib::test::rules_pack_dir(), dir_);
    config_.head.retry_backoff_s = 1;
    state_ = std::make_shared<AccountingState>();
  }
  void TearDown() override {
    daemon_.reset();
    for (auto& [node, agent] : agents_) agent.server->Shutdown();
    agents_.clear();
    fs::remove_all(dir_);
  }

  void Inject(const std::string& host, TimeUs time, const std::vector<std::string>& args, const std::string& message,
              const std::string& journal = "journal") {
    std::string cmd = std::string(attrib::test::scripts_dir()) + "/journal-inject.sh --dir " + (dir_ / journal).string() +
                      " --host " + host + " --time-us " + std::to_string(time);
    for (const auto& a : args) cmd += " " + a;
    std::string quoted;  // single-quoted for sh, with embedded quotes closed and escaped
    for (char c : message) quoted += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    cmd += " -- '" + quoted + "' >/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  void Start() {
    auto store = store::JobStore::open(config_.head.database);
    ASSERT_TRUE(store) << store.error().message;
    auto pack = rules::load_rule_pack({config_.rules_pack_dir, {}});
    ASSERT_TRUE(pack) << pack.error().message;
    YAML::Node options;
    options["directory"] = (dir_ / "journal").string();
    options["match_hostname"] = true;
    options["app_identifiers"].push_back("python3");
    std::vector<std::unique_ptr<collectors::Collector>> list;
    if (!config_.head.agents.enabled()) {  // with agents the head has no log source of its own
      auto journald = collectors::create_collector("journald", options);
      ASSERT_TRUE(journald) << journald.error().message;
      list.push_back(std::move(*journald));
    }
    for (auto& extra : extra_collectors_) list.push_back(std::move(extra));
    auto state = state_;
    daemon_ = std::make_unique<head::HeadDaemon>(config_, std::move(*store), *pack, std::move(list),
                                                 [state] { return std::make_unique<MemoryAccounting>(state); });
    if (drainer_) daemon_->set_node_drainer(std::move(drainer_));
    auto started = daemon_->start();
    ASSERT_TRUE(started) << started.error().message;
    stub_ = v1::Attribution::NewStub(grpc::CreateChannel(config_.head.listen[0], grpc::InsecureChannelCredentials()));
  }

  void AddRecord(const std::string& job_id, const std::string& state, int exit_code, TimeUs start, TimeUs end,
                 const std::string& comment = "") {
    slurm::JobRecordFacts record;
    record.facts.job_id = job_id;
    record.facts.cluster = "lab";
    record.facts.state = state;
    record.facts.exit_code = exit_code;
    record.facts.start = start;
    record.facts.end = end;
    record.facts.nodes = {"n1", "n2", "n3"};
    record.comment = comment;
    record.submit = start;  // one attempt: its row's submit time
    std::lock_guard lock(state_->mutex);
    state_->records[job_id] = record;
  }

  grpc::Status Submit(const std::string& job_id, v1::SubmitResponse* response, const std::string& nodes = "n[1-3]") {
    v1::JobEnded job;
    job.set_job_id(job_id);
    job.set_node_list(nodes);
    job.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    return stub_->SubmitJobEnded(&context, job, response);
  }

  // The job's archived raw evidence, asked for over GetVerdict, replays offline to its
  // archived verdict byte for byte; returns the bundle's files.
  common::PackedFiles ExpectRawEvidenceReplaysToTheVerdict(const std::string& job_id) {
    grpc::ClientContext context;
    v1::GetVerdictRequest request;
    request.set_job_id(job_id);
    request.set_include_evidence(true);
    v1::GetVerdictResponse answer;
    EXPECT_TRUE(stub_->GetVerdict(&context, request, &answer).ok());
    EXPECT_FALSE(answer.evidence_bundle().empty()) << answer.evidence_note();
    EXPECT_TRUE(answer.evidence_complete()) << answer.evidence_note();
    auto files = common::unpack_evidence(answer.evidence_bundle());
    if (!files) {
      ADD_FAILURE() << files.error().message;
      return {};
    }
    const fs::path bundle = dir_ / ("exported-" + job_id);
    EXPECT_TRUE(rules::write_bundle_files(bundle, *files).ok());
    auto replayed = rules::replay_bundle(bundle, test::shipped_pack());
    if (!replayed) {
      ADD_FAILURE() << replayed.error().message;
      return *files;
    }
    // The same evidence gives the same verdict; only the archive knows its run.
    replayed->run = nlohmann::json::parse(answer.verdict_json()).at("run").get<int64_t>();
    EXPECT_EQ(json_text(to_json(*replayed)), answer.verdict_json());
    return *files;
  }

  // Polls GetVerdict until the job is done; returns the verdict JSON.
  nlohmann::json WaitDone(const std::string& job_id) {
    for (int i = 0; i < 500; ++i) {
      grpc::ClientContext context;
      v1::GetVerdictRequest request;
      request.set_job_id(job_id);
      v1::GetVerdictResponse response;
      auto status = stub_->GetVerdict(&context, request, &response);
      if (status.ok() && response.status() == "done") return nlohmann::json::parse(response.verdict_json());
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "job " << job_id << " not attributed within 10 s";
    return {};
  }

  // A real node agent (NodeCollectService on its own Unix socket) reading its own
  // journal directory, as `attributiond --role node` does on a compute node.
  struct Agent {
    std::unique_ptr<node::NodeCollectService> service;
    std::unique_ptr<grpc::Server> server;
  };
  std::string StartAgent(const std::string& node, std::vector<std::unique_ptr<collectors::Collector>> extra = {}) {
    YAML::Node options;
    options["directory"] = (dir_ / ("journal-" + node)).string();
    options["match_hostname"] = false;  // a node's own journal
    options["app_identifiers"].push_back("python3");
    auto journald = collectors::create_collector("journald", options);
    EXPECT_TRUE(journald) << journald.error().message;
    std::vector<std::unique_ptr<collectors::Collector>> list;
    list.push_back(std::move(*journald));
    for (auto& c : extra) list.push_back(std::move(c));
    auto pack = rules::load_rule_pack({config_.rules_pack_dir, {}});
    EXPECT_TRUE(pack);
    Agent agent;
    agent.service =
        std::make_unique<node::NodeCollectService>(node, *pack, std::move(list), common::Authenticator::none());
    std::string address = "unix://" + (dir_ / ("agent-" + node + ".sock")).string();
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address, grpc::InsecureServerCredentials());
    builder.RegisterService(agent.service.get());
    agent.server = builder.BuildAndStart();
    EXPECT_TRUE(agent.server);
    agents_[node] = std::move(agent);
    return address;
  }
  void StopAgent(const std::string& node) {
    agents_[node].server->Shutdown();
    agents_.erase(node);
  }

  fs::path dir_;
  std::map<std::string, Agent> agents_;
  common::Config config_;
  std::shared_ptr<AccountingState> state_;
  std::unique_ptr<head::HeadDaemon> daemon_;
  std::unique_ptr<v1::Attribution::Stub> stub_;
  std::unique_ptr<slurm::NodeDrainer> drainer_;                           // replaces libslurm's with remediation on
  std::vector<std::unique_ptr<collectors::Collector>> extra_collectors_;  // besides the journal
};

namespace {

// A source whose reading throws for one job, as a bug on some input would.
class ThrowingCollector : public collectors::Collector {
 public:
  explicit ThrowingCollector(std::string job_id) : job_id_(std::move(job_id)) {}
  std::string name() const override { return "throwing"; }
  std::vector<Coverage> collect(const collectors::CollectRequest& request, const collectors::LineSink&) override {
    if (request.job_id == job_id_) throw std::runtime_error("evidence of job " + job_id_ + " breaks the parser");
    return {};
  }

 private:
  std::string job_id_;
};

}  // namespace

// A job whose attempt throws is that attempt's failure: retried with backoff, given up
// after head.max_failures (dead-lettered, listed by ListFailed), while the daemon keeps
// attributing the other jobs.
TEST_F(HeadDaemonTest, AJobThatThrowsIsGivenUpAndTheNextJobIsAttributed) {
  config_.head.retry_backoff_s = 1;
  config_.head.retry_max_backoff_s = 1;
  config_.head.max_failures = 2;
  AddRecord("66", "FAILED", 1, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond);
  AddRecord("67", "FAILED", 3, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond);
  extra_collectors_.push_back(std::make_unique<ThrowingCollector>("66"));
  Start();
  v1::SubmitResponse response;
  ASSERT_TRUE(Submit("66", &response).ok());
  ASSERT_TRUE(Submit("67", &response).ok());
  EXPECT_EQ(WaitDone("67")["terminal_state"], "FAILED");

  std::string status, last_error;
  for (int i = 0; i < 300 && status != "failed"; ++i) {
    grpc::ClientContext context;
    v1::GetVerdictRequest request;
    request.set_job_id("66");
    v1::GetVerdictResponse answer;
    ASSERT_TRUE(stub_->GetVerdict(&context, request, &answer).ok());
    status = answer.status();
    last_error = answer.last_error();
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(status, "failed");
  EXPECT_NE(last_error.find("exception: evidence of job 66 breaks the parser"), std::string::npos) << last_error;

  grpc::ClientContext context;
  v1::FailedListRequest request;
  v1::FleetReport report;
  ASSERT_TRUE(stub_->ListFailed(&context, request, &report).ok());
  auto listed = nlohmann::json::parse(report.json());
  ASSERT_EQ(listed["jobs"].size(), 1u) << listed.dump();
  EXPECT_EQ(listed["jobs"][0]["job_id"], "66");
  EXPECT_EQ(listed["jobs"][0]["failures"], 2);
  EXPECT_NE(daemon_->metrics_registry().render().find("attrib_jobs_dead_lettered_total{step=\"exception\"} 1"),
            std::string::npos);
}

// One byte that is not UTF-8 in a kernel line (a crashing binary may be named anything)
// must not fail the archive, nor the daemon: it is stored as U+FFFD.
TEST_F(HeadDaemonTest, InvalidUtf8InEvidenceIsReplacedAndTheJobArchived) {
  TimeUs start = wall_clock_us() - 60 * kSecond;
  TimeUs end = wall_clock_us() - 10 * kSecond;
  Inject(
      "n1", start + 20 * kSecond, {"--transport", "kernel", "--uid", "0"},
      "python3[4242]: segfault at 0 ip 000055cb0cc2d139 sp 00007ffe4f290af0 error 6 in a\xff.out[55cb0cc2d000+1000]");
  AddRecord("68", "FAILED", 1, start, end);
  Start();
  v1::SubmitResponse response;
  ASSERT_TRUE(Submit("68", &response).ok());
  auto verdict = WaitDone("68");
  EXPECT_EQ(verdict["domain"], "APPLICATION");
  EXPECT_EQ(verdict["root_cause"]["event"]["fields"]["object"], "a\xEF\xBF\xBD.out");
}

TEST_F(HeadDaemonTest, XidOnOneNodeBecomesTheVerdictAndTheComment) {
  TimeUs start = wall_clock_us() - 60 * kSecond;
  TimeUs end = wall_clock_us() - 10 * kSecond;
  Inject("n2", start + 20 * kSecond, {"--transport", "kernel", "--uid", "0"},
         "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  for (const char* host : {"n1", "n3"})
    Inject(host, start + 30 * kSecond, {"--transport", "stdout", "--identifier", "python3", "--uid", "1000"},
           "[rank0]:[E1130 10:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
           "operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, "
           "Timeout(ms)=600000) ran for 600060 milliseconds before timing out.");
  // Outside the window: must not count.
  Inject("n1", end + 30 * kSecond, {"--transport", "kernel", "--uid", "0"},
         "NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) "
         "has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1.");
  AddRecord("100", "FAILED", 1, start, end, "exp 42");
  state_->lag_reads = 2;
  Start();

  v1::SubmitResponse response;
  ASSERT_TRUE(Submit("100", &response).ok());
  EXPECT_TRUE(response.accepted());
  EXPECT_FALSE(response.duplicate());
  auto verdict = WaitDone("100");
  EXPECT_EQ(verdict["domain"], "GPU_HARDWARE");
  EXPECT_EQ(verdict["affected_nodes"], nlohmann::json::array({"n2"}));
  EXPECT_EQ(verdict["terminal_state"], "FAILED");
  std::set<std::string> symptom_nodes;
  for (const auto& s : verdict["symptoms"]) symptom_nodes.insert(s["event"]["node"].get<std::string>());
  EXPECT_EQ(symptom_nodes, (std::set<std::string>{"n1", "n3"}));
  for (const auto& e : verdict["unexplained"]) EXPECT_NE(e["fields"].value("xid", 0), 48) << "outside the window";

  std::lock_guard lock(state_->mutex);
  const std::string& comment = state_->records["100"].comment;
  EXPECT_EQ(comment.rfind("exp 42 | attrib: GPU_HARDWARE node=n2", 0), 0u) << comment;
  EXPECT_EQ(comment.substr(comment.find("attrib:")), verdict["comment"].get<std::string>());
  EXPECT_GE(state_->reads["100"], 3) << "scoping waited for the final record";
}

// slurmdbd round trips per job: the record scoping read serves as the comment's text
// before the write when it is the id's only row (the row the write changes); with other
// rows (a requeue, a reused id) the comment's row is read afresh. The write is read back
// either way.
TEST_F(HeadDaemonTest, ASoleRowScopedRecordSavesTheCommentsReadBeforeItsWrite) {
  const TimeUs start = wall_clock_us() - 60 * kSecond, end = wall_clock_us() - 10 * kSecond;
  AddRecord("101", "FAILED", 1, start, end, "exp 42");
  AddRecord("102", "FAILED", 1, start, end, "exp 43");
  state_->records["101"].sole_row = true;
  Start();
  for (const char* id : {"101", "102"}) {
    v1::SubmitResponse response;
    ASSERT_TRUE(Submit(id, &response).ok());
    WaitDone(id);
  }
  std::lock_guard lock(state_->mutex);
  EXPECT_EQ(state_->reads["101"], 2) << "scope, then the read-back of the write";
  EXPECT_EQ(state_->reads["102"], 3) << "scope, the comment's row, the read-back";
  EXPECT_EQ(state_->records["101"].comment.rfind("exp 42 | attrib: ", 0), 0u) << state_->records["101"].comment;
  EXPECT_EQ(state_->records["102"].comment.rfind("exp 43 | attrib: ", 0), 0u) << state_->records["102"].comment;
  EXPECT_EQ(state_->comment_writes, 2);
}

// A burst's comments are written in batches (write_comments: for slurmdbd one transaction
// read back in one request), not one job at a time; a comment slurmdbd answered for but
// did not keep fails its own job's comment step, which is written again, and no other.
TEST_F(HeadDaemonTest, ABurstsCommentsAreWrittenInBatchesAndOneNotKeptIsWrittenAgainAlone) {
  const TimeUs start = wall_clock_us() - 60 * kSecond, end = wall_clock_us() - 10 * kSecond;
  config_.head.workers = 1;
  std::vector<std::string> ids;
  for (int i = 0; i < 30; ++i) {
    ids.push_back(std::to_string(200 + i));
    AddRecord(ids.back(), "FAILED", 1, start, end, "run " + ids.back());
    state_->records[ids.back()].sole_row = true;
    // Spooled while the head was down: all queued at its start, before a worker runs.
    v1::JobEnded job;
    job.set_job_id(ids.back());
    job.set_node_list("n[1-3]");
    job.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
    job.set_hook_time_us(end);
    ASSERT_TRUE(common::write_spool_file(config_.head.spool_dir, job));
  }
  state_->drop_next_write.insert("210");
  Start();
  for (const std::string& id : ids) WaitDone(id);

  std::lock_guard lock(state_->mutex);
  size_t written = 0, largest = 0;
  for (size_t size : state_->comment_batches) written += size, largest = std::max(largest, size);
  EXPECT_EQ(written, ids.size() + 1) << "every job once, and the one not kept again";
  EXPECT_GT(largest, 1u) << "the queued jobs' comments went together";
  EXPECT_LT(state_->comment_batches.size(), ids.size());
  for (const std::string& id : ids) {
    EXPECT_EQ(state_->records[id].comment.rfind("run " + id + " | attrib: ", 0), 0u) << state_->records[id].comment;
    EXPECT_EQ(state_->comment_writes_by_job[id], id == "210" ? 2 : 1) << id;
  }
}

// The raw evidence the head archives with a verdict (real journal files read by the
// journald collector, real SQLite, GetVerdict over gRPC) replays to that verdict, byte for
// byte; the lines outside the window are not in it.
TEST_F(HeadDaemonTest, TheArchivedRawEvidenceReplaysToTheVerdictByteForByte) {
  TimeUs start = wall_clock_us() - 60 * kSecond;
  TimeUs end = wall_clock_us() - 10 * kSecond;
  Inject("n2", start + 20 * kSecond, {"--transport", "kernel", "--uid", "0"},
         "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  Inject("n1", start + 25 * kSecond, {"--transport", "kernel", "--uid", "0"}, "a kernel line no rule knows");
  Inject("n1", end + 30 * kSecond, {"--transport", "kernel", "--uid", "0"}, "after the window");
  AddRecord("101", "FAILED", 1, start, end, "");
  Start();
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit("101", &submitted).ok());
  const nlohmann::json verdict = WaitDone("101");
  ASSERT_EQ(verdict["domain"], "GPU_HARDWARE");

  const common::PackedFiles files = ExpectRawEvidenceReplaysToTheVerdict("101");
  ASSERT_TRUE(files.count("n1/kernel.jsonl"));
  EXPECT_FALSE(files.count("n1/kernel.attrib-lines"));  // GetVerdict hands out bundle v1 files
  EXPECT_NE(files.at("n1/kernel.jsonl").find("a kernel line no rule knows"), std::string::npos);
  EXPECT_EQ(files.at("n1/kernel.jsonl").find("after the window"), std::string::npos);

  // The archive itself keeps each stream as compact records, which read back as those files.
  daemon_.reset();
  auto store = store::JobStore::open(config_.head.database);
  ASSERT_TRUE(store);
  auto kept = (*store)->evidence({"lab", "101"});
  ASSERT_TRUE(kept.ok() && kept->has_value());
  auto archived = common::unpack_evidence((*kept)->blob);
  ASSERT_TRUE(archived.ok());
  EXPECT_TRUE(archived->count("n1/kernel.attrib-lines"));
  EXPECT_FALSE(archived->count("n1/kernel.jsonl"));
  EXPECT_EQ(rules::archived_bundle_files(*archived).value(), files);
}

// The daemon applies the archive's retention at start: over archive.max_bytes, a finished
// run's raw evidence goes (counted), its verdict stays, and the run itself, inside the
// sweep's lookback, is kept.
TEST_F(HeadDaemonTest, RetentionAtStartDropsRawEvidenceOverTheCapAndKeepsTheVerdict) {
  const TimeUs start = wall_clock_us() - 60 * kSecond;
  const TimeUs end = wall_clock_us() - 10 * kSecond;
  Inject("n1", start + 25 * kSecond, {"--transport", "kernel", "--uid", "0"}, "a kernel line no rule knows");
  AddRecord("102", "FAILED", 1, start, end, "");
  Start();
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit("102", &submitted).ok());
  WaitDone("102");
  daemon_.reset();
  {
    auto store = store::JobStore::open(config_.head.database);
    ASSERT_TRUE(store);
    auto kept = (*store)->evidence({"lab", "102"});
    ASSERT_TRUE(kept.ok() && kept->has_value()) << "no raw evidence archived to prune";
  }

  config_.archive.max_bytes = 1;
  Start();
  bool pruned = false;
  for (int i = 0; i < 500 && !pruned; ++i) {
    pruned = daemon_->metrics_registry().render().find("attrib_archive_pruned_total{what=\"evidence\"} 1") !=
             std::string::npos;
    if (!pruned) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(pruned) << daemon_->metrics_registry().render();
  EXPECT_NE(daemon_->metrics_registry().render().find("attrib_archive_pruned_total{what=\"runs\"} 0"),
            std::string::npos);
  daemon_.reset();
  auto store = store::JobStore::open(config_.head.database);
  ASSERT_TRUE(store);
  auto evidence = (*store)->evidence({"lab", "102"});
  ASSERT_TRUE(evidence.ok());
  EXPECT_FALSE(evidence->has_value());
  auto record = (*store)->lookup("lab", "102");
  ASSERT_TRUE(record.ok() && record->has_value());
  EXPECT_EQ((*record)->status, "done");
  EXPECT_TRUE((*record)->verdict_json.has_value());
}

// Several workers under load with real gRPC and SQLite (a test, not a benchmark): 500 job
// ends, each reported by both hooks from four client threads at once, attributed by four
// workers. Every job gets exactly one archived verdict (one run) and one comment write:
// nothing lost, nothing doubled.
TEST_F(HeadDaemonTest, FourWorkersAndFiveHundredJobsGiveEachJobOneVerdictAndOneCommentWrite) {
  constexpr int kJobs = 500;
  config_.head.workers = 4;
  const TimeUs start = wall_clock_us() - 60 * kSecond;
  const TimeUs end = wall_clock_us() - 10 * kSecond;
  Inject("n2", start + 20 * kSecond, {"--transport", "kernel", "--uid", "0"},
         "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  for (int i = 0; i < kJobs; ++i) AddRecord(std::to_string(5000 + i), "FAILED", 1, start, end);
  Start();

  std::atomic<int> refused{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c)
    clients.emplace_back([&, c] {
      auto stub =
          v1::Attribution::NewStub(grpc::CreateChannel(config_.head.listen[0], grpc::InsecureChannelCredentials()));
      for (int i = c; i < kJobs; i += 4) {
        for (auto hook : {v1::HOOK_KIND_EPILOG_SLURMCTLD, v1::HOOK_KIND_JOBCOMP_SCRIPT}) {
          v1::JobEnded job;
          job.set_job_id(std::to_string(5000 + i));
          job.set_node_list("n[1-3]");
          job.set_hook(hook);
          grpc::ClientContext context;
          context.set_deadline(std::chrono::system_clock::now() + 30s);
          v1::SubmitResponse response;
          if (!stub->SubmitJobEnded(&context, job, &response).ok() || !response.accepted()) ++refused;
        }
      }
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(refused.load(), 0);

  for (int i = 0; i < 6000; ++i) {  // 120 s at most; a few seconds in practice
    {
      std::lock_guard lock(state_->mutex);
      if (state_->comment_writes >= kJobs) break;
    }
    std::this_thread::sleep_for(20ms);
  }
  for (int i = 0; i < kJobs; ++i) {
    const std::string id = std::to_string(5000 + i);
    grpc::ClientContext context;
    v1::GetVerdictRequest request;
    request.set_job_id(id);
    v1::GetVerdictResponse response;
    ASSERT_TRUE(stub_->GetVerdict(&context, request, &response).ok()) << id;
    EXPECT_EQ(response.status(), "done") << id;
    if (response.status() == "done") {
      EXPECT_EQ(nlohmann::json::parse(response.verdict_json())["domain"], "GPU_HARDWARE");
    }
  }
  {
    std::lock_guard lock(state_->mutex);
    EXPECT_EQ(state_->comment_writes, kJobs);
    EXPECT_EQ(state_->comment_writes_by_job.size(), static_cast<size_t>(kJobs));
    for (const auto& [id, writes] : state_->comment_writes_by_job) EXPECT_EQ(writes, 1) << "job " << id;
  }
  daemon_.reset();  // the archive, read directly: one row and one run per job
  auto store = store::JobStore::open(config_.head.database);
  ASSERT_TRUE(store) << store.error().message;
  for (int i = 0; i < kJobs; ++i) {
    auto record = (*store)->lookup("lab", std::to_string(5000 + i));
    ASSERT_TRUE(record && record->has_value()) << i;
    EXPECT_EQ((*record)->runs, 1) << "job " << 5000 + i;
    EXPECT_EQ((*record)->status, "done") << "job " << 5000 + i;
  }
}

TEST_F(HeadDaemonTest, DuplicateSubmitIsAcceptedOnceAndCommentWrittenOnce) {
  AddRecord("101", "FAILED", 3, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond);
  Start();
  v1::SubmitResponse first, second;
  ASSERT_TRUE(Submit("101", &first).ok());
  ASSERT_TRUE(Submit("101", &second).ok());
  EXPECT_TRUE(second.accepted());
  auto verdict = WaitDone("101");
  EXPECT_EQ(verdict["domain"], "UNATTRIBUTED");
  // The same report again after the verdict (a spool sent twice): a duplicate.
  v1::SubmitResponse again;
  ASSERT_TRUE(Submit("101", &again).ok());
  EXPECT_TRUE(again.duplicate());
  // A report of the same hook at another time looks like a requeued job's next attempt: a
  // run of its own until accounting shows the same attempt, then folded into it
  // (attrib_jobs_not_attributed_total{same_attempt}). Here, without a start (Slurm 22.05's
  // EpilogSlurmctld), the row shows it: the job FAILED and was not requeued, so no later
  // attempt can have run. (A requeued one waits for the rows instead: ScopeTest.
  // ARequeuedAttemptWhoseRowIsNotRecordedYetWaitsForItAndIsNotDropped.)
  v1::JobEnded later;
  later.set_job_id("101");
  later.set_node_list("n[1-3]");
  later.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
  later.set_hook_time_us(wall_clock_us());
  v1::SubmitResponse third;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->SubmitJobEnded(&context, later, &third).ok());
  EXPECT_TRUE(third.accepted());
  EXPECT_FALSE(third.duplicate());
  auto runs = [&] {
    grpc::ClientContext context;
    v1::GetVerdictRequest request;
    request.set_job_id("101");
    v1::GetVerdictResponse response;
    EXPECT_TRUE(stub_->GetVerdict(&context, request, &response).ok());
    return std::make_pair(response.runs(), response.status());
  };
  for (int i = 0; i < 500 && runs().first != 1; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(runs(), std::make_pair(int64_t{1}, std::string("done")));
  std::lock_guard lock(state_->mutex);
  EXPECT_EQ(state_->comment_writes, 1);
}

TEST_F(HeadDaemonTest, AJobWhoseIdALaterJobReusesLeavesThatJobsCommentAlone) {
  // The id's newest row (where slurmdbd writes a Comment) is a job submitted after the
  // attempt judged here: a verdict, archived, but no Comment on the other job's row.
  AddRecord("107", "FAILED", 3, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond, "their note");
  {
    std::lock_guard lock(state_->mutex);
    state_->records["107"].job_submit = wall_clock_us() - 5 * kSecond;
  }
  Start();
  v1::SubmitResponse response;
  ASSERT_TRUE(Submit("107", &response).ok());
  EXPECT_EQ(WaitDone("107")["terminal_state"], "FAILED");
  std::lock_guard lock(state_->mutex);
  EXPECT_EQ(state_->comment_writes, 0);
  EXPECT_EQ(state_->records["107"].comment, "their note");
}

// A user's --comment can carry text that looks like attrib's segment. One that claims a
// later attempt than the one judged would hold the verdict back, were it trusted: only a
// segment the archive holds for the job id is, so this one is replaced.
TEST_F(HeadDaemonTest, AForgedSegmentClaimingALaterAttemptIsReplacedByTheVerdict) {
  const std::string forged =
      "attrib: GPU_HARDWARE node=n2 rule=gpu.fallen_off_bus action=DRAIN_NODE symptoms=1 coverage=3/3 attempt=9";
  AddRecord("108", "FAILED", 3, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond, "mine | " + forged);
  Start();
  v1::SubmitResponse response;
  ASSERT_TRUE(Submit("108", &response).ok());
  auto verdict = WaitDone("108");
  std::lock_guard lock(state_->mutex);
  EXPECT_EQ(state_->comment_writes, 1);
  EXPECT_EQ(state_->records["108"].comment, "mine | " + verdict["comment"].get<std::string>());
}

// sinks.jsonl_path: the verdict log holds each done job's verdict, as GetVerdict serves
// it, one line each.
TEST_F(HeadDaemonTest, EachDoneVerdictIsAppendedToTheVerdictLog) {
  config_.sinks.jsonl_path = (dir_ / "verdicts.jsonl").string();
  AddRecord("109", "FAILED", 3, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond);
  AddRecord("110", "COMPLETED", 0, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond);
  Start();
  v1::SubmitResponse response;
  ASSERT_TRUE(Submit("109", &response).ok());
  ASSERT_TRUE(Submit("110", &response).ok());
  const auto first = WaitDone("109");
  const auto second = WaitDone("110");
  std::ifstream log(config_.sinks.jsonl_path);
  std::map<std::string, nlohmann::json> logged;
  for (std::string line; std::getline(log, line);) {
    auto verdict = nlohmann::json::parse(line);
    logged[verdict["job_id"].get<std::string>()] = verdict;
  }
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_EQ(logged["109"], first);
  EXPECT_EQ(logged["110"], second);
}

TEST_F(HeadDaemonTest, SpooledJobsAreDrainedAtStart) {
  AddRecord("102", "COMPLETED", 0, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond);
  v1::JobEnded job;
  job.set_job_id("102");
  job.set_node_list("n1");
  ASSERT_TRUE(common::write_spool_file(config_.head.spool_dir, job));
  Start();
  auto verdict = WaitDone("102");
  EXPECT_EQ(verdict["domain"], "NONE");
  EXPECT_EQ(verdict["cluster"], "lab");
  EXPECT_TRUE(common::list_spool_files(config_.head.spool_dir).empty());
}

// attrib-epilog's default hand-over: it renames the job into the spool and exits; the
// head picks it up at once (inotify), not at its next scan an hour later.
TEST_F(HeadDaemonTest, AJobSpooledWhileTheHeadRunsIsPickedUpAtOnce) {
  config_.head.spool_scan_interval_s = 3600;
  AddRecord("108", "FAILED", 3, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond);
  Start();
  v1::JobEnded job;
  job.set_job_id("108");
  job.set_node_list("n1");
  job.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
  ASSERT_TRUE(common::write_spool_file(config_.head.spool_dir, job));
  EXPECT_EQ(WaitDone("108")["terminal_state"], "FAILED");
  EXPECT_TRUE(common::list_spool_files(config_.head.spool_dir).empty());
}

TEST_F(HeadDaemonTest, SpoolFilesThatCanNeverBeQueuedGoToBadAndTheRestIsQueued) {
  AddRecord("106", "COMPLETED", 0, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond);
  v1::JobEnded not_a_hostlist;
  not_a_hostlist.set_job_id("104");
  not_a_hostlist.set_node_list("gpu[001-002,0.7]");
  v1::JobEnded sweep_kind;  // only the head's own sweep reports this kind
  sweep_kind.set_job_id("105");
  sweep_kind.set_node_list("n1");
  sweep_kind.set_hook(v1::HOOK_KIND_SWEEP);
  v1::JobEnded good;
  good.set_job_id("106");
  good.set_node_list("n1");
  for (const auto* job : {&not_a_hostlist, &sweep_kind, &good})
    ASSERT_TRUE(common::write_spool_file(config_.head.spool_dir, *job));
  Start();
  EXPECT_EQ(WaitDone("106")["domain"], "NONE");
  EXPECT_TRUE(common::list_spool_files(config_.head.spool_dir).empty());
  size_t quarantined = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(config_.head.spool_dir) / "bad")) {
    (void)entry;
    ++quarantined;
  }
  EXPECT_EQ(quarantined, 2U);
}

// A burst of job ends left in the spool is queued in batches of one transaction each
// (JobStore::enqueue_all): every job once, the same report twice counted as a duplicate,
// and every file removed.
TEST_F(HeadDaemonTest, MoreSpooledJobsThanOneBatchAreEachQueuedOnce) {
  constexpr int kJobs = 300;    // more than one batch (256)
  state_->lag_reads = 1000000;  // the workers leave them queued
  for (int i = 0; i < kJobs; ++i) {
    v1::JobEnded job;
    job.set_job_id(std::to_string(7000 + i));
    job.set_node_list("n1");
    job.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
    job.set_hook_time_us(1000 + i);
    ASSERT_TRUE(common::write_spool_file(config_.head.spool_dir, job));
    if (i == 0) {
      ASSERT_TRUE(common::write_spool_file(config_.head.spool_dir, job));  // sent twice
    }
  }
  Start();
  EXPECT_TRUE(common::list_spool_files(config_.head.spool_dir).empty());
  const std::string metrics = daemon_->metrics_registry().render();
  EXPECT_NE(metrics.find("attrib_jobs_accepted_total{hook=\"epilog_slurmctld\",via=\"spool\"} 300"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("attrib_jobs_duplicate_total{hook=\"epilog_slurmctld\",via=\"spool\"} 1"), std::string::npos)
      << metrics;
  daemon_.reset();
  auto store = store::JobStore::open(config_.head.database);
  ASSERT_TRUE(store) << store.error().message;
  EXPECT_EQ(*(*store)->pending_count(), kJobs);
}

TEST_F(HeadDaemonTest, RestartResumesAQueuedJob) {
  AddRecord("103", "FAILED", 3, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond);
  state_->lag_reads = 1000000;  // never final while the first daemon runs
  Start();
  v1::SubmitResponse response;
  ASSERT_TRUE(Submit("103", &response).ok());
  daemon_.reset();  // stopped mid-attribution
  state_->lag_reads = 0;
  Start();
  auto verdict = WaitDone("103");
  EXPECT_EQ(verdict["domain"], "UNATTRIBUTED");
}

TEST_F(HeadDaemonTest, UnknownJobIsNotFoundAndEmptyIdIsInvalid) {
  Start();
  grpc::ClientContext context;
  v1::GetVerdictRequest request;
  request.set_job_id("404");
  v1::GetVerdictResponse response;
  EXPECT_EQ(stub_->GetVerdict(&context, request, &response).error_code(), grpc::StatusCode::NOT_FOUND);
  v1::SubmitResponse submit;
  EXPECT_EQ(Submit("", &submit).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // A node list that is not a hostlist is refused before libslurm parses it (it leaked).
  grpc::Status malformed = Submit("405", &submit, "gpu[001-002,0.7]");
  EXPECT_EQ(malformed.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(malformed.error_message().find("node_list"), std::string::npos) << malformed.error_message();
  // The sweep's kind would open a new run at every report: no hook may claim it.
  v1::JobEnded swept;
  swept.set_job_id("406");
  swept.set_node_list("n1");
  swept.set_hook(v1::HOOK_KIND_SWEEP);
  grpc::ClientContext sweep_context;
  grpc::Status refused = stub_->SubmitJobEnded(&sweep_context, swept, &submit);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("HOOK_KIND_SWEEP"), std::string::npos) << refused.error_message();
}

namespace {

// Test double for a node whose log source hangs (e.g. a journal on a dead NFS mount).
class StuckCollector : public collectors::Collector {
 public:
  std::string name() const override { return "stuck"; }
  std::vector<Coverage> collect(const collectors::CollectRequest& request, const collectors::LineSink&) override {
    std::this_thread::sleep_for(1500ms);
    return {{request.node, "stuck", CoverageStatus::Ok, 0, 0, request.window_start, request.window_end, ""}};
  }
};

const char* kXid79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
const char* kNcclTimeout =
    "[rank0]:[E1130 10:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran "
    "for 600060 milliseconds before timing out.";

std::map<std::string, std::string> CoverageByNode(const nlohmann::json& verdict, const std::string& source) {
  std::map<std::string, std::string> out;
  for (const auto& c : verdict["coverage"])
    if (c["source"] == source) out[c["node"]] = c["status"];
  return out;
}

}  // namespace

class NodeAgentTest : public HeadDaemonTest {
 protected:
  // Xid 79 in n3's kernel log, NCCL timeouts in n1/n2's application output, each in that
  // node's own journal, served by that node's agent.
  void SetUpEvidence(TimeUs start) {
    Inject("n3", start - 3000 * kSecond, {"--transport", "kernel", "--uid", "0"}, "Linux version 6.1.0", "journal-n3");
    Inject("n3", start + 20 * kSecond, {"--transport", "kernel", "--uid", "0"}, kXid79, "journal-n3");
    for (const char* host : {"n1", "n2"}) {
      std::string journal = std::string("journal-") + host;
      Inject(host, start - 3000 * kSecond, {"--transport", "kernel", "--uid", "0"}, "Linux version 6.1.0", journal);
      Inject(host, start + 30 * kSecond, {"--transport", "stdout", "--identifier", "python3", "--uid", "1000"},
             kNcclTimeout, journal);
    }
  }
};

TEST_F(NodeAgentTest, HeadFansOutToEveryNodesAgent) {
  TimeUs start = wall_clock_us() - 60 * kSecond;
  SetUpEvidence(start);
  AddRecord("200", "FAILED", 1, start, wall_clock_us() - 10 * kSecond);
  for (const char* node : {"n1", "n2", "n3"}) config_.head.agents.addresses[node] = StartAgent(node);
  Start();
  v1::SubmitResponse response;
  ASSERT_TRUE(Submit("200", &response).ok());
  auto verdict = WaitDone("200");
  EXPECT_EQ(verdict["domain"], "GPU_HARDWARE");
  EXPECT_EQ(verdict["affected_nodes"], nlohmann::json::array({"n3"}));
  std::set<std::string> symptom_nodes;
  for (const auto& s : verdict["symptoms"])
    if (s["event"]["kind"] == "nccl.watchdog_timeout") symptom_nodes.insert(s["event"]["node"]);
  EXPECT_EQ(symptom_nodes, (std::set<std::string>{"n1", "n2"}));
  EXPECT_EQ(CoverageByNode(verdict, "kernel"),
            (std::map<std::string, std::string>{{"n1", "empty"}, {"n2", "empty"}, {"n3", "ok"}}));
  EXPECT_NE(verdict["comment"].get<std::string>().find("coverage=3/3"), std::string::npos) << verdict["comment"];
  // The agents sent the lines they read too: the archived raw evidence replays.
  const common::PackedFiles files = ExpectRawEvidenceReplaysToTheVerdict("200");
  EXPECT_TRUE(files.count("n3/kernel.jsonl"));
}

TEST_F(NodeAgentTest, UnreachableAgentIsFailedCoverageAndNoCauseIsInvented) {
  TimeUs start = wall_clock_us() - 60 * kSecond;
  SetUpEvidence(start);
  AddRecord("201", "FAILED", 1, start, wall_clock_us() - 10 * kSecond);
  for (const char* node : {"n1", "n2", "n3"}) config_.head.agents.addresses[node] = StartAgent(node);
  StopAgent("n3");
  Start();
  v1::SubmitResponse response;
  ASSERT_TRUE(Submit("201", &response).ok());
  auto verdict = WaitDone("201");
  EXPECT_NE(verdict["domain"], "GPU_HARDWARE");
  EXPECT_EQ(verdict["root_cause"], nullptr);
  auto agents = CoverageByNode(verdict, "agent");
  EXPECT_EQ(agents, (std::map<std::string, std::string>{{"n3", "failed"}}));
  EXPECT_NE(verdict["comment"].get<std::string>().find("coverage=2/3"), std::string::npos) << verdict["comment"];
}

TEST_F(NodeAgentTest, SlowAgentTimesOutAndTheVerdictUsesWhatArrived) {
  TimeUs start = wall_clock_us() - 60 * kSecond;
  SetUpEvidence(start);
  AddRecord("202", "FAILED", 1, start, wall_clock_us() - 10 * kSecond);
  config_.head.agents.deadline_ms = 300;
  for (const char* node : {"n1", "n2"}) config_.head.agents.addresses[node] = StartAgent(node);
  std::vector<std::unique_ptr<collectors::Collector>> stuck;
  stuck.push_back(std::make_unique<StuckCollector>());
  config_.head.agents.addresses["n3"] = StartAgent("n3", std::move(stuck));
  Start();
  v1::SubmitResponse response;
  ASSERT_TRUE(Submit("202", &response).ok());
  auto verdict = WaitDone("202");
  EXPECT_EQ(CoverageByNode(verdict, "agent"), (std::map<std::string, std::string>{{"n3", "timeout"}}));
  EXPECT_EQ(verdict["root_cause"], nullptr);
  EXPECT_EQ(CoverageByNode(verdict, "kernel").count("n1"), 1u) << "n1 and n2 still reported";
}

TEST_F(NodeAgentTest, AgentRefusesToSpeakForAnotherNode) {
  std::string address = StartAgent("n1");
  auto stub = v1::NodeCollector::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::CollectRequest request;
  request.set_node("n2");
  request.set_window_end_us(1);
  v1::CollectResponse response;
  EXPECT_EQ(stub->Collect(&context, request, &response).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(HeadDaemonTest, OptedOutJobIsRecordedButNotAttributedWhenTheSiteAllowsIt) {
  AddRecord("300", "FAILED", 3, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond);
  config_.head.allow_opt_out = true;
  Start();
  auto submit_opted_out = [&](const std::string& job_id) {
    v1::JobEnded job;
    job.set_job_id(job_id);
    job.set_node_list("n1");
    (*job.mutable_spank_options())["attrib_attrib"] = "off";
    grpc::ClientContext context;
    v1::SubmitResponse response;
    return stub_->SubmitJobEnded(&context, job, &response);
  };
  ASSERT_TRUE(submit_opted_out("300").ok());
  v1::GetVerdictResponse response;
  for (int i = 0; i < 500 && response.status() != "done"; ++i) {
    grpc::ClientContext context;
    v1::GetVerdictRequest request;
    request.set_job_id("300");
    stub_->GetVerdict(&context, request, &response);
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(response.status(), "done");
  EXPECT_TRUE(response.verdict_json().empty());
  EXPECT_NE(response.last_error().find("opted out"), std::string::npos);
  std::lock_guard lock(state_->mutex);
  EXPECT_EQ(state_->records["300"].comment, "") << "no comment for an opted-out job";
}

TEST_F(HeadDaemonTest, OptOutIsIgnoredUnlessTheSiteAllowsIt) {
  AddRecord("302", "FAILED", 3, wall_clock_us() - 20 * kSecond, wall_clock_us() - 10 * kSecond);
  Start();  // head.allow_opt_out defaults to false
  v1::JobEnded job;
  job.set_job_id("302");
  job.set_node_list("n1");
  (*job.mutable_spank_options())["attrib_attrib"] = "off";
  grpc::ClientContext context;
  v1::SubmitResponse response;
  ASSERT_TRUE(stub_->SubmitJobEnded(&context, job, &response).ok());
  EXPECT_EQ(WaitDone("302")["domain"], "UNATTRIBUTED");
}

// slurmctld stand-in for remediation: records drains (test_fleet.cpp covers the policy).
class RecordingDrainer : public slurm::NodeDrainer {
 public:
  explicit RecordingDrainer(std::shared_ptr<std::vector<std::string>> drains) : drains_(std::move(drains)) {}
  Result<slurm::NodeDrainState> state(const std::string&) override { return slurm::NodeDrainState{}; }
  Status drain(const std::string& node, const std::string& reason) override {
    drains_->push_back(node + ": " + reason);
    return ok_status();
  }

 private:
  std::shared_ptr<std::vector<std::string>> drains_;
};

TEST_F(HeadDaemonTest, RemediationDrainsTheBlamedNodeAfterArchiveAndTheHistoryShowsIt) {
  TimeUs start = wall_clock_us() - 60 * kSecond;
  Inject("n2", start + 20 * kSecond, {"--transport", "kernel", "--uid", "0"},
         "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  AddRecord("300", "FAILED", 1, start, wall_clock_us() - 10 * kSecond);
  config_.remediation.mode = "drain";
  auto drains = std::make_shared<std::vector<std::string>>();
  drainer_ = std::make_unique<RecordingDrainer>(drains);
  Start();
  v1::SubmitResponse response;
  ASSERT_TRUE(Submit("300", &response).ok());
  auto verdict = WaitDone("300");
  ASSERT_EQ(verdict["recommended_action"], "DRAIN_NODE");
  ASSERT_EQ(drains->size(), 1u);
  EXPECT_EQ(drains->front(),
            "n2: attrib: job 300 rule " + verdict["root_cause"]["rule"].get<std::string>() + " GPU_HARDWARE");

  grpc::ClientContext context;
  v1::NodeHistoryRequest request;
  request.set_node("n2");
  v1::FleetReport report;
  ASSERT_TRUE(stub_->GetNodeHistory(&context, request, &report).ok());
  auto history = nlohmann::json::parse(report.json());
  ASSERT_EQ(history["verdicts"].size(), 1u);
  EXPECT_EQ(history["verdicts"][0]["job_id"], "300");
  EXPECT_EQ(history["verdicts"][0]["gpu"], "0000:3b:00.0");
  ASSERT_EQ(history["remediation"].size(), 1u);
  EXPECT_EQ(history["remediation"][0]["action"], "drained");
}

// A re-attributed run (attrib-reattribute --apply) gets its comment rewritten by a worker,
// and never acts: with remediation.mode drain, a revision that now says DRAIN_NODE drains
// nothing (the node may have been repaired since the job ran).
TEST_F(HeadDaemonTest, ARevisedVerdictRewritesTheCommentAndNeverDrains) {
  const TimeUs start = wall_clock_us() - 60 * kSecond;
  Inject("n2", start + 20 * kSecond, {"--transport", "kernel", "--uid", "0"},
         "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  AddRecord("320", "FAILED", 1, start, wall_clock_us() - 10 * kSecond);
  AddRecord("321", "FAILED", 1, start - 3600 * kSecond, start - 3500 * kSecond);  // nothing in its window
  config_.remediation.mode = "drain";
  auto drains = std::make_shared<std::vector<std::string>>();
  drainer_ = std::make_unique<RecordingDrainer>(drains);
  Start();
  v1::SubmitResponse response;
  ASSERT_TRUE(Submit("320", &response).ok());
  ASSERT_TRUE(Submit("321", &response).ok());
  const nlohmann::json hardware = WaitDone("320");
  ASSERT_EQ(hardware["recommended_action"], "DRAIN_NODE");
  ASSERT_EQ(WaitDone("321")["domain"], "UNATTRIBUTED");
  ASSERT_EQ(drains->size(), 1u);  // job 320's own verdict

  // Job 321 revised to a DRAIN_NODE verdict, on the daemon's archive while it runs.
  auto revised = verdict_from_json(hardware);
  ASSERT_TRUE(revised);
  revised->job_id = "321";
  revised->comment = "attrib: GPU_HARDWARE (revised)";
  {
    auto store = store::JobStore::open(config_.head.database);
    ASSERT_TRUE(store);
    auto applied =
        (*store)->revise({"lab", "321"}, *revised, rules::events_of_verdict(*revised), "test", wall_clock_us());
    ASSERT_TRUE(applied && *applied);
  }
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(state_->mutex);
      if (state_->comment_writes_by_job["321"] >= 2) break;
    }
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(WaitDone("321")["domain"], "GPU_HARDWARE");
  {
    std::lock_guard lock(state_->mutex);
    EXPECT_EQ(state_->comment_writes_by_job["321"], 2);
    EXPECT_EQ(state_->records["321"].comment, "attrib: GPU_HARDWARE (revised)");
  }
  EXPECT_EQ(drains->size(), 1u);  // nothing more
}
