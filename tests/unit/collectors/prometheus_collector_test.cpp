// The Prometheus collector against a real Prometheus server: OpenMetrics samples for a
// past window are backfilled with `promtool tsdb create-blocks-from openmetrics`, then
// `prometheus` is started on a free loopback port over that TSDB for the whole suite.
#include "collectors/prometheus_collector.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "collectors/http_client.h"
#include "collectors/registry.h"
#include "rules/engine.h"
#include "tests/support/child_process.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using namespace attrib;
using namespace attrib::collectors;

namespace {

constexpr int64_t kT0 = 1704067200;  // 2024-01-01T00:00:00Z, seconds
constexpr TimeUs kSecond = 1000000;
TimeUs at(int64_t offset_s) { return (kT0 + offset_s) * kSecond; }

const char* kXidN1Gpu3 =
    R"(DCGM_FI_DEV_XID_ERRORS{Hostname="n1",UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52",gpu="3",pci_bus_id="00000000:3B:00.0"})";

// One hour of 15 s samples: n1 GPU 3 reports Xid 79 at +600 s and its DBE counter
// rises at +900 s and +1200 s; n1 GPU 0 stays clean; n2 GPU 1 reports Xid 48 at
// +300 s, clears at +900 s and reports it again at +1500 s.
std::string openmetrics() {
  std::string om;
  auto series = [&](const std::string& name_labels, auto value_at) {
    for (int64_t t = 0; t <= 3600; t += 15) {
      om += name_labels + " " + std::to_string(value_at(t)) + " " + std::to_string(kT0 + t) + "\n";
    }
  };
  om += "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n";
  om += "# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n";
  series(kXidN1Gpu3, [](int64_t t) { return t >= 600 ? 79 : 0; });
  series(R"(DCGM_FI_DEV_XID_ERRORS{Hostname="n1",gpu="0",pci_bus_id="00000000:1A:00.0"})", [](int64_t) { return 0; });
  series(R"(DCGM_FI_DEV_XID_ERRORS{Hostname="n2",gpu="1",pci_bus_id="00000000:5E:00.0"})",
         [](int64_t t) { return (t >= 300 && t < 900) || t >= 1500 ? 48 : 0; });
  om += "# HELP DCGM_FI_DEV_ECC_DBE_VOL_TOTAL Total double-bit volatile ECC errors.\n";
  om += "# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL gauge\n";
  series(R"(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{Hostname="n1",gpu="3"})", [](int64_t t) {
    return t >= 1200 ? 5 : t >= 900 ? 2 : 0;
  });
  // The metric rules' cases (rules/pack/dcgm.yaml, network.yaml), named and typed as
  // dcgm-exporter and node_exporter's infiniband collector export them:
  // n3: its IB port goes down at +600 s (link_downed, state_id 4 -> 1) after a burst of
//     symbol errors at +500 s; GPU 0
  //     is throttled by heat from +700 s (violation time and clock event reasons);
  // n4: GPU 2 remaps a row for an uncorrectable error at +880 s, and remapping fails at +900 s;
  // n5: GPU 6's NVLink retries 3 CRC flits at +300 s (below the bar) and recovers twice at +600 s.
  om += "# TYPE node_infiniband_link_downed_total counter\n";
  series(R"(node_infiniband_link_downed_total{device="mlx5_0",instance="n3:9100",port="1"})",
         [](int64_t t) { return t >= 600 ? 1 : 0; });
  om += "# TYPE node_infiniband_state_id gauge\n";
  series(R"(node_infiniband_state_id{device="mlx5_0",instance="n3:9100",port="1"})",
         [](int64_t t) { return t >= 600 ? 1 : 4; });
  om += "# TYPE node_infiniband_symbol_error_total counter\n";
  series(R"(node_infiniband_symbol_error_total{device="mlx5_0",instance="n3:9100",port="1"})",
         [](int64_t t) { return t >= 500 ? 4000 : 0; });
  om += "# TYPE DCGM_FI_DEV_THERMAL_VIOLATION counter\n";
  series(R"(DCGM_FI_DEV_THERMAL_VIOLATION{Hostname="n3",gpu="0"})", [](int64_t t) { return t >= 700 ? 3000000 : 0; });
  om += "# TYPE DCGM_FI_DEV_CLOCK_THROTTLE_REASONS gauge\n";
  series(R"(DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{Hostname="n3",gpu="0"})", [](int64_t t) { return t >= 700 ? 72 : 1; });
  om += "# TYPE DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS counter\n";
  series(R"(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{Hostname="n4",gpu="2",pci_bus_id="00000000:5E:00.0"})",
         [](int64_t t) { return t >= 880 ? 1 : 0; });
  om += "# TYPE DCGM_FI_DEV_ROW_REMAP_FAILURE gauge\n";
  series(R"(DCGM_FI_DEV_ROW_REMAP_FAILURE{Hostname="n4",gpu="2",pci_bus_id="00000000:5E:00.0"})",
         [](int64_t t) { return t >= 900 ? 1 : 0; });
  om += "# TYPE DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL counter\n";
  series(R"(DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{Hostname="n5",gpu="6"})",
         [](int64_t t) { return t >= 300 ? 253 : 250; });
  om += "# TYPE DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL counter\n";
  series(R"(DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL{Hostname="n5",gpu="6"})",
         [](int64_t t) { return t >= 600 ? 2 : 0; });
  om += "# EOF\n";
  return om;
}

// A one-node job that failed over the whole window the tests read, [+60 s, +3000 s].
JobFacts failed_job(const std::string& node) {
  JobFacts job;
  job.job_id = "4242";
  job.state = "FAILED";
  job.exit_code = 1;
  job.start = at(60);
  job.end = at(3000);
  job.nodes = {node};
  return job;
}

class PrometheusServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char pattern[] = "/tmp/attrib-prometheus-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    std::ofstream(dir_ / "data.om") << openmetrics();
    std::ofstream(dir_ / "prometheus.yml") << "global:\n  scrape_interval: 15s\nscrape_configs: []\n";
    const std::string backfill = "promtool tsdb create-blocks-from openmetrics " + (dir_ / "data.om").string() + " " +
                                 (dir_ / "tsdb").string() + " > " + (dir_ / "promtool.log").string() + " 2>&1";
    ASSERT_EQ(std::system(backfill.c_str()), 0) << "promtool failed; see " << (dir_ / "promtool.log");

    const int port = attrib::test::free_loopback_port();
    ASSERT_GT(port, 0);
    url_ = "http://127.0.0.1:" + std::to_string(port);
    server_ = std::make_unique<attrib::test::ChildProcess>(
        std::vector<std::string>{"prometheus", "--config.file=" + (dir_ / "prometheus.yml").string(),
                                 "--storage.tsdb.path=" + (dir_ / "tsdb").string(),
                                 "--storage.tsdb.retention.time=3650d",
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port)},
        (dir_ / "prometheus.log").string());
    ASSERT_TRUE(server_->started());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      auto ready = http_get(url_ + "/-/ready", {}, 1000);
      if (ready && ready->status == 200) return;
      ASSERT_TRUE(server_->running()) << "prometheus exited; see " << (dir_ / "prometheus.log");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "prometheus not ready within 15 s; see " << (dir_ / "prometheus.log");
  }

  static void TearDownTestSuite() {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  static std::unique_ptr<Collector> make(const std::string& yaml) {
    auto created = create_collector("prometheus", YAML::Load(yaml));
    EXPECT_TRUE(created.ok()) << created.error().message;
    return created ? std::move(*created) : nullptr;
  }

  static std::string options(const std::string& url, int step_s = 15, int timeout_ms = 5000) {
    return "url: " + url + "\nstep_s: " + std::to_string(step_s) + "\ntimeout_ms: " + std::to_string(timeout_ms) +
           "\nqueries:\n"
           "  - {name: xid, promql: 'DCGM_FI_DEV_XID_ERRORS{Hostname=\"{node}\"}'}\n"
           "  - {name: dbe, promql: 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{Hostname=\"{node}\"}'}\n";
  }

  struct Collected {
    std::vector<LogLine> lines;
    std::vector<Coverage> coverage;
  };
  static Collected run(Collector& collector, const std::string& node, TimeUs start, TimeUs end) {
    Collected r;
    CollectRequest request;
    request.job_id = "4242";
    request.node = node;
    request.window_start = start;
    request.window_end = end;
    r.coverage = collector.collect(request, [&](const LogLine& line) { r.lines.push_back(line); });
    return r;
  }

  static inline fs::path dir_;
  static inline std::string url_;
  static inline std::unique_ptr<attrib::test::ChildProcess> server_;
};

TEST_F(PrometheusServer, ChangesToNonZeroBecomeTrustedLinesInTimeOrder) {
  auto collector = make(options(url_));
  ASSERT_NE(collector, nullptr);
  const Collected r = run(*collector, "n1", at(60), at(3000));
  ASSERT_EQ(r.lines.size(), 3u);
  EXPECT_EQ(r.lines[0].text, std::string(kXidN1Gpu3) + " 79 (+79)");
  EXPECT_EQ(r.lines[0].time, at(600));
  EXPECT_EQ(r.lines[1].text, R"(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{Hostname="n1",gpu="3"} 2 (+2))");
  EXPECT_EQ(r.lines[1].time, at(900));
  EXPECT_EQ(r.lines[2].text, R"(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{Hostname="n1",gpu="3"} 5 (+3))");
  EXPECT_EQ(r.lines[2].time, at(1200));
  for (size_t i = 0; i < r.lines.size(); ++i) {
    EXPECT_EQ(r.lines[i].node, "n1");
    EXPECT_EQ(r.lines[i].source, "prometheus");
    EXPECT_EQ(r.lines[i].seq, i);
    EXPECT_TRUE(r.lines[i].trusted);
  }
  ASSERT_EQ(r.coverage.size(), 1u);
  EXPECT_EQ(r.coverage[0].node, "n1");
  EXPECT_EQ(r.coverage[0].source, "prometheus");
  EXPECT_EQ(r.coverage[0].status, CoverageStatus::Ok) << r.coverage[0].detail;
  EXPECT_EQ(r.coverage[0].lines, 3u);
  EXPECT_EQ(r.coverage[0].window_start, at(60));
}

TEST_F(PrometheusServer, EveryTransitionIsALineAndNodesAreSeparate) {
  auto collector = make(options(url_));
  const Collected r = run(*collector, "n2", at(60), at(3000));
  ASSERT_EQ(r.lines.size(), 2u);  // 0 -> 48, 48 -> 0 (not a line), 0 -> 48
  EXPECT_EQ(r.lines[0].time, at(300));
  EXPECT_EQ(r.lines[1].time, at(1500));
  for (const LogLine& line : r.lines) {
    EXPECT_EQ(line.text, R"(DCGM_FI_DEV_XID_ERRORS{Hostname="n2",gpu="1",pci_bus_id="00000000:5E:00.0"} 48 (+48))");
  }
}

TEST_F(PrometheusServer, AValueAlreadyShowingBeforeTheWindowIsNotNews) {
  auto collector = make(options(url_));
  // Xid 79 appeared at +600 s, before this window: only the counter's rises are in it.
  const Collected r = run(*collector, "n1", at(700), at(3000));
  ASSERT_EQ(r.lines.size(), 2u);
  EXPECT_EQ(r.lines[0].time, at(900));
  EXPECT_EQ(r.lines[1].time, at(1200));
  // A window that ends just before the Xid sees nothing; one ending on it sees it.
  EXPECT_EQ(run(*collector, "n1", at(60), at(599)).lines.size(), 0u);
  const Collected on_edge = run(*collector, "n1", at(60), at(600));
  ASSERT_EQ(on_edge.lines.size(), 1u);
  EXPECT_EQ(on_edge.lines[0].time, at(600));
}

TEST_F(PrometheusServer, NodeWithoutSeriesIsEmpty) {
  auto collector = make(options(url_));
  const Collected r = run(*collector, "n3", at(60), at(3000));
  EXPECT_TRUE(r.lines.empty());
  ASSERT_EQ(r.coverage.size(), 1u);
  EXPECT_EQ(r.coverage[0].status, CoverageStatus::Empty);
  EXPECT_EQ(r.coverage[0].detail, "");
}

TEST_F(PrometheusServer, LongWindowsAreReadInChunksWithoutLossOrRepeats) {
  // 1 s steps over 3 h: more than Prometheus's 11,000 points per series in one request.
  auto collector = make(options(url_, 1));
  const Collected r = run(*collector, "n1", at(-7200), at(3600));
  ASSERT_EQ(r.lines.size(), 3u);
  EXPECT_EQ(r.lines[0].time, at(600));
  EXPECT_EQ(r.lines[1].time, at(900));
  EXPECT_EQ(r.lines[2].time, at(1200));
  EXPECT_EQ(r.coverage[0].status, CoverageStatus::Ok) << r.coverage[0].detail;
}

TEST_F(PrometheusServer, DcgmXidLineBecomesATrustedGpuXidEvent) {
  auto pack = rules::load_rule_pack({attrib::test::rules_pack_dir(), {}});
  ASSERT_TRUE(pack.ok()) << pack.error().message;
  rules::Extractor extractor(*pack);
  auto collector = make(options(url_));
  const Collected r = run(*collector, "n1", at(60), at(3000));
  for (const LogLine& line : r.lines) extractor.feed(line);
  std::vector<Event> events = extractor.finish();
  ASSERT_EQ(events.size(), 3u);  // the Xid, and the DBE counter's two rises (+2, +3)
  std::stable_partition(events.begin(), events.end(), [](const Event& e) { return e.kind == "gpu.xid"; });
  EXPECT_EQ(events[1].kind, "gpu.ecc_uncorrectable");
  EXPECT_EQ(events[1].fields["delta"], 2);
  EXPECT_EQ(events[0].kind, "gpu.xid");
  EXPECT_EQ(events[0].rule, "dcgm.xid");
  EXPECT_EQ(events[0].node, "n1");
  EXPECT_TRUE(events[0].trusted);
  EXPECT_EQ(events[0].fields["xid"], 79);
  EXPECT_EQ(events[0].fields["gpu"], 3);
  EXPECT_EQ(events[0].fields["pci"], "00000000:3B:00.0");

  const Verdict verdict = rules::correlate(**pack, failed_job("n1"), events, r.coverage);
  EXPECT_EQ(verdict.domain, "GPU_HARDWARE");
}

// The pack's metric rules decide from the series alone, with the recommended queries
// (docs/collectors.md): every DCGM series and every InfiniBand port counter of the node.
TEST_F(PrometheusServer, MetricRulesDecideWithTheirThresholds) {
  auto pack = rules::load_rule_pack({attrib::test::rules_pack_dir(), {}});
  ASSERT_TRUE(pack.ok()) << pack.error().message;
  auto collector = make("url: " + url_ +
                        "\nstep_s: 15\nqueries:\n"
                        "  - {name: dcgm, promql: '{__name__=~\"DCGM_FI_DEV_.*\",Hostname=\"{node}\"}'}\n"
                        "  - {name: infiniband, promql: '{__name__=~\"node_infiniband_.*\",instance=~\"{node}(:[0-9]+)?\"}'}\n");
  ASSERT_NE(collector, nullptr);
  auto judge = [&](const std::string& node, std::vector<Event>* out = nullptr) {
    const Collected r = run(*collector, node, at(60), at(3000));
    rules::Extractor extractor(*pack);
    for (const LogLine& line : r.lines) extractor.feed(line);
    std::vector<Event> events = extractor.finish();
    if (out != nullptr) *out = events;
    return rules::correlate(**pack, failed_job(node), std::move(events), r.coverage);
  };
  auto kinds = [](const std::vector<Event>& events) {
    std::multiset<std::string> out;
    for (const Event& e : events) out.insert(e.kind + (e.fields.contains("cause") ? "/" + e.fields["cause"].get<std::string>() : ""));
    return out;
  };

  std::vector<Event> events;
  Verdict n3 = judge("n3", &events);
  EXPECT_EQ(kinds(events), (std::multiset<std::string>{"ib.link_errors", "ib.port_state", "ib.port_state",
                                                       "gpu.clock_throttled/THERMAL", "gpu.clock_throttled/REASONS"}));
  // The port going down (high) decides the domain; the earliest NETWORK root, the link's
  // symbol errors 100 s before, is the root cause, and the port down its fan-out.
  EXPECT_EQ(n3.domain, "NETWORK");
  ASSERT_TRUE(n3.root_cause);
  EXPECT_EQ(n3.root_cause->rule, "network.ib_link_errors_metric");
  EXPECT_EQ(n3.root_cause->summary, "Port 1 of mlx5_0 on n3: symbol_error +4000 during the job");
  EXPECT_EQ(n3.recommended_action, "INSPECT_NETWORK");
  ASSERT_EQ(n3.symptoms.size(), 2u);  // the down counter's rise and the state's change
  EXPECT_EQ(n3.symptoms[0].event.kind, "ib.port_state");
  EXPECT_EQ(n3.symptoms[1].event.kind, "ib.port_state");
  // Heat is evidence, not a cause: listed, explained by nothing.
  EXPECT_EQ(n3.unexplained.size(), 2u);

  // Row remapping failed (CONTACT_VENDOR, the highest) 20 s after the uncorrectable error
  // it could not contain: the error is the root cause, the failure its fan-out.
  Verdict n4 = judge("n4");
  EXPECT_EQ(n4.domain, "GPU_HARDWARE");
  ASSERT_TRUE(n4.root_cause);
  EXPECT_EQ(n4.root_cause->rule, "gpu.ecc_uncorrectable_metric");
  EXPECT_EQ(n4.root_cause->summary, "GPU 2 on n4: uncorrectable memory errors during the job "
                                    "(uncorrectable_remapped_rows +1)");
  EXPECT_EQ(n4.recommended_action, "DRAIN_NODE");
  ASSERT_EQ(n4.symptoms.size(), 1u);
  EXPECT_EQ(n4.symptoms[0].event.kind, "gpu.row_remap_failure");

  Verdict n5 = judge("n5", &events);
  EXPECT_EQ(kinds(events), (std::multiset<std::string>{"nvlink.link_errors"}));  // +3 CRC flits are below the bar
  EXPECT_EQ(n5.domain, "NVLINK_FABRIC");
  ASSERT_TRUE(n5.root_cause);
  EXPECT_EQ(n5.root_cause->summary, "NVLink of GPU 6 on n5: recovery errors +2 during the job");
  EXPECT_EQ(n5.confidence, "medium");
}

TEST_F(PrometheusServer, PrometheusErrorsAreFailedAndPartialCoverage) {
  const std::string bad =
      "url: " + url_ + "\nqueries:\n  - {name: broken, promql: 'rate(DCGM_FI_DEV_XID_ERRORS{Hostname=\"{node}\"}'}\n";
  auto only_bad = make(bad);
  Collected r = run(*only_bad, "n1", at(60), at(3000));
  ASSERT_EQ(r.coverage.size(), 1u);
  EXPECT_EQ(r.coverage[0].status, CoverageStatus::Failed);
  EXPECT_NE(r.coverage[0].detail.find("query broken: HTTP 400: bad_data"), std::string::npos) << r.coverage[0].detail;

  auto mixed = make(options(url_) + "  - {name: broken, promql: 'sum(('}\n");
  r = run(*mixed, "n1", at(60), at(3000));
  EXPECT_EQ(r.lines.size(), 3u);  // what the good queries found still arrives
  EXPECT_EQ(r.coverage[0].status, CoverageStatus::Partial);
  EXPECT_NE(r.coverage[0].detail.find("query broken"), std::string::npos) << r.coverage[0].detail;
}

TEST_F(PrometheusServer, UnreachableServerIsFailed) {
  auto collector = make(options("http://127.0.0.1:" + std::to_string(attrib::test::free_loopback_port())));
  const Collected r = run(*collector, "n1", at(60), at(3000));
  EXPECT_TRUE(r.lines.empty());
  ASSERT_EQ(r.coverage.size(), 1u);
  EXPECT_EQ(r.coverage[0].status, CoverageStatus::Failed);
  EXPECT_NE(r.coverage[0].detail.find("query xid: GET"), std::string::npos) << r.coverage[0].detail;
  EXPECT_NE(r.coverage[0].detail.find("query dbe: not attempted"), std::string::npos) << r.coverage[0].detail;
}

TEST_F(PrometheusServer, ServerThatNeverAnswersIsTimeout) {
  attrib::test::SilentListener silent;
  ASSERT_GT(silent.port(), 0);
  auto collector = make(options("http://127.0.0.1:" + std::to_string(silent.port()), 15, 300));
  const auto begin = std::chrono::steady_clock::now();
  const Collected r = run(*collector, "n1", at(60), at(3000));
  const auto elapsed = std::chrono::steady_clock::now() - begin;
  ASSERT_EQ(r.coverage.size(), 1u);
  EXPECT_EQ(r.coverage[0].status, CoverageStatus::Timeout) << r.coverage[0].detail;
  EXPECT_LT(elapsed, std::chrono::seconds(2));  // one deadline, not one per query
}

TEST(PrometheusParse, WarningsAndErrorAnswers) {
  auto answer = parse_prometheus_range(
      R"({"status":"success","warnings":["remote store r1 unreachable"],"data":{"resultType":"matrix","result":[)"
      R"({"metric":{"__name__":"up","job":"a\"b"},"values":[[1704067200.5,"1"],[1704067215,"NaN"]]}]}})");
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  ASSERT_EQ(answer->warnings, std::vector<std::string>{"remote store r1 unreachable"});
  ASSERT_EQ(answer->series.size(), 1u);
  EXPECT_EQ(answer->series[0].samples[0].first, 1704067200500000);
  EXPECT_EQ(prometheus_line(answer->series[0], "q", "1"), R"(up{job="a\"b"} 1)");
  PromSeries no_name;
  no_name.labels["gpu"] = "1";
  EXPECT_EQ(prometheus_line(no_name, "rate_q", "0.5"), R"(rate_q{gpu="1"} 0.5)");

  auto timeout = parse_prometheus_range(R"({"status":"error","errorType":"timeout","error":"query timed out"})");
  ASSERT_FALSE(timeout.ok());
  EXPECT_EQ(timeout.error().code, kPromTimeout);
  auto vector = parse_prometheus_range(R"({"status":"success","data":{"resultType":"vector","result":[]}})");
  ASSERT_FALSE(vector.ok());
  EXPECT_EQ(vector.error().code, kPromFormat);
  EXPECT_FALSE(parse_prometheus_range("<html>bad gateway</html>").ok());
}

TEST(PrometheusOptions, ValidatedAgainstTheTable) {
  auto defaults = create_collector("prometheus", YAML::Load("url: http://x:9090\n"));
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  const auto& default_queries = dynamic_cast<PrometheusCollector&>(**defaults).options().queries;
  // One query per exporter, naming every series a shipped rule reads.
  ASSERT_EQ(default_queries.size(), 2u);
  EXPECT_EQ(default_queries[0].name, "dcgm");
  for (const char* series : {"XID_ERRORS", "ECC_(SBE|DBE)_VOL_TOTAL", "ROW_REMAP_(FAILURE|PENDING)", "RECOVERY",
                             "(THERMAL|POWER)_VIOLATION", "CLOCKS_EVENT_REASONS", R"(Hostname="{node}")"})
    EXPECT_NE(default_queries[0].promql.find(series), std::string::npos) << series;
  EXPECT_EQ(default_queries[1].name, "node");
  for (const char* series : {"node_edac_(csrow_)?(un)?correctable_errors_total", "node_hwmon_", R"(instance=~"{node})"})
    EXPECT_NE(default_queries[1].promql.find(series), std::string::npos) << series;
  auto empty_list = create_collector("prometheus", YAML::Load("queries: []\n"));
  ASSERT_FALSE(empty_list.ok());
  EXPECT_EQ(empty_list.error().code, "CONFIG_E_TYPE");
  auto unknown =
      create_collector("prometheus", YAML::Load("url: http://x\nqueries:\n  - {name: a, promql: up, step: 1}\n"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, "CONFIG_E_UNKNOWN_KEY");
  EXPECT_NE(unknown.error().message.find("line 3"), std::string::npos) << unknown.error().message;
  auto not_list = create_collector("prometheus", YAML::Load("url: http://x\nqueries: up\n"));
  EXPECT_FALSE(not_list.ok());
  auto bad_step =
      create_collector("prometheus", YAML::Load("url: http://x\nstep_s: 0\nqueries: [{name: a, promql: up}]\n"));
  EXPECT_FALSE(bad_step.ok());
  auto no_url = create_collector("prometheus", YAML::Load("url: ''\nqueries: [{name: a, promql: up}]\n"));
  EXPECT_FALSE(no_url.ok());
  auto good = create_collector("prometheus", YAML::Load("url: http://x\nqueries: [{name: a, promql: up}]\n"));
  ASSERT_TRUE(good.ok()) << good.error().message;
  auto* prometheus = dynamic_cast<PrometheusCollector*>(good->get());
  ASSERT_NE(prometheus, nullptr);
  EXPECT_EQ(prometheus->options().step_s, 15);
  EXPECT_EQ(prometheus->options().timeout_ms, 10000);
}

TEST(HttpClientHelpers, NodeSubstitutionQuotesForPromqlAndLogql) {
  EXPECT_EQ(substitute_node(R"(x{Hostname="{node}"} or y{h="{node}"})", "n1"), R"(x{Hostname="n1"} or y{h="n1"})");
  EXPECT_EQ(substitute_node(R"({host="{node}"})", R"(a"b\c)"), R"({host="a\"b\\c"})");
  EXPECT_EQ(url_encode("a b{c=\"d\"}&"), "a%20b%7Bc%3D%22d%22%7D%26");
  EXPECT_EQ(join_url("http://h:1//", "/api"), "http://h:1/api");
}

}  // namespace
