// The attribution API (attributiond/api, docs/api.md): the request document and its
// errors, the rate limit, and the whole path through a real head daemon: HTTP over a real
// socket (cpp-httplib's client) with tokens and, as root, a private real munged; gRPC
// Attribute over the daemon's Unix socket; the real SQLite archive, GetVerdict and the
// archived evidence replayed. The lines are a real incident's (tests/corpus/real/
// gpu-xid79-recurring-same-gpu-node1, from https://github.com/akash-network/support/issues/209,
// a Kubernetes GPU provider), sent as an attempt of scheduler "kubernetes".
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "attrib/v1/attrib.grpc.pb.h"
#include "attributiond/api/api_http_server.h"
#include "attributiond/api/attribute_request.h"
#include "attributiond/api/rate_limiter.h"
#include "attributiond/head/head_daemon.h"
#include "common/evidence_archive.h"
#include "common/grpc_limits.h"
#include "core/json_text.h"
#include "rules/evidence/bundle.h"
#include "rules/evidence/bundle_export.h"
#include "tests/support/head_test_config.h"
#include "tests/support/private_munged.h"
#include "tests/support/run_as.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace attrib;

namespace {

constexpr uid_t kNobody = 65534;
const std::string kIncident = attrib::test::source_dir() + "/tests/corpus/real/gpu-xid79-recurring-same-gpu-node1";

// The incident's kernel log as observations: the bundle reader's lines (time, trust).
json incident_observations() {
  auto bundle = rules::open_bundle(kIncident);
  EXPECT_TRUE(bundle) << bundle.error().message;
  json out = json::array();
  if (!bundle) return out;
  auto read = rules::read_bundle_lines(*bundle, [&](const LogLine& line) {
    out.push_back({{"node", line.node},
                   {"source", line.source},
                   {"time", line.time ? json(format_time(*line.time)) : json(nullptr)},
                   {"text", line.text},
                   {"trusted", line.trusted}});
  });
  EXPECT_TRUE(read) << read.error().message;
  return out;
}

json request(const std::string& job_id = "train-7f9c", int attempt = 0) {
  return {{"schema", "attrib.attribute_request.v1"},
          {"job",
           {{"job_id", job_id},
            {"cluster", "akash-pdx"},
            {"scheduler", "kubernetes"},
            {"attempt", attempt},
            {"state", "FAILED"},
            {"exit_code", 1},
            {"nodes", {"node1"}},
            {"user", "nobody"}}},
          {"observations", incident_observations()}};
}

std::string error_of(const std::string& body, size_t max_observations = 1000) {
  auto parsed = api::parse_attribute_request(body, {max_observations, 300, 60});
  return parsed ? "" : parsed.error().code + " " + parsed.error().message;
}

}  // namespace

// ---- the request document -----------------------------------------------------------

TEST(AttributeRequest, ReadsJobObservationsAndCoverage) {
  json body = request();
  body["job"]["start"] = "2024-04-05T21:00:00Z";
  body["job"]["end"] = "2024-04-05T21:30:00Z";
  body["coverage"] = {{{"node", "node1"}, {"source", "kernel"}, {"status", "ok"}},
                      {{"node", "node1"}, {"source", "app"}, {"status", "unavailable"}, {"detail", "pod deleted"}}};
  auto parsed = api::parse_attribute_request(body.dump(), {1000, 300, 60});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->job.scheduler, "kubernetes");
  EXPECT_EQ(parsed->job.cluster, "akash-pdx");
  EXPECT_EQ(parsed->user, "nobody");
  EXPECT_EQ(parsed->observations.size(), body["observations"].size());
  // Positions in each (node, source) stream, in the order sent: the app line, then the kernel's.
  size_t kernel_lines = 0;
  for (const json& line : body["observations"]) kernel_lines += line["source"] == "kernel";
  ASSERT_GT(kernel_lines, 1u);
  EXPECT_EQ(parsed->observations.back().source, "kernel");
  EXPECT_EQ(parsed->observations.back().seq, kernel_lines - 1);
  ASSERT_TRUE(parsed->window_start && parsed->window_end);  // [start - lead, end + grace]
  EXPECT_EQ(*parsed->window_start, *parse_iso_time("2024-04-05T20:55:00Z"));
  EXPECT_EQ(*parsed->window_end, *parse_iso_time("2024-04-05T21:31:00Z"));
  ASSERT_TRUE(parsed->coverage);
  ASSERT_EQ(parsed->coverage->size(), 2u);
  EXPECT_EQ((*parsed->coverage)[0].lines, kernel_lines);  // counted, not taken on trust
  EXPECT_EQ((*parsed->coverage)[1].detail, "pod deleted");
}

TEST(AttributeRequest, ErrorsNameTheField) {
  EXPECT_NE(error_of("{").find("API_E_REQUEST request: not JSON"), std::string::npos);
  json body = request();
  body.erase("schema");
  EXPECT_NE(error_of(body.dump()).find("schema: required"), std::string::npos);
  body = request();
  body["extra"] = 1;
  EXPECT_NE(error_of(body.dump()).find("extra: unknown field"), std::string::npos);
  body = request();
  body["job"].erase("scheduler");
  EXPECT_NE(error_of(body.dump()).find("job.scheduler: required"), std::string::npos);
  body["job"]["scheduler"] = "slurm";
  EXPECT_NE(error_of(body.dump()).find("job.scheduler: Slurm jobs are attributed from their hooks"), std::string::npos);
  body = request();
  body["job"].erase("nodes");
  EXPECT_NE(error_of(body.dump()).find("job.json: nodes: required"), std::string::npos);
  body = request();
  body["job"]["start"] = "yesterday";
  EXPECT_NE(error_of(body.dump()).find("job.json: start:"), std::string::npos);
  body = request();
  body["observations"][2]["source"] = "dmesg";
  EXPECT_NE(error_of(body.dump()).find("observations[2].source: 'dmesg' is not a source"), std::string::npos);
  body = request();
  body["observations"][0]["node"] = "node9";
  EXPECT_NE(error_of(body.dump()).find("observations[0].node: 'node9' is not one of job.nodes"), std::string::npos);
  body = request();
  body["observations"][1]["time"] = 17;
  EXPECT_NE(error_of(body.dump()).find("observations[1].time: expected an ISO 8601 string"), std::string::npos);
  body = request();
  body["observations"][1]["text"] = "two\nlines";
  EXPECT_NE(error_of(body.dump()).find("observations[1].text: one line per observation"), std::string::npos);
  body = request();
  body["coverage"] = {{{"node", "node1"}, {"source", "kernel"}, {"status", "fine"}}};
  EXPECT_NE(error_of(body.dump()).find("coverage[0].status: 'fine' is not one of"), std::string::npos);
  body = request();
  EXPECT_NE(error_of(body.dump(), 3).find("API_E_TOO_LARGE observations:"), std::string::npos);
}

TEST(RateLimiter, BurstsUpToTheLimitThenGoesAtItsPace) {
  api::RateLimiter limiter(6);  // one request every 10 s, bursts of 6
  const TimeUs t0 = 1000 * 1000000LL;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(limiter.take("a", t0), 0) << i;
  EXPECT_EQ(limiter.take("a", t0), 10);
  EXPECT_EQ(limiter.take("b", t0), 0);  // each caller has its own
  EXPECT_GT(limiter.take("a", t0 + 5 * 1000000LL), 0);
  EXPECT_EQ(limiter.take("a", t0 + 10 * 1000000LL), 0);
}

// ---- through a real head daemon -----------------------------------------------------

class AttributionApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = test::head_test_config("attrib-api", attrib::test::rules_pack_dir(), dir_);
    config_.head.sweep = false;
    config_.api.listen = "127.0.0.1:0";
    config_.api.token_file = (dir_ / "tokens").string();
    config_.api.rate_per_minute = 1000;
    WriteTokens("# service callers\nkueue-connector " + std::string(kToken) + "\n");
  }
  void TearDown() override {
    daemon_.reset();
    fs::remove_all(dir_);
  }

  void WriteTokens(const std::string& text, mode_t mode = 0600) {
    std::ofstream(config_.api.token_file) << text;
    ::chmod(config_.api.token_file.c_str(), mode);
  }

  void Start() {
    auto store = store::JobStore::open(config_.head.database);
    ASSERT_TRUE(store) << store.error().message;
    auto pack = rules::load_rule_pack({config_.rules_pack_dir, {}});
    ASSERT_TRUE(pack) << pack.error().message;
    daemon_ = std::make_unique<head::HeadDaemon>(config_, std::move(*store), *pack,
                                                 std::vector<std::unique_ptr<collectors::Collector>>{},
                                                 []() -> std::unique_ptr<slurm::Accounting> { return nullptr; });
    auto started = daemon_->start();
    ASSERT_TRUE(started) << started.error().message;
    ASSERT_GT(daemon_->api_port(), 0);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", daemon_->api_port());
    client_->set_read_timeout(60, 0);
    stub_ = v1::Attribution::NewStub(common::make_channel(config_.head.listen.front()));
  }

  httplib::Result Post(const std::string& body, const std::string& authorization) {
    httplib::Headers headers;
    if (!authorization.empty()) headers.emplace("Authorization", authorization);
    return client_->Post("/v1/attribute", headers, body, "application/json");
  }

  v1::GetVerdictResponse Lookup(const std::string& cluster, const std::string& job_id) {
    v1::GetVerdictRequest request;
    request.set_cluster(cluster);
    request.set_job_id(job_id);
    request.set_include_evidence(true);
    v1::GetVerdictResponse response;
    grpc::ClientContext context;
    grpc::Status status = stub_->GetVerdict(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  static constexpr const char* kToken = "s3cret-token-of-the-kueue-connector";
  fs::path dir_;
  common::Config config_;
  std::unique_ptr<head::HeadDaemon> daemon_;
  std::unique_ptr<httplib::Client> client_;
  std::unique_ptr<v1::Attribution::Stub> stub_;
};

TEST_F(AttributionApiTest, ServiceTokenGetsTheVerdictArchivedWithItsScheduler) {
  Start();
  const std::string body = request().dump();
  auto answer = Post(body, std::string("Bearer ") + kToken);
  ASSERT_TRUE(answer);
  ASSERT_EQ(answer->status, 200) << answer->body;
  EXPECT_EQ(answer->get_header_value("X-Attrib-Cluster"), "akash-pdx");
  EXPECT_EQ(answer->get_header_value("X-Attrib-Job-Id"), "train-7f9c");
  EXPECT_EQ(answer->get_header_value("X-Attrib-Run"), "0");
  EXPECT_EQ(answer->get_header_value("X-Attrib-Duplicate"), "false");
  json verdict = json::parse(answer->body);
  EXPECT_EQ(verdict["schema"], "attrib.verdict.v1");
  EXPECT_EQ(verdict["scheduler"], "kubernetes");
  EXPECT_EQ(verdict["domain"], "GPU_HARDWARE");
  EXPECT_EQ(verdict["root_cause"]["rule"], "gpu.fallen_off_bus");
  EXPECT_EQ(verdict["root_cause"]["event"]["trusted"], true);

  // Archived like a hooked job's, and the archived evidence replays to the same verdict.
  v1::GetVerdictResponse archived = Lookup("akash-pdx", "train-7f9c");
  EXPECT_EQ(archived.status(), "done");
  EXPECT_EQ(archived.verdict_json(), answer->body);
  EXPECT_TRUE(archived.evidence_complete());
  auto files = common::unpack_evidence(archived.evidence_bundle());
  ASSERT_TRUE(files) << files.error().message;
  auto bundle = rules::open_archived_bundle(std::move(*files));
  ASSERT_TRUE(bundle) << bundle.error().message;
  auto pack = rules::load_rule_pack({config_.rules_pack_dir, {}});
  ASSERT_TRUE(pack);
  auto replayed = rules::replay_bundle(*bundle, *pack);
  ASSERT_TRUE(replayed) << replayed.error().message;
  replayed->run = 0;  // the same evidence gives the same verdict; only the archive knows its run
  EXPECT_EQ(json_text(to_json(*replayed)), answer->body);

  // The same attempt again (a client retrying): its verdict, nothing archived twice.
  auto again = Post(body, std::string("Bearer ") + kToken);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(again->get_header_value("X-Attrib-Duplicate"), "true");
  EXPECT_EQ(again->body, answer->body);
  EXPECT_EQ(Lookup("akash-pdx", "train-7f9c").runs(), 1);
  // Its next attempt is a run of its own.
  auto next = Post(request("train-7f9c", 1).dump(), std::string("Bearer ") + kToken);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->get_header_value("X-Attrib-Run"), "1");
}

TEST_F(AttributionApiTest, TheDashboardListsItWithItsScheduler) {
  config_.head.dashboard_listen = "127.0.0.1:0";  // auth.mode none: no login, every visitor an admin
  Start();
  auto answer = Post(request("on-the-dashboard").dump(), std::string("Bearer ") + kToken);
  ASSERT_TRUE(answer);
  ASSERT_EQ(answer->status, 200) << answer->body;
  httplib::Client dashboard("127.0.0.1", daemon_->dashboard_port());
  auto list = dashboard.Get("/api/verdicts");
  ASSERT_TRUE(list);
  ASSERT_EQ(list->status, 200) << list->body;
  json rows = json::parse(list->body)["verdicts"];
  ASSERT_EQ(rows.size(), 1u) << list->body;
  EXPECT_EQ(rows[0]["cluster"], "akash-pdx");
  EXPECT_EQ(rows[0]["job_id"], "on-the-dashboard");
  EXPECT_EQ(rows[0]["scheduler"], "kubernetes");
  EXPECT_EQ(rows[0]["domain"], "GPU_HARDWARE");
  auto job = dashboard.Get("/api/jobs/akash-pdx/on-the-dashboard");
  ASSERT_TRUE(job);
  ASSERT_EQ(job->status, 200) << job->body;
  EXPECT_EQ(json::parse(job->body)["verdict"]["scheduler"], "kubernetes");
}

TEST_F(AttributionApiTest, RefusalsSayWhyWithTheirStatus) {
  config_.auth.mode = "munge";  // no Authorization header: refused (no munged is asked)
  config_.auth.slurm_user = "root";
  config_.api.max_request_bytes = 64 * 1024;
  Start();
  const std::string body = request().dump();
  auto missing = Post(body, "");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 401);
  EXPECT_EQ(json::parse(missing->body)["error"], "AUTH_E_MISSING");
  auto wrong = Post(body, "Bearer not-the-token-at-all-000");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  EXPECT_EQ(json::parse(wrong->body)["error"], "AUTH_E_INVALID");
  auto bad = Post(json{{"schema", "attrib.attribute_request.v1"}}.dump(), std::string("Bearer ") + kToken);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(json::parse(bad->body)["message"].get<std::string>().find("job: required"), std::string::npos);
  json slurm_cluster = request();
  slurm_cluster["job"]["cluster"] = config_.cluster;  // the daemon's own: only its hooks report those
  auto own = Post(slurm_cluster.dump(), std::string("Bearer ") + kToken);
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 400);
  EXPECT_EQ(json::parse(own->body)["error"], "API_E_CLUSTER");
  auto large = Post(std::string(70 * 1024, ' ') + body, std::string("Bearer ") + kToken);
  ASSERT_TRUE(large);
  EXPECT_EQ(large->status, 413);
  EXPECT_EQ(json::parse(large->body)["error"], "API_E_TOO_LARGE");
  auto path = client_->Get("/v1/verdicts");
  ASSERT_TRUE(path);
  EXPECT_EQ(path->status, 404);
  EXPECT_EQ(json::parse(path->body)["error"], "API_E_REQUEST");
}

TEST_F(AttributionApiTest, OverTheRateACallerIsToldWhenToComeBack) {
  config_.api.rate_per_minute = 2;
  Start();
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto ok = Post(request("burst", attempt).dump(), std::string("Bearer ") + kToken);
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200) << ok->body;
  }
  auto limited = Post(request("burst", 2).dump(), std::string("Bearer ") + kToken);
  ASSERT_TRUE(limited);
  EXPECT_EQ(limited->status, 429);
  EXPECT_EQ(json::parse(limited->body)["error"], "API_E_RATE");
  EXPECT_EQ(limited->get_header_value("Retry-After"), "30");
  EXPECT_EQ(Lookup("akash-pdx", "burst").runs(), 2);
}

TEST_F(AttributionApiTest, TokenFileMustBePrivateAndWellFormed) {
  WriteTokens("kueue-connector " + std::string(kToken) + "\n", 0644);
  auto open = api::load_api_tokens(config_.api.token_file);
  ASSERT_FALSE(open);
  EXPECT_NE(open.error().message.find("readable by others than its owner"), std::string::npos);
  WriteTokens("# ok\nkueue-connector " + std::string(kToken) + "\nlonely\n");
  auto lonely = api::load_api_tokens(config_.api.token_file);
  ASSERT_FALSE(lonely);
  EXPECT_NE(lonely.error().message.find(config_.api.token_file + ":3: expected `<name> <token>`"), std::string::npos);
  WriteTokens("a " + std::string(kToken) + "\nb " + std::string(kToken) + "\n");
  auto twice = api::load_api_tokens(config_.api.token_file);
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find(":2: the token of 'b' is given twice"), std::string::npos);
}

TEST_F(AttributionApiTest, GrpcAttributeAnswersAndGetVerdictShowsIt) {
  Start();
  v1::AttributeRequest call;
  call.set_request_json(request("grpc-job").dump());
  v1::AttributeResponse response;
  grpc::ClientContext context;
  grpc::Status status = stub_->Attribute(&context, call, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.cluster(), "akash-pdx");
  EXPECT_EQ(response.job_id(), "grpc-job");
  EXPECT_EQ(response.run(), 0);
  EXPECT_FALSE(response.duplicate());
  EXPECT_EQ(json::parse(response.verdict_json())["domain"], "GPU_HARDWARE");
  EXPECT_EQ(Lookup("akash-pdx", "grpc-job").verdict_json(), response.verdict_json());

  v1::AttributeRequest broken;
  broken.set_request_json("{\"schema\": \"attrib.attribute_request.v1\", \"job\": {}}");
  grpc::ClientContext context2;
  status = stub_->Attribute(&context2, broken, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("job.json: job_id: required"), std::string::npos);
}

// MUNGE over HTTP: the credential is bound to the body; root (an admin) is trusted, an
// ordinary user's lines are not, so the same kernel lines cannot blame a GPU for them.
class AttributionApiMungeTest : public AttributionApiTest {
 protected:
  static void SetUpTestSuite() { munged_ = std::make_unique<test::PrivateMunged>("attrib-api-munge"); }
  static void TearDownTestSuite() { munged_.reset(); }
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (private munged, credentials of other uids)";
    ASSERT_TRUE(munged_->started()) << "private munged did not start: " << munged_->output();
    AttributionApiTest::SetUp();
    config_.auth.mode = "munge";
    config_.auth.munge_socket = munged_->socket();
    config_.auth.slurm_user = "root";
  }
  std::string Credential(uid_t uid, const std::string& body) {
    if (uid == 0) return *common::encode_http_attribute(munged_->socket(), body);
    auto [cred, status] = test::munge_as(uid, munged_->socket(), common::http_attribute_payload(body));
    EXPECT_EQ(status, 0) << cred;
    return cred;
  }
  static inline std::unique_ptr<test::PrivateMunged> munged_;
};

TEST_F(AttributionApiMungeTest, AdminsAreTrustedOthersAreNot) {
  Start();
  json root_request = request("as-root");
  root_request["job"]["user"] = "root";  // a trusted caller names the owner: not nobody's to read
  const std::string root_body = root_request.dump();
  auto root = Post(root_body, "MUNGE " + Credential(0, root_body));
  ASSERT_TRUE(root);
  ASSERT_EQ(root->status, 200) << root->body;
  EXPECT_EQ(json::parse(root->body)["domain"], "GPU_HARDWARE");

  const std::string user_body = request("as-nobody").dump();
  auto user = Post(user_body, "MUNGE " + Credential(kNobody, user_body));
  ASSERT_TRUE(user);
  ASSERT_EQ(user->status, 200) << user->body;
  // The user's own Xid lines blame nothing: they stay unexplained and untrusted, and what
  // is left (nvidia-smi's output, the job's own) is weak evidence that never acts.
  json verdict = json::parse(user->body);
  EXPECT_EQ(verdict["confidence"], "low") << user->body;
  EXPECT_EQ(verdict["recommended_action"], "NONE");
  EXPECT_NE(verdict["root_cause"]["event"]["kind"], "gpu.xid");
  bool xid_seen = false;
  for (const json& event : verdict["unexplained"]) {
    EXPECT_EQ(event["trusted"], false);
    xid_seen = xid_seen || event["kind"] == "gpu.xid";
  }
  EXPECT_TRUE(xid_seen) << user->body;

  // Another's attempt handed in again by an ordinary user: its verdict is not theirs to read.
  auto others = Post(root_body, "MUNGE " + Credential(kNobody, root_body));
  ASSERT_TRUE(others);
  EXPECT_EQ(others->status, 403);
  EXPECT_EQ(json::parse(others->body)["error"], "VERDICT_E_FORBIDDEN");

  // A credential is for its own body only.
  auto moved = Post(request("moved").dump(), "MUNGE " + Credential(0, root_body));
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->status, 401);
}
