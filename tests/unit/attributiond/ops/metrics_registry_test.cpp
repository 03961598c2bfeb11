// The metrics registry's text exposition (format 0.0.4): HELP/TYPE lines, label
// escaping, histogram buckets, deterministic order, and misuse caught at registration.
#include "attributiond/ops/metrics_registry.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "attributiond/ops/daemon_metrics.h"

using namespace attrib;
using ops::MetricsRegistry;

TEST(MetricsRegistry, CountersWithLabelsRenderSortedWithHelpAndType) {
  MetricsRegistry registry;
  auto& requests = registry.counter("t_requests_total", "Requests.", {"status", "kind"});
  requests.labels({"ok", "b"}).inc();
  requests.labels({"ok", "a"}).inc(2);
  requests.labels({"failed", "a"}).inc();
  registry.counter("a_first_total", "Sorted before t_.");
  EXPECT_EQ(registry.render(),
            "# HELP a_first_total Sorted before t_.\n"
            "# TYPE a_first_total counter\n"
            "a_first_total 0\n"
            "# HELP t_requests_total Requests.\n"
            "# TYPE t_requests_total counter\n"
            "t_requests_total{status=\"failed\",kind=\"a\"} 1\n"
            "t_requests_total{status=\"ok\",kind=\"a\"} 2\n"
            "t_requests_total{status=\"ok\",kind=\"b\"} 1\n");
}

TEST(MetricsRegistry, CounterNeverGoesDownAndGaugeDoes) {
  MetricsRegistry registry;
  auto& counter = registry.counter("c_total", "c").get();
  counter.inc(3);
  counter.inc(-1);
  counter.inc(0.5);
  EXPECT_DOUBLE_EQ(counter.value(), 3.5);
  auto& gauge = registry.gauge("g", "g").get();
  gauge.set(4);
  gauge.add(-6);
  EXPECT_NE(registry.render().find("\ng -2\n"), std::string::npos) << registry.render();
}

TEST(MetricsRegistry, LabelValuesAndHelpAreEscaped) {
  MetricsRegistry registry;
  registry.counter("e_total", "Back\\slash and\nnewline.", {"v"}).labels({"a\"b\\c\nd"}).inc();
  EXPECT_EQ(registry.render(),
            "# HELP e_total Back\\\\slash and\\nnewline.\n"
            "# TYPE e_total counter\n"
            "e_total{v=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(MetricsRegistry, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsRegistry registry;
  auto& latency = registry.histogram("lat_seconds", "Latency.", {0.5, 1, 10}, {"role"});
  for (double v : {0.2, 0.5, 0.7, 3.0, 100.0}) latency.labels({"head"}).observe(v);
  EXPECT_EQ(registry.render(),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{role=\"head\",le=\"0.5\"} 2\n"
            "lat_seconds_bucket{role=\"head\",le=\"1\"} 3\n"
            "lat_seconds_bucket{role=\"head\",le=\"10\"} 4\n"
            "lat_seconds_bucket{role=\"head\",le=\"+Inf\"} 5\n"
            "lat_seconds_sum{role=\"head\"} 104.4\n"
            "lat_seconds_count{role=\"head\"} 5\n");
}

TEST(MetricsRegistry, CallbackGaugeIsReadAtRenderAndLeftOutWhenItFails) {
  MetricsRegistry registry;
  std::optional<double> value = 7;
  registry.gauge_callback("depth", "Depth.", [&] { return value; });
  EXPECT_EQ(registry.render(), "# HELP depth Depth.\n# TYPE depth gauge\ndepth 7\n");
  value = std::nullopt;
  EXPECT_EQ(registry.render(), "# HELP depth Depth.\n# TYPE depth gauge\n");
}

TEST(MetricsRegistry, NumbersUseTheShortestExactForm) {
  EXPECT_EQ(ops::format_value(1), "1");
  EXPECT_EQ(ops::format_value(0.005), "0.005");
  EXPECT_EQ(ops::format_value(1e21), "1e+21");
  EXPECT_EQ(ops::format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(ops::format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(ops::format_value(std::nan("")), "NaN");
}

TEST(MetricsRegistry, MisuseIsRefusedAtRegistration) {
  MetricsRegistry registry;
  registry.counter("x_total", "x", {"a"});
  EXPECT_THROW(registry.counter("x_total", "again"), std::invalid_argument);
  EXPECT_THROW(registry.counter("1bad", "digit first"), std::invalid_argument);
  EXPECT_THROW(registry.counter("y_total", "bad label", {"a-b"}), std::invalid_argument);
  EXPECT_THROW(registry.counter("z_total", "reserved label", {"__name"}), std::invalid_argument);
  EXPECT_THROW(registry.histogram("h", "le is the bucket's", {1}, {"le"}), std::invalid_argument);
  EXPECT_THROW(registry.histogram("h2", "unsorted", {2, 1}), std::invalid_argument);
  registry.histogram("h3", "h3", {1});
  EXPECT_THROW(registry.counter("h3_count", "collides with the histogram's series"), std::invalid_argument);
  EXPECT_THROW(registry.counter("x_total_new", "x", {"a"}).labels({"1", "2"}), std::invalid_argument);
}

TEST(MetricsRegistry, ConcurrentIncrementsAreAllCounted) {
  MetricsRegistry registry;
  auto& family = registry.counter("n_total", "n", {"t"});
  auto& histogram = registry.histogram("d", "d", {1}).get();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10000; ++i) {
        family.labels({std::to_string(t % 2)}).inc();
        histogram.observe(0.5);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_DOUBLE_EQ(family.labels({"0"}).value() + family.labels({"1"}).value(), 40000);
  EXPECT_EQ(histogram.snapshot().count, 40000u);
}

TEST(DaemonMetrics, EveryFamilyOfBothRolesRegistersAndHookLabelsAreShort) {
  MetricsRegistry head;
  ops::HeadMetrics head_metrics(head);
  ops::register_head_gauges(
      head, [] { return 0.0; }, [] { return 0.0; }, [] { return 0.0; });
  ops::register_info(head, "head", "1", "sha256:x");
  MetricsRegistry node;
  ops::NodeMetrics node_metrics(node);
  EXPECT_EQ(ops::hook_label(1), "epilog_slurmctld");
  EXPECT_EQ(ops::hook_label(0), "unspecified");
  Verdict verdict;
  verdict.domain = "GPU_HARDWARE";
  verdict.root_cause = RootCause{"nvidia.xid_79", "", {}};
  verdict.coverage.push_back({"n1", "journald", CoverageStatus::Ok, 1, 1, {}, {}, ""});
  head_metrics.record_verdict(verdict, 1'000'000, 4'000'000);
  std::string text = head.render();
  EXPECT_NE(text.find("attrib_verdicts_total{domain=\"GPU_HARDWARE\",rule=\"nvidia.xid_79\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("attrib_collector_coverage_total{source=\"journald\",status=\"ok\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("attrib_attribution_latency_seconds_bucket{le=\"5\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("attrib_attribution_latency_seconds_bucket{le=\"2\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("attrib_jobs_attributed_total 1\n"), std::string::npos);
}
