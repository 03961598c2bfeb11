// GET /metrics of an in-process head daemon (real gRPC, real SQLite, an empty journal
// directory as its only log source, an in-memory slurmdbd), read once with a plain HTTP
// client and once by a real `prometheus` scraping it on loopback and answering PromQL.
// Also the node agent's counters, and docs/operations.md listing every metric.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "attrib/v1/attrib.grpc.pb.h"
#include "attributiond/head/head_daemon.h"
#include "attributiond/node/node_collect_service.h"
#include "collectors/registry.h"
#include "common/auth.h"
#include "common/spool.h"
#include "core/clock.h"
#include "core/whole_file.h"
#include "tests/support/child_process.h"
#include "tests/support/head_test_config.h"
#include "tests/support/memory_accounting.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using namespace attrib;
using namespace std::chrono_literals;

namespace {

constexpr TimeUs kSecond = 1000000;

}  // namespace

class MetricsEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = test::head_test_config("attrib-metrics", attrib::test::rules_pack_dir(), dir_);
    config_.head.metrics_listen = "127.0.0.1:0";
  }
  void TearDown() override {
    prometheus_.reset();
    daemon_.reset();
    fs::remove_all(dir_);
  }

  void Start() {
    auto store = store::JobStore::open(config_.head.database);
    ASSERT_TRUE(store) << store.error().message;
    auto pack = rules::load_rule_pack({config_.rules_pack_dir, {}});
    ASSERT_TRUE(pack) << pack.error().message;
    YAML::Node options;
    options["directory"] = (dir_ / "journal").string();  // empty: coverage without evidence
    auto journald = collectors::create_collector("journald", options);
    ASSERT_TRUE(journald) << journald.error().message;
    std::vector<std::unique_ptr<collectors::Collector>> list;
    list.push_back(std::move(*journald));
    // slurmdbd stand-in: every job's record is final at once.
    auto accounting = accounting_;
    daemon_ = std::make_unique<head::HeadDaemon>(config_, std::move(*store), *pack, std::move(list), [accounting] {
      return std::make_unique<test::MemoryAccounting>(accounting);
    });
    auto started = daemon_->start();
    ASSERT_TRUE(started) << started.error().message;
    ASSERT_GT(daemon_->metrics_port(), 0);
    stub_ = v1::Attribution::NewStub(grpc::CreateChannel(config_.head.listen[0], grpc::InsecureChannelCredentials()));
  }

  // Queues a job that ended 10 s ago.
  void Submit(const std::string& job_id, const std::string& state, int exit_code) {
    slurm::JobRecordFacts record;
    record.facts.job_id = job_id;
    record.facts.cluster = "lab";
    record.facts.state = state;
    record.facts.exit_code = exit_code;
    record.facts.start = wall_clock_us() - 20 * kSecond;
    record.facts.end = wall_clock_us() - 10 * kSecond;
    record.facts.nodes = {"n1"};
    record.submit = record.facts.start;
    {
      std::lock_guard lock(accounting_->mutex);
      accounting_->records[job_id] = record;
    }
    v1::JobEnded job;
    job.set_job_id(job_id);
    job.set_node_list("n1");
    job.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
    grpc::ClientContext context;
    v1::SubmitResponse response;
    ASSERT_TRUE(stub_->SubmitJobEnded(&context, job, &response).ok());
  }

  // Waits, through the endpoint itself, until `count` jobs are attributed and the queue
  // is empty (comments written too).
  void WaitAttributed(int count) {
    std::string want = "\nattrib_jobs_attributed_total " + std::to_string(count) + "\n";
    for (int i = 0; i < 500; ++i) {
      std::string text = Scrape();
      if (text.find(want) != std::string::npos && text.find("\nattrib_queue_depth 0\n") != std::string::npos) return;
      std::this_thread::sleep_for(20ms);
    }
    FAIL() << count << " jobs not attributed within 10 s:\n" << Scrape();
  }

  std::string Scrape(std::string* content_type = nullptr) {
    httplib::Client client("127.0.0.1", daemon_->metrics_port());
    client.set_read_timeout(5, 0);
    auto response = client.Get("/metrics");
    EXPECT_TRUE(response) << "GET /metrics failed";
    if (!response) return "";
    EXPECT_EQ(response->status, 200);
    if (content_type != nullptr) *content_type = response->get_header_value("Content-Type");
    return response->body;
  }

  fs::path dir_;
  common::Config config_;
  std::shared_ptr<test::MemoryAccounting::State> accounting_ = std::make_shared<test::MemoryAccounting::State>();
  std::unique_ptr<head::HeadDaemon> daemon_;
  std::unique_ptr<v1::Attribution::Stub> stub_;
  std::unique_ptr<attrib::test::ChildProcess> prometheus_;
};

TEST_F(MetricsEndpointTest, PlainGetReturnsTheExpositionWithTheHeadsCounts) {
  Start();
  Submit("500", "FAILED", 3);
  Submit("501", "COMPLETED", 0);
  WaitAttributed(2);
  // job 500's other hook, after its verdict: a duplicate of the attempt already judged.
  v1::JobEnded again;
  again.set_job_id("500");
  again.set_hook(v1::HOOK_KIND_JOBCOMP_SCRIPT);
  grpc::ClientContext context;
  v1::SubmitResponse response;
  ASSERT_TRUE(stub_->SubmitJobEnded(&context, again, &response).ok());

  std::string content_type;
  std::string text = Scrape(&content_type);
  EXPECT_EQ(content_type, "text/plain; version=0.0.4; charset=utf-8");
  for (const char* line : {
           "# TYPE attrib_jobs_attributed_total counter\n",
           "attrib_jobs_attributed_total 2\n",
           "attrib_jobs_accepted_total{hook=\"epilog_slurmctld\",via=\"rpc\"} 2\n",
           "attrib_jobs_duplicate_total{hook=\"jobcomp_script\",via=\"rpc\"} 1\n",
           "attrib_verdicts_total{domain=\"UNATTRIBUTED\",rule=\"none\"} 1\n",
           "# TYPE attrib_attribution_latency_seconds histogram\n",
           "attrib_attribution_latency_seconds_count 2\n",
           "attrib_attribution_latency_seconds_bucket{le=\"5\"} 0\n",
           // Where their time went: each job judged and commented in one attempt counts once a phase.
           "# TYPE attrib_attribution_phase_seconds histogram\n",
           "attrib_attribution_phase_seconds_count{phase=\"record\"} 2\n",
           "attrib_attribution_phase_seconds_count{phase=\"collect\"} 2\n",
           "attrib_attribution_phase_seconds_count{phase=\"rules\"} 2\n",
           "attrib_attribution_phase_seconds_count{phase=\"archive\"} 2\n",
           "attrib_attribution_phase_seconds_count{phase=\"comment\"} 2\n",
           "attrib_queue_depth 0\n",
           "attrib_spool_backlog 0\n",
       })
    EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "\n" << text;
  // The journald collector reports per log source (kernel, syslog, ...); its directory is empty.
  EXPECT_NE(text.find("attrib_collector_coverage_total{source=\"kernel\",status="), std::string::npos) << text;
  EXPECT_NE(text.find("attrib_info{role=\"head\",rule_pack_version="), std::string::npos) << text;

  httplib::Client client("127.0.0.1", daemon_->metrics_port());
  auto missing = client.Get("/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST_F(MetricsEndpointTest, SpoolBacklogAndQueueDepthAreReadWhenScraped) {
  config_.head.spool_scan_interval_s = 3600;  // the test fills the spool after the start-up drain
  Start();
  for (const char* name : {"a", "b"}) std::ofstream(dir_ / "spool" / (std::string(name) + common::kSpoolSuffix)) << "x";
  EXPECT_NE(Scrape().find("attrib_spool_backlog 2\n"), std::string::npos);
}

TEST_F(MetricsEndpointTest, BadAddressOrBusyPortFailsTheStart) {
  config_.head.metrics_listen = "no-port-here";
  auto store = store::JobStore::open(config_.head.database);
  ASSERT_TRUE(store);
  auto pack = rules::load_rule_pack({config_.rules_pack_dir, {}});
  ASSERT_TRUE(pack);
  head::HeadDaemon bad(config_, std::move(*store), *pack, {}, [] { return nullptr; });
  auto started = bad.start();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().code, "LISTEN_E_ADDRESS");

  ops::MetricsRegistry registry;
  auto first = ops::serve_metrics("127.0.0.1:0", registry);
  ASSERT_TRUE(first);
  auto second = ops::serve_metrics("127.0.0.1:" + std::to_string((*first)->port()), registry);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, "LISTEN_E_BIND");
}

// The real thing: Prometheus scrapes the endpoint every second and must both parse the
// exposition (up == 1) and answer PromQL with the daemon's values.
TEST_F(MetricsEndpointTest, RealPrometheusScrapesTheEndpoint) {
  Start();
  Submit("600", "FAILED", 3);
  Submit("601", "FAILED", 3);
  WaitAttributed(2);

  int port = attrib::test::free_loopback_port();
  ASSERT_GT(port, 0);
  std::ofstream(dir_ / "prometheus.yml") << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                                            "scrape_configs:\n  - job_name: attrib\n    static_configs:\n"
                                            "      - targets: ['127.0.0.1:"
                                         << daemon_->metrics_port() << "']\n";
  prometheus_ = std::make_unique<attrib::test::ChildProcess>(
      std::vector<std::string>{"prometheus", "--config.file=" + (dir_ / "prometheus.yml").string(),
                               "--storage.tsdb.path=" + (dir_ / "tsdb").string(),
                               "--web.listen-address=127.0.0.1:" + std::to_string(port)},
      (dir_ / "prometheus.log").string());
  ASSERT_TRUE(prometheus_->started());

  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1, 0);
  client.set_read_timeout(5, 0);
  // One instant query; the first sample's value, or "" while there is none.
  auto query = [&](const std::string& promql) -> std::string {
    auto response = client.Get("/api/v1/query", httplib::Params{{"query", promql}}, httplib::Headers{});
    if (!response || response->status != 200) return "";
    auto json = nlohmann::json::parse(response->body, nullptr, false);
    if (json.is_discarded() || json["status"] != "success" || json["data"]["result"].empty()) return "";
    return json["data"]["result"][0]["value"][1].get<std::string>();
  };
  std::string attributed;
  for (auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;) {
    ASSERT_TRUE(prometheus_->running()) << "prometheus exited:\n"
                                        << attrib::read_whole_file(dir_ / "prometheus.log").value_or("");
    attributed = query("attrib_jobs_attributed_total");
    if (!attributed.empty()) break;
    std::this_thread::sleep_for(250ms);
  }
  ASSERT_EQ(attributed, "2") << "no scrape arrived; prometheus log:\n"
                             << attrib::read_whole_file(dir_ / "prometheus.log").value_or("");
  EXPECT_EQ(query("up{job=\"attrib\"}"), "1");
  EXPECT_EQ(query("attrib_verdicts_total{domain=\"UNATTRIBUTED\",rule=\"none\"}"), "2");
  EXPECT_EQ(query("attrib_jobs_accepted_total{hook=\"epilog_slurmctld\",via=\"rpc\"}"), "2");
  EXPECT_EQ(query("attrib_attribution_latency_seconds_count"), "2");
  EXPECT_EQ(query("attrib_queue_depth"), "0");
  // Prometheus computes quantiles from our buckets: both jobs took 10-20 s.
  std::string p50 = query("histogram_quantile(0.5, attrib_attribution_latency_seconds_bucket)");
  ASSERT_FALSE(p50.empty());
  EXPECT_GE(std::stod(p50), 10);
  EXPECT_LE(std::stod(p50), 20);
}

TEST(NodeAgentMetrics, CollectRequestsAreCountedByStatusWithDuration) {
  ops::MetricsRegistry registry;
  ops::NodeMetrics metrics(registry);
  auto pack = rules::load_rule_pack({attrib::test::rules_pack_dir(), {}});
  ASSERT_TRUE(pack) << pack.error().message;
  YAML::Node options;
  options["directory"] = "/nonexistent/attrib-journal";
  auto journald = collectors::create_collector("journald", options);
  ASSERT_TRUE(journald);
  std::vector<std::unique_ptr<collectors::Collector>> list;
  list.push_back(std::move(*journald));
  common::AuthConfig no_auth;
  no_auth.mode = "none";  // MUNGE is tested with the auth code; here only the counting matters
  auto auth = common::Authenticator::create(no_auth);
  ASSERT_TRUE(auth) << auth.error().message;
  node::NodeCollectService service("n1", *pack, std::move(list), *auth, &metrics);
  fs::path socket = fs::temp_directory_path() / ("attrib-agent-metrics-" + std::to_string(getpid()) + ".sock");
  std::string address = "unix://" + socket.string();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  ASSERT_TRUE(server);
  auto stub = v1::NodeCollector::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  v1::CollectRequest request;
  request.set_job_id("7");
  request.set_node("n1");
  request.set_window_end_us(1);
  v1::CollectResponse response;
  {
    grpc::ClientContext context;
    EXPECT_TRUE(stub->Collect(&context, request, &response).ok());
  }
  request.set_node("n2");
  {
    grpc::ClientContext context;
    EXPECT_EQ(stub->Collect(&context, request, &response).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  }
  server->Shutdown();
  fs::remove(socket);
  std::string text = registry.render();
  EXPECT_NE(text.find("attrib_collect_requests_total{status=\"ok\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("attrib_collect_requests_total{status=\"failed_precondition\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("attrib_collect_duration_seconds_count 2\n"), std::string::npos);
  EXPECT_NE(text.find("attrib_collector_coverage_total{source=\"kernel\",status=\"unavailable\"} 1\n"),
            std::string::npos)
      << text;
}

// docs/operations.md must name every metric either role exports.
TEST(MetricsDocs, OperationsGuideListsEveryMetric) {
  ops::MetricsRegistry head_registry, node_registry;
  ops::HeadMetrics head_metrics(head_registry);
  ops::register_head_gauges(
      head_registry, [] { return 0.0; }, [] { return 0.0; }, [] { return 0.0; });
  ops::register_info(head_registry, "head", "", "");
  ops::NodeMetrics node_metrics(node_registry);
  std::string doc =
      attrib::read_whole_file(fs::path(attrib::test::source_dir()) / "docs" / "operations.md").value_or("");
  ASSERT_FALSE(doc.empty());
  for (const auto* registry : {&head_registry, &node_registry})
    for (const auto& name : registry->names())
      EXPECT_NE(doc.find("`" + name + "`"), std::string::npos) << name << " is not documented in docs/operations.md";
}
