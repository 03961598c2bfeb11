// The Loki collector against tests/support/loki_standin.py, a small stand-in for Loki's
// query_range API started on loopback by each test (Debian 12 has no Loki package).
#include "collectors/loki_collector.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "collectors/http_client.h"
#include "collectors/registry.h"
#include "tests/support/child_process.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace attrib;
using namespace attrib::collectors;

namespace {

constexpr int64_t kBaseNs = 1704067200LL * 1000000000LL;  // 2024-01-01T00:00:00Z
constexpr int64_t kSecondNs = 1000000000LL;
constexpr TimeUs kWindowStart = kBaseNs / 1000;
constexpr TimeUs kWindowEnd = kWindowStart + 1000LL * 1000000;  // +1000 s, inclusive

struct Expected {
  std::string text;
  std::string source;
  int64_t ns;
};

// n1's streams: kernel and app lines sharing timestamps, up to five entries per
// nanosecond across both streams, one burst of nine at a single nanosecond, a
// syslog stream, an unmapped and an unlabelled stream; entries just outside both
// window ends; n2's lines must never show up for n1.
struct Fixture {
  json streams = json::array();
  std::vector<Expected> expected;  // n1, inside the window

  Fixture() {
    json kernel = json::array(), app = json::array(), syslog = json::array(), weird = json::array(),
         unlabelled = json::array(), n2 = json::array();
    auto add = [&](json& values, const std::string& source, int64_t ns, const std::string& text, bool inside) {
      values.push_back({std::to_string(ns), text});
      if (inside) expected.push_back({text, source, ns});
    };
    for (int i = 0; i < 120; ++i) {
      const int64_t ns = kBaseNs + (i / 5) * 7 * kSecondNs + 5;
      const std::string text = "line " + std::to_string(i);
      add(i % 2 ? kernel : app, i % 2 ? "kernel" : "app", ns, text, true);
    }
    for (int i = 0; i < 9; ++i) add(kernel, "kernel", kBaseNs + 500 * kSecondNs, "burst " + std::to_string(i), true);
    add(kernel, "kernel", kBaseNs, "at the window start", true);
    add(kernel, "kernel", kBaseNs - 1, "1 ns before the window", false);
    add(kernel, "kernel", kWindowEnd * 1000 + 999, "last ns of the window's last microsecond", true);
    add(kernel, "kernel", (kWindowEnd + 1) * 1000, "1 us after the window end", false);
    add(syslog, "syslog", kBaseNs + 3 * kSecondNs, "nvidia-persistenced: started", true);
    add(weird, "app", kBaseNs + 4 * kSecondNs, "unmapped label value", true);
    add(unlabelled, "app", kBaseNs + 4 * kSecondNs, "no source label", true);
    add(n2, "kernel", kBaseNs + 4 * kSecondNs, "n2 line", false);
    // Loki keeps each stream's values in time order.
    for (json* values : {&kernel, &app, &syslog, &weird, &unlabelled, &n2}) {
      std::stable_sort(values->begin(), values->end(), [](const json& a, const json& b) {
        return std::stoll(a[0].get<std::string>()) < std::stoll(b[0].get<std::string>());
      });
    }
    streams.push_back({{"stream", {{"host", "n1"}, {"source", "kernel"}}}, {"values", kernel}});
    streams.push_back({{"stream", {{"host", "n1"}, {"source", "app"}, {"rank", "0"}}}, {"values", app}});
    streams.push_back({{"stream", {{"host", "n1"}, {"source", "syslog"}}}, {"values", syslog}});
    streams.push_back({{"stream", {{"host", "n1"}, {"source", "weird"}}}, {"values", weird}});
    streams.push_back({{"stream", {{"host", "n1"}}}, {"values", unlabelled}});
    streams.push_back({{"stream", {{"host", "n2"}, {"source", "kernel"}}}, {"values", n2}});
  }
};

class LokiStandIn {
 public:
  explicit LokiStandIn(const json& streams, const std::vector<std::string>& extra = {}) {
    char pattern[] = "/tmp/attrib-loki-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return;
    dir_ = pattern;
    std::ofstream(dir_ / "streams.json") << json{{"streams", streams}}.dump();
    std::vector<std::string> argv = {ATTRIB_PYTHON3,  attrib::test::support_dir() + "/loki_standin.py",
                                     "--data",        (dir_ / "streams.json").string(),
                                     "--port-file",   (dir_ / "port").string(),
                                     "--request-log", (dir_ / "requests.jsonl").string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<attrib::test::ChildProcess>(argv, (dir_ / "standin.log").string());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline && process_->running()) {
      std::ifstream port(dir_ / "port");
      int number = 0;
      if (port >> number) {
        url_ = "http://127.0.0.1:" + std::to_string(number);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~LokiStandIn() {
    process_.reset();
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  const std::string& url() const { return url_; }
  std::string log() const { return (dir_ / "standin.log").string(); }
  // The query parameters of every query_range request, in order.
  std::vector<json> requests() const {
    std::vector<json> out;
    std::ifstream in(dir_ / "requests.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      json r = json::parse(line);
      if (r["path"] == "/loki/api/v1/query_range") out.push_back(r["params"]);
    }
    return out;
  }

 private:
  fs::path dir_;
  std::string url_;
  std::unique_ptr<attrib::test::ChildProcess> process_;
};

struct Collected {
  std::vector<LogLine> lines;
  std::vector<Coverage> coverage;
  const Coverage* row(const std::string& source) const {
    for (const Coverage& c : coverage) {
      if (c.source == source) return &c;
    }
    return nullptr;
  }
};

Collected collect(const std::string& yaml, const std::string& node = "n1") {
  auto created = create_collector("loki", YAML::Load(yaml));
  EXPECT_TRUE(created.ok()) << created.error().message;
  Collected r;
  if (!created) return r;
  CollectRequest request;
  request.job_id = "4242";
  request.node = node;
  request.window_start = kWindowStart;
  request.window_end = kWindowEnd;
  r.coverage = (*created)->collect(request, [&](const LogLine& line) { r.lines.push_back(line); });
  return r;
}

std::string options(const std::string& url, int limit, const std::string& more = "") {
  return "url: " + url + "\nquery: '{host=\"{node}\"}'\nlimit: " + std::to_string(limit) + "\n" + more;
}

void expect_every_line_once(const Fixture& fixture, const Collected& r) {
  std::map<std::string, int> got;
  for (const LogLine& line : r.lines) ++got[line.text];
  ASSERT_EQ(r.lines.size(), fixture.expected.size());
  for (const Expected& e : fixture.expected) {
    EXPECT_EQ(got[e.text], 1) << e.text;
  }
  std::map<std::string, uint64_t> next_seq;
  TimeUs previous = 0;
  for (const LogLine& line : r.lines) {
    const Expected* e = nullptr;
    for (const Expected& candidate : fixture.expected) {
      if (candidate.text == line.text) e = &candidate;
    }
    ASSERT_NE(e, nullptr) << line.text;
    EXPECT_EQ(line.node, "n1");
    EXPECT_EQ(line.source, e->source) << line.text;
    EXPECT_EQ(line.time, e->ns / 1000) << line.text;
    EXPECT_EQ(line.trusted, e->source == "kernel") << line.text;
    EXPECT_EQ(line.seq, next_seq[line.source]++) << line.text;
    EXPECT_GE(*line.time, previous) << "lines must arrive in time order";
    previous = *line.time;
  }
}

TEST(LokiCollector, EveryLineArrivesOnceAcrossPages) {
  const Fixture fixture;
  LokiStandIn loki(fixture.streams);
  ASSERT_FALSE(loki.url().empty()) << "stand-in did not start; see " << loki.log();
  const Collected r = collect(options(loki.url(), 4));
  expect_every_line_once(fixture, r);

  // Coverage: one row per source the mapping can produce, counts per source.
  ASSERT_EQ(r.coverage.size(), 4u);
  EXPECT_EQ(r.coverage[0].source, "kernel");
  EXPECT_EQ(r.coverage[3].source, "app");
  EXPECT_EQ(r.row("kernel")->lines, 60u + 9u + 2u);
  EXPECT_EQ(r.row("app")->lines, 60u + 2u);
  EXPECT_EQ(r.row("syslog")->lines, 1u);
  EXPECT_EQ(r.row("syslog")->status, CoverageStatus::Ok);
  EXPECT_EQ(r.row("fabricmanager")->status, CoverageStatus::Empty);
  EXPECT_EQ(r.row("kernel")->status, CoverageStatus::Ok) << r.row("kernel")->detail;

  // It really paged: forward, nanosecond bounds, the configured page size, a start
  // that only moves forward, and a larger page for the burst at one nanosecond.
  const std::vector<json> requests = loki.requests();
  ASSERT_GT(requests.size(), 30u);
  int64_t previous_start = 0;
  bool grew = false;
  for (const json& q : requests) {
    EXPECT_EQ(q["direction"], "forward");
    EXPECT_EQ(q["query"], R"({host="n1"})");
    EXPECT_EQ(q["end"], std::to_string((kWindowEnd + 1) * 1000));
    const int64_t start = std::stoll(q["start"].get<std::string>());
    EXPECT_GE(start, previous_start);
    previous_start = start;
    grew = grew || q["limit"] != "4";
  }
  EXPECT_EQ(requests.front()["start"], std::to_string(kBaseNs));
  EXPECT_EQ(requests.front()["limit"], "4");
  EXPECT_TRUE(grew) << "nine entries at one nanosecond need a page larger than four";
}

TEST(LokiCollector, PageSizeDoesNotChangeTheResult) {
  const Fixture fixture;
  LokiStandIn loki(fixture.streams);
  ASSERT_FALSE(loki.url().empty()) << "stand-in did not start; see " << loki.log();
  for (int limit : {1, 5, 1000}) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    expect_every_line_once(fixture, collect(options(loki.url(), limit)));
  }
}

TEST(LokiCollector, MaxLinesStopsWithPartialCoverage) {
  const Fixture fixture;
  LokiStandIn loki(fixture.streams);
  const Collected r = collect(options(loki.url(), 4, "max_lines: 10\n"));
  EXPECT_EQ(r.lines.size(), 10u);
  EXPECT_EQ(r.row("kernel")->status, CoverageStatus::Partial);
  EXPECT_NE(r.row("kernel")->detail.find("max_lines=10"), std::string::npos);
}

TEST(LokiCollector, SourceMappingAndTrustAreConfigurable) {
  const Fixture fixture;
  LokiStandIn loki(fixture.streams);
  // rank=0 marks the app stream; map nothing to kernel: no line may be trusted.
  const Collected r =
      collect(options(loki.url(), 100, "source_label: rank\nsource_map: {\"0\": app}\ndefault_source: syslog\n"));
  ASSERT_EQ(r.lines.size(), fixture.expected.size());
  for (const LogLine& line : r.lines) {
    EXPECT_FALSE(line.trusted) << line.text;
    EXPECT_EQ(line.source,
              line.text.rfind("line ", 0) == 0 && std::stoi(line.text.substr(5)) % 2 == 0 ? "app" : "syslog")
        << line.text;
  }
  ASSERT_EQ(r.coverage.size(), 2u);
  EXPECT_EQ(r.coverage[0].source, "syslog");
  EXPECT_EQ(r.coverage[1].source, "app");
}

TEST(LokiCollector, ServerErrorMidwayIsFailed) {
  const Fixture fixture;
  LokiStandIn loki(fixture.streams, {"--fail-after", "2"});
  const Collected r = collect(options(loki.url(), 4));
  // Two pages arrived before the error (how many new lines the second held depends
  // on the stand-in's order of equal timestamps); what arrived is kept and counted.
  EXPECT_GE(r.lines.size(), 5u);
  EXPECT_LE(r.lines.size(), 8u);
  const std::string progress = "after " + std::to_string(r.lines.size()) + " lines in 2 pages";
  for (const Coverage& c : r.coverage) {
    EXPECT_EQ(c.status, CoverageStatus::Failed);
    EXPECT_NE(c.detail.find("HTTP 500"), std::string::npos) << c.detail;
    EXPECT_NE(c.detail.find(progress), std::string::npos) << c.detail;
  }
}

TEST(LokiCollector, RejectedQueryIsFailedWithLokisMessage) {
  const Fixture fixture;
  LokiStandIn loki(fixture.streams);
  const Collected r = collect("url: " + loki.url() + "\nquery: 'host={node}'\n");
  EXPECT_TRUE(r.lines.empty());
  EXPECT_EQ(r.row("kernel")->status, CoverageStatus::Failed);
  EXPECT_NE(r.row("kernel")->detail.find("HTTP 400: parse error"), std::string::npos) << r.row("kernel")->detail;
}

TEST(LokiCollector, UnreachableIsFailedAndSlowIsTimeout) {
  const Collected unreachable =
      collect(options("http://127.0.0.1:" + std::to_string(attrib::test::free_loopback_port()), 10));
  EXPECT_EQ(unreachable.row("kernel")->status, CoverageStatus::Failed);
  EXPECT_NE(unreachable.row("kernel")->detail.find("GET http://127.0.0.1:"), std::string::npos);

  const Fixture fixture;
  LokiStandIn slow(fixture.streams, {"--delay-ms", "2000"});
  ASSERT_FALSE(slow.url().empty());
  const auto begin = std::chrono::steady_clock::now();
  const Collected r = collect(options(slow.url(), 10, "timeout_ms: 300\n"));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::milliseconds(1500));
  EXPECT_EQ(r.row("app")->status, CoverageStatus::Timeout) << r.row("app")->detail;
}

TEST(LokiParse, StreamsAreMergedInTimeOrder) {
  auto entries = parse_loki_streams(R"({"status":"success","data":{"resultType":"streams","result":[)"
                                    R"({"stream":{"s":"b"},"values":[["30","b30"],["10","b10"]]},)"
                                    R"({"stream":{"s":"a"},"values":[["20","a20",{"trace":"x"}],["10","a10"]]}]}})");
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  std::vector<std::string> lines;
  for (const LokiEntry& e : *entries) lines.push_back(e.line);
  EXPECT_EQ(lines, (std::vector<std::string>{"b10", "a10", "a20", "b30"}));
  EXPECT_FALSE(parse_loki_streams(R"({"status":"success","data":{"resultType":"matrix","result":[]}})").ok());
  EXPECT_FALSE(
      parse_loki_streams(R"({"status":"success","data":{"resultType":"streams","result":[{"values":[[1,"x"]]}]}})")
          .ok());
}

TEST(LokiOptions, ValidatedAgainstTheTable) {
  EXPECT_FALSE(create_collector("loki", YAML::Load("url: ''\nquery: '{a=\"b\"}'\n")).ok());
  EXPECT_FALSE(create_collector("loki", YAML::Load("url: http://x\nquery: q\nlimit: 0\n")).ok());
  auto bad_map = create_collector("loki", YAML::Load("url: http://x\nquery: q\nsource_map: {k: kernal}\n"));
  ASSERT_FALSE(bad_map.ok());
  EXPECT_EQ(bad_map.error().code, "CONFIG_E_VALUE");
  EXPECT_NE(bad_map.error().message.find("line 3"), std::string::npos) << bad_map.error().message;
  auto unknown = create_collector("loki", YAML::Load("url: http://x\nquery: q\ndirection: backward\n"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, "CONFIG_E_UNKNOWN_KEY");
  auto good = create_collector("loki", YAML::Load("url: http://x\nquery: q\n"));
  ASSERT_TRUE(good.ok()) << good.error().message;
  auto* loki = dynamic_cast<LokiCollector*>(good->get());
  ASSERT_NE(loki, nullptr);
  EXPECT_EQ(loki->options().limit, 100);
  EXPECT_EQ(loki->source_names(), (std::vector<std::string>{"kernel", "syslog", "fabricmanager", "app"}));
}

}  // namespace
