// MUNGE authentication and authorisation of every RPC, against a real munged: the suite
// starts its own (private key, private socket) and an in-process head daemon and node
// agent that verify with it. Credentials of another uid are made by munge(1) run as that
// uid (tests/support/run_as.h), as an ordinary user's process would make them.
#include "common/auth.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "attrib/v1/attrib.grpc.pb.h"
#include "attributiond/head/head_daemon.h"
#include "attributiond/node/node_collect_service.h"
#include "attributiond/pipeline/agent_fanout.h"
#include "tests/support/memory_accounting.h"
#include "tests/support/private_munged.h"
#include "tests/support/run_as.h"
#include "tests/support/test_paths.h"


namespace fs = std::filesystem;
using namespace attrib;
using attrib::test::munge_as;
using attrib::test::run_as;
using namespace std::chrono_literals;

namespace {

constexpr uid_t kNobody = 65534;

uid_t uid_of(const char* name) {
  passwd* entry = getpwnam(name);
  return entry != nullptr ? entry->pw_uid : static_cast<uid_t>(-1);
}

}  // namespace

class AuthTest : public ::testing::Test {
 protected:
  // One private munged for the suite (tests/support/private_munged.h).
  static void SetUpTestSuite() {
    munged_ = std::make_unique<test::PrivateMunged>("attrib-auth");
    base_ = munged_->dir();
    munge_socket_ = munged_->socket();
  }

  static void TearDownTestSuite() { munged_.reset(); }

  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (private munged, credentials of other uids)";
    if (!munged_->started()) GTEST_FAIL() << "private munged did not start: " << munged_->output();
    dir_ = base_ / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "spool");
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec |
                              fs::perms::group_read | fs::perms::group_exec);
    slurm_user_ = uid_of("slurm") != static_cast<uid_t>(-1) ? "slurm" : "daemon";
    config_.cluster = "lab";
    config_.head.listen = {"unix://" + (dir_ / "head.sock").string()};
    config_.head.database = (dir_ / "attrib.db").string();
    config_.head.spool_dir = (dir_ / "spool").string();
    config_.head.workers = 1;
    config_.head.scope_max_wait_s = 3600;  // keep jobs queued: the queue is what is checked
    config_.rules_pack_dir = attrib::test::rules_pack_dir();
    config_.auth.mode = "munge";
    config_.auth.munge_socket = munge_socket_;
    config_.auth.slurm_user = slurm_user_;
  }

  void TearDown() override {
    daemon_.reset();
    if (agent_server_) agent_server_->Shutdown();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  static std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  void StartHead() {
    auto store = store::JobStore::open(config_.head.database);
    ASSERT_TRUE(store) << store.error().message;
    auto pack = rules::load_rule_pack({config_.rules_pack_dir, {}});
    ASSERT_TRUE(pack) << pack.error().message;
    daemon_ = std::make_unique<head::HeadDaemon>(config_, std::move(*store), *pack,
                                                 std::vector<std::unique_ptr<collectors::Collector>>{},
                                                 [] { return std::make_unique<test::MemoryAccounting>(); });
    auto started = daemon_->start();
    ASSERT_TRUE(started) << started.error().message;
    // Under MUNGE the daemon itself opens its socket to ordinary users (attrib-show as
    // uid 65534 below): connecting proves nothing, every call proves its uid.
    auto socket_mode = fs::status(dir_ / "head.sock").permissions() & fs::perms::all;
    ASSERT_EQ(socket_mode, fs::perms(0666));
    stub_ = v1::Attribution::NewStub(grpc::CreateChannel(config_.head.listen[0], grpc::InsecureChannelCredentials()));
  }

  // A credential for (method, request) made by uid: directly as root, else in a child
  // that has dropped to uid.
  std::string Credential(uid_t uid, std::string_view method, const google::protobuf::Message& request, int ttl_s = 0) {
    if (uid == 0) {
      auto cred = common::encode_credential(munge_socket_, method, request, ttl_s);
      EXPECT_TRUE(cred) << cred.error().message;
      return cred ? *cred : "";
    }
    auto [out, status] = munge_as(uid, munge_socket_, common::credential_payload(method, request), ttl_s);
    EXPECT_EQ(status, 0) << out;
    return out;
  }

  static v1::JobEnded Job(const std::string& job_id, uint32_t uid) {
    v1::JobEnded job;
    job.set_job_id(job_id);
    job.set_cluster("lab");
    job.set_node_list("n1");
    job.set_uid(uid);
    job.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
    (*job.mutable_spank_options())["attrib"] = "on";
    return job;
  }

  grpc::Status Submit(const v1::JobEnded& job, const std::string& cred) {
    grpc::ClientContext context;
    if (!cred.empty()) context.AddMetadata(std::string(common::kMetadataKey), cred);
    v1::SubmitResponse response;
    return stub_->SubmitJobEnded(&context, job, &response);
  }

  grpc::Status GetVerdict(const std::string& job_id, const std::string& cred) {
    grpc::ClientContext context;
    if (!cred.empty()) context.AddMetadata(std::string(common::kMetadataKey), cred);
    v1::GetVerdictRequest request;
    request.set_job_id(job_id);
    v1::GetVerdictResponse response;
    return stub_->GetVerdict(&context, request, &response);
  }

  grpc::Status GetVerdictAs(uid_t uid, const std::string& job_id) {
    v1::GetVerdictRequest request;
    request.set_job_id(job_id);
    return GetVerdict(job_id, Credential(uid, common::kGetVerdict, request));
  }

  // Whether the job reached the queue, asked as root (an admin).
  bool Queued(const std::string& job_id) {
    grpc::Status status = GetVerdictAs(0, job_id);
    EXPECT_TRUE(status.ok() || status.error_code() == grpc::StatusCode::NOT_FOUND) << status.error_message();
    return status.ok();
  }

  void SubmitAsRoot(const v1::JobEnded& job) {
    grpc::Status status = Submit(job, Credential(0, common::kSubmitJobEnded, job));
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  static inline std::unique_ptr<test::PrivateMunged> munged_;
  static inline fs::path base_;
  static inline std::string munge_socket_;
  fs::path dir_;
  std::string slurm_user_;
  common::Config config_;
  std::unique_ptr<head::HeadDaemon> daemon_;
  std::unique_ptr<v1::Attribution::Stub> stub_;
  std::unique_ptr<node::NodeCollectService> agent_service_;
  std::unique_ptr<grpc::Server> agent_server_;
};

TEST_F(AuthTest, RequestWithoutCredentialIsUnauthenticatedAndQueuesNothing) {
  StartHead();
  grpc::Status status = Submit(Job("100", 1000), "");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(status.error_message().find("no MUNGE credential"), std::string::npos) << status.error_message();
  EXPECT_FALSE(Queued("100"));
  EXPECT_EQ(GetVerdict("100", "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(AuthTest, GarbageCredentialIsUnauthenticated) {
  StartHead();
  grpc::Status status = Submit(Job("100", 1000), "MUNGE:not-a-credential:");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  EXPECT_FALSE(Queued("100"));
}

TEST_F(AuthTest, RootAndSlurmUserMaySubmit) {
  StartHead();
  SubmitAsRoot(Job("100", 1000));
  EXPECT_TRUE(Queued("100"));
  v1::JobEnded job = Job("101", 1000);
  grpc::Status status = Submit(job, Credential(uid_of(slurm_user_.c_str()), common::kSubmitJobEnded, job));
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(Queued("101"));
}

TEST_F(AuthTest, OrdinaryUsersCredentialIsPermissionDeniedAndQueuesNothing) {
  StartHead();
  v1::JobEnded job = Job("100", kNobody);  // even for "their own" job: only hooks submit
  grpc::Status status = Submit(job, Credential(kNobody, common::kSubmitJobEnded, job));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(status.error_message().find("uid 65534"), std::string::npos) << status.error_message();
  EXPECT_FALSE(Queued("100"));
}

TEST_F(AuthTest, ExpiredCredentialIsUnauthenticated) {
  StartHead();
  v1::JobEnded job = Job("100", 1000);
  std::string cred = Credential(0, common::kSubmitJobEnded, job, /*ttl_s=*/1);
  std::this_thread::sleep_for(2500ms);
  grpc::Status status = Submit(job, cred);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(status.error_message().find("expired"), std::string::npos) << status.error_message();
  EXPECT_FALSE(Queued("100"));
}

TEST_F(AuthTest, ReplayedCredentialIsRejected) {
  StartHead();
  v1::JobEnded job = Job("100", 1000);
  std::string cred = Credential(0, common::kSubmitJobEnded, job);
  ASSERT_TRUE(Submit(job, cred).ok());
  grpc::Status again = Submit(job, cred);
  EXPECT_EQ(again.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(again.error_message().find("replayed"), std::string::npos) << again.error_message();
}

TEST_F(AuthTest, CredentialForAnotherRequestIsRejected) {
  StartHead();
  // Made for job 100, sent with job 200: the payload hash does not match the body.
  std::string cred = Credential(0, common::kSubmitJobEnded, Job("100", 1000));
  grpc::Status status = Submit(Job("200", 1000), cred);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(status.error_message().find("another request"), std::string::npos) << status.error_message();
  // Same body, other method: a GetVerdict credential does not submit.
  v1::JobEnded job = Job("300", 1000);
  EXPECT_EQ(Submit(job, Credential(0, common::kGetVerdict, job)).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_FALSE(Queued("200"));
  EXPECT_FALSE(Queued("300"));
}

TEST_F(AuthTest, OrdinaryUserSeesOnlyTheirOwnJobs) {
  StartHead();
  SubmitAsRoot(Job("100", 1000));     // someone else's
  SubmitAsRoot(Job("101", kNobody));  // nobody's own
  v1::JobEnded by_name = Job("102", 0);
  by_name.set_user("nobody");  // a hook that sent only the user name
  SubmitAsRoot(by_name);
  SubmitAsRoot(Job("103", 0));  // no owner known (uid 0, no user): admins only

  grpc::Status other = GetVerdictAs(kNobody, "100");
  EXPECT_EQ(other.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(other.error_message().find("not yours"), std::string::npos) << other.error_message();
  EXPECT_TRUE(GetVerdictAs(kNobody, "101").ok());
  EXPECT_TRUE(GetVerdictAs(kNobody, "102").ok());
  EXPECT_EQ(GetVerdictAs(kNobody, "103").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(GetVerdictAs(0, "103").ok());
  EXPECT_EQ(GetVerdictAs(kNobody, "no-such-job").error_code(), grpc::StatusCode::NOT_FOUND);
  // Admins: root and the SlurmUser see every job.
  EXPECT_TRUE(GetVerdictAs(0, "100").ok());
  EXPECT_TRUE(GetVerdictAs(uid_of(slurm_user_.c_str()), "100").ok());
}

TEST_F(AuthTest, AdminGroupMembersSeeEveryJob) {
  config_.auth.admin_group = "nogroup";  // nobody's primary group
  StartHead();
  SubmitAsRoot(Job("100", 1000));
  grpc::Status status = GetVerdictAs(kNobody, "100");
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(AuthTest, UnknownSlurmUserStopsTheDaemonAtStart) {
  config_.auth.slurm_user = "no-such-user-attrib";
  auto store = store::JobStore::open(config_.head.database);
  ASSERT_TRUE(store);
  auto pack = rules::load_rule_pack({config_.rules_pack_dir, {}});
  ASSERT_TRUE(pack);
  head::HeadDaemon daemon(config_, std::move(*store), *pack, {}, [] { return std::make_unique<test::MemoryAccounting>(); });
  auto started = daemon.start();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().code, kAuthConfig);
}

// The real attrib-show, run as an ordinary user: another user's job is refused with a
// clear message and a non-zero exit; their own job is shown (here: still queued).
TEST_F(AuthTest, AttribShowAsOrdinaryUser) {
  StartHead();
  SubmitAsRoot(Job("100", 1000));
  SubmitAsRoot(Job("101", kNobody));
  // A copy nobody can reach: the build tree may sit in root's 0700 home.
  const fs::path staged = dir_ / "attrib-show";
  fs::copy_file(ATTRIB_SHOW_BINARY, staged, fs::copy_options::overwrite_existing);
  fs::permissions(staged, fs::perms(0755));
  auto show = [&](const std::string& job_id) {
    return run_as(kNobody, {staged.string(), "--server", config_.head.listen[0], job_id},
                  {"ATTRIB_MUNGE_SOCKET=" + munge_socket_});  // as the e2e cluster's env.sh does
  };
  auto [denied, denied_rc] = show("100");
  EXPECT_EQ(denied_rc, 2) << denied;
  EXPECT_NE(denied.find("not permitted"), std::string::npos) << denied;
  EXPECT_NE(denied.find("not yours"), std::string::npos) << denied;
  auto [own, own_rc] = show("101");
  EXPECT_EQ(own_rc, 1) << own;  // known, not attributed yet
  EXPECT_NE(own.find("not attributed yet"), std::string::npos) << own;
}

// Node agents: Collect only from root or the SlurmUser; the head's fan-out signs each call.
TEST_F(AuthTest, CollectRequiresTheHeadsCredential) {
  auto pack = rules::load_rule_pack({config_.rules_pack_dir, {}});
  ASSERT_TRUE(pack);
  auto authenticator = common::Authenticator::create(config_.auth);
  ASSERT_TRUE(authenticator) << authenticator.error().message;
  agent_service_ = std::make_unique<node::NodeCollectService>(
      "n1", *pack, std::vector<std::unique_ptr<collectors::Collector>>{}, *authenticator);
  std::string address = "unix://" + (dir_ / "agent.sock").string();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  builder.RegisterService(agent_service_.get());
  agent_server_ = builder.BuildAndStart();
  ASSERT_TRUE(agent_server_);
  auto stub = v1::NodeCollector::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));

  v1::CollectRequest request;
  request.set_job_id("100");
  request.set_node("n1");
  request.set_window_end_us(1);
  {
    grpc::ClientContext context;
    v1::CollectResponse response;
    EXPECT_EQ(stub->Collect(&context, request, &response).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext context;
    context.AddMetadata(std::string(common::kMetadataKey), Credential(kNobody, common::kCollect, request));
    v1::CollectResponse response;
    EXPECT_EQ(stub->Collect(&context, request, &response).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }

  common::AgentsConfig agents;
  agents.addresses["n1"] = address;
  JobFacts job;
  job.job_id = "100";
  job.cluster = "lab";
  job.nodes = {"n1"};
  auto agent_failures = [](const std::vector<pipeline::NodeEvidence>& results) {
    std::string failures;
    for (const auto& evidence : results)
      for (const auto& c : evidence.coverage)
        if (c.source == "agent") failures += c.detail + "\n";
    return failures;
  };
  // Signed (munge mode, as the head runs): the agent answers, and signs its answer as root.
  pipeline::AgentFanout signed_fanout(agents, *authenticator, rules::pack_hash(**pack));
  EXPECT_EQ(agent_failures(signed_fanout.collect(job, 0, 1)), "");
  // Unsigned (a head left in mode none): refused, and the reason is the coverage detail.
  pipeline::AgentFanout unsigned_fanout(agents, common::Authenticator::none(), rules::pack_hash(**pack));
  EXPECT_NE(agent_failures(unsigned_fanout.collect(job, 0, 1)).find("no MUNGE credential"), std::string::npos);
  // A head expecting agents to run as another user rejects even the genuine agent's answer.
  common::AuthConfig other_agent_user = config_.auth;
  other_agent_user.agent_user = "nobody";
  auto strict = common::Authenticator::create(other_agent_user);
  ASSERT_TRUE(strict) << strict.error().message;
  pipeline::AgentFanout strict_fanout(agents, *strict, rules::pack_hash(**pack));
  EXPECT_NE(agent_failures(strict_fanout.collect(job, 0, 1))
                .find("unauthenticated: the answer from " + address + " was discarded: the answer is signed by uid 0, "
                      "not by auth.agent_user nobody"),
            std::string::npos);
}

// A process that holds the agent's port (the agent restarting, or an impostor on [::]
// while the agent listens on 0.0.0.0) answers the head's Collect with a forged trusted
// Xid 79. It can sign only as itself, or replay a signature made for another answer: the
// head discards every such answer and reports the node's coverage failed, unauthenticated.
class ImpostorAgent final : public v1::NodeCollector::Service {
 public:
  enum class Signature { None, AsItsOwnUser, Replayed };
  ImpostorAgent(std::string socket, std::string ruleset_hash)
      : socket_(std::move(socket)), ruleset_hash_(std::move(ruleset_hash)) {}
  Signature signature = Signature::None;
  std::string replayed;  // a genuine root signature of another answer

  grpc::Status Collect(grpc::ServerContext* context, const v1::CollectRequest* request,
                       v1::CollectResponse* response) override {
    v1::Event* forged = response->add_events();
    forged->set_kind("gpu.xid");
    forged->set_rule("nvidia.xid");
    forged->set_node(request->node());
    forged->set_source("kernel");
    forged->set_trusted(true);
    forged->set_line("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.");  // forged
    forged->set_fields_json(R"({"pci":"0000:3b:00","xid":79})");
    forged->set_count(1);
    v1::Coverage* coverage = response->add_coverage();
    coverage->set_node(request->node());
    coverage->set_source("kernel");
    coverage->set_status("ok");
    coverage->set_lines(1);
    coverage->set_events(1);
    response->set_ruleset_hash(ruleset_hash_);
    if (signature == Signature::AsItsOwnUser) {
      const v1::CollectResponse answer = *response;
      auto [cred, status] = munge_as(kNobody, socket_, common::answer_payload(common::kCollect, *request, answer));
      if (status == 0) context->AddTrailingMetadata(std::string(common::kAnswerMetadataKey), cred);
    } else if (signature == Signature::Replayed) {
      context->AddTrailingMetadata(std::string(common::kAnswerMetadataKey), replayed);
    }
    return grpc::Status::OK;
  }

 private:
  std::string socket_, ruleset_hash_;
};

TEST_F(AuthTest, AnImpostorOnTheAgentPortCannotAnswerForTheNode) {
  auto pack = rules::load_rule_pack({config_.rules_pack_dir, {}});
  ASSERT_TRUE(pack);
  auto authenticator = common::Authenticator::create(config_.auth);
  ASSERT_TRUE(authenticator) << authenticator.error().message;
  ImpostorAgent impostor(munge_socket_, rules::pack_hash(**pack));
  std::string address = "unix://" + (dir_ / "agent.sock").string();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  builder.RegisterService(&impostor);
  agent_server_ = builder.BuildAndStart();
  ASSERT_TRUE(agent_server_);

  common::AgentsConfig agents;
  agents.addresses["n1"] = address;
  JobFacts job;
  job.job_id = "100";
  job.cluster = "lab";
  job.nodes = {"n1"};
  pipeline::AgentFanout fanout(agents, *authenticator, rules::pack_hash(**pack));
  auto ask = [&](ImpostorAgent::Signature signature, const std::string& reason) {
    impostor.signature = signature;
    std::vector<pipeline::NodeEvidence> results = fanout.collect(job, 0, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(results[0].events.empty()) << "the forged Xid must not count";
    ASSERT_EQ(results[0].coverage.size(), 1u);
    const Coverage& c = results[0].coverage[0];
    EXPECT_EQ(c.source, "agent");
    EXPECT_EQ(c.status, CoverageStatus::Failed);
    EXPECT_EQ(c.detail.rfind("unauthenticated: ", 0), 0u) << c.detail;
    EXPECT_NE(c.detail.find(reason), std::string::npos) << c.detail;
  };
  ask(ImpostorAgent::Signature::None, "the answer is not signed");
  ask(ImpostorAgent::Signature::AsItsOwnUser, "signed by uid 65534, not by auth.agent_user root");
  // A genuine root signature, made for another call's answer (another nonce).
  v1::CollectRequest earlier;
  earlier.set_job_id("100");
  earlier.set_node("n1");
  earlier.set_nonce("an earlier call");
  auto genuine = common::encode_answer(munge_socket_, common::kCollect, earlier, v1::CollectResponse());
  ASSERT_TRUE(genuine) << genuine.error().message;
  impostor.replayed = *genuine;
  ask(ImpostorAgent::Signature::Replayed, "made for another request");
}

TEST_F(AuthTest, ClientWithoutMungedGetsAClearError) {
  v1::GetVerdictRequest request;
  request.set_job_id("1");
  common::AuthConfig auth;
  auth.munge_socket = (dir_ / "no-munged.sock").string();
  grpc::ClientContext context;
  auto attached = common::attach_credential(context, auth, common::kGetVerdict, request);
  ASSERT_FALSE(attached);
  EXPECT_EQ(attached.error().code, kAuthMunged);
  EXPECT_NE(attached.error().message.find("no-munged.sock"), std::string::npos) << attached.error().message;
}

// Fleet history (docs/fleet.md): a node's history names every user's jobs, so it is for
// admins; the verdict listing answers everyone, ordinary users with their own jobs only.
TEST_F(AuthTest, NodeHistoryIsForAdminsAndVerdictListsAreFilteredForOthers) {
  StartHead();
  auto node_history_as = [&](uid_t uid, v1::FleetReport* response) {
    v1::NodeHistoryRequest request;
    request.set_node("n1");
    grpc::ClientContext context;
    context.AddMetadata(std::string(common::kMetadataKey), Credential(uid, common::kGetNodeHistory, request));
    return stub_->GetNodeHistory(&context, request, response);
  };
  auto list_as = [&](uid_t uid, v1::FleetReport* response) {
    v1::VerdictListRequest request;
    grpc::ClientContext context;
    context.AddMetadata(std::string(common::kMetadataKey), Credential(uid, common::kListVerdicts, request));
    return stub_->ListVerdicts(&context, request, response);
  };
  v1::FleetReport report;
  grpc::Status denied = node_history_as(kNobody, &report);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED) << denied.error_message();
  ASSERT_TRUE(node_history_as(0, &report).ok());
  EXPECT_EQ(nlohmann::json::parse(report.json())["schema"], "attrib.node_history.v1");

  ASSERT_TRUE(list_as(kNobody, &report).ok());
  EXPECT_EQ(nlohmann::json::parse(report.json())["own_jobs_only"], true);
  ASSERT_TRUE(list_as(0, &report).ok());
  EXPECT_EQ(nlohmann::json::parse(report.json())["own_jobs_only"], false);

  // A credential made for GetVerdict does not open another method.
  v1::NodeHistoryRequest request;
  request.set_node("n1");
  grpc::ClientContext context;
  context.AddMetadata(std::string(common::kMetadataKey), Credential(0, common::kGetVerdict, request));
  EXPECT_EQ(stub_->GetNodeHistory(&context, request, &report).error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

// The archive's figures (attrib-show --stats) are for admins.
TEST_F(AuthTest, ArchiveStatsAreForAdmins) {
  StartHead();
  auto stats_as = [&](uid_t uid, v1::FleetReport* response) {
    v1::ArchiveStatsRequest request;
    grpc::ClientContext context;
    context.AddMetadata(std::string(common::kMetadataKey), Credential(uid, common::kGetArchiveStats, request));
    return stub_->GetArchiveStats(&context, request, response);
  };
  v1::FleetReport report;
  grpc::Status denied = stats_as(kNobody, &report);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED) << denied.error_message();
  grpc::Status allowed = stats_as(0, &report);
  ASSERT_TRUE(allowed.ok()) << allowed.error_message();
  EXPECT_TRUE(nlohmann::json::parse(report.json()).contains("used_bytes")) << report.json();
}

namespace {

// munged dead, its socket file left behind (SIGKILL): libmunge retries the refused socket
// for about 2.25 s. A caller with a deadline (the epilog hook) gets its error at the
// deadline instead, and the credential is not attached. Found by e2e_fault_munged_down:
// the hook spooled 2.27 s after the job ended, past its 1 s deadline.
TEST(AttachCredential, ADeadMungedFailsAtTheCallersDeadline) {
  const std::string dir = "/tmp/attrib-dead-munged-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string socket_path = dir + "/munge.socket";
  {  // a unix socket bound and closed: the file stays, connect() is refused
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    ::close(fd);
  }
  attrib::common::AuthConfig config;
  config.mode = "munge";
  config.munge_socket = socket_path;
  attrib::v1::JobEnded request;
  request.set_job_id("1");
  grpc::ClientContext context;
  const auto start = std::chrono::steady_clock::now();
  auto attached = attrib::common::attach_credential(context, config, attrib::common::kSubmitJobEnded, request,
                                                    start + std::chrono::milliseconds(300));
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(attached);
  EXPECT_NE(attached.error().message.find(socket_path), std::string::npos) << attached.error().message;
  EXPECT_LT(waited, std::chrono::milliseconds(1500)) << "libmunge's own retries were waited out";
  std::filesystem::remove_all(dir);
}

}  // namespace
