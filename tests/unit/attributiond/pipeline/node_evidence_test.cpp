// One coverage row per (node, source), whichever collectors read that source.
#include "attributiond/pipeline/node_evidence.h"
#include "tests/support/test_paths.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace attrib::head {
namespace {

Coverage row(const std::string& source, CoverageStatus status, uint64_t lines, const std::string& detail = "") {
  Coverage c;
  c.node = "n1";
  c.source = source;
  c.status = status;
  c.lines = lines;
  c.detail = detail;
  return c;
}

CoverageStatus merged_status(CoverageStatus a, CoverageStatus b) {
  auto merged = pipeline::merge_coverage_rows({row("app", a, 0), row("app", b, 0)});
  EXPECT_EQ(merged.size(), 1u);
  return merged.empty() ? CoverageStatus::NotConfigured : merged[0].status;
}

TEST(MergeCoverageRows, OneRowPerNodeAndSource) {
  auto a = row("app", CoverageStatus::Ok, 10, "journal");
  a.window_start = 100;
  a.window_end = 200;
  auto b = row("app", CoverageStatus::Ok, 5, "output file");
  b.window_start = 50;
  b.window_end = 150;
  auto merged = pipeline::merge_coverage_rows({a, row("kernel", CoverageStatus::Empty, 0), b});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].source, "app");
  EXPECT_EQ(merged[0].lines, 15u);
  EXPECT_EQ(merged[0].window_start, 50);
  EXPECT_EQ(merged[0].window_end, 200);
  EXPECT_EQ(merged[0].detail, "journal; output file");
  EXPECT_EQ(merged[1].source, "kernel");
}

TEST(MergeCoverageRows, EventsAreSummedAndManyStreamsKeepTheirOrder) {
  std::vector<Coverage> rows;
  for (int round = 0; round < 2; ++round)
    for (int rank = 0; rank < 5000; ++rank) {
      Coverage c = row("app.rank" + std::to_string(rank), CoverageStatus::Ok, 1);
      c.events = 2;
      rows.push_back(c);
    }
  auto merged = pipeline::merge_coverage_rows(rows);
  ASSERT_EQ(merged.size(), 5000u);
  EXPECT_EQ(merged[4999].source, "app.rank4999");
  EXPECT_EQ(merged[4999].lines, 2u);
  EXPECT_EQ(merged[4999].events, 4u);
}

TEST(MergeCoverageRows, ReadWinsAndLossesMakeItPartial) {
  using S = CoverageStatus;
  EXPECT_EQ(merged_status(S::Ok, S::Empty), S::Ok);
  EXPECT_EQ(merged_status(S::Empty, S::Empty), S::Empty);
  EXPECT_EQ(merged_status(S::Ok, S::Partial), S::Partial);
  // A second collector with nothing to read (no output file) takes nothing away ...
  EXPECT_EQ(merged_status(S::Ok, S::Unavailable), S::Ok);
  EXPECT_EQ(merged_status(S::NotConfigured, S::Empty), S::Empty);
  // ... one that failed means part of the source is missing.
  EXPECT_EQ(merged_status(S::Failed, S::Ok), S::Partial);
  EXPECT_EQ(merged_status(S::Ok, S::Timeout), S::Partial);
  // Nothing read: the most telling failure.
  EXPECT_EQ(merged_status(S::Unavailable, S::Failed), S::Failed);
  EXPECT_EQ(merged_status(S::NotConfigured, S::Timeout), S::Timeout);
  EXPECT_EQ(merged_status(S::NotConfigured, S::Unavailable), S::Unavailable);
}

// Two collectors both reading `app` on one node: one row, and its event count is the
// node's app events once, not once per row.
class TwoAppCollector : public collectors::Collector {
 public:
  explicit TwoAppCollector(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::vector<Coverage> collect(const collectors::CollectRequest& request, const collectors::LineSink& sink) override {
    LogLine line;
    line.node = request.node;
    line.source = "app";
    line.text =
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.15 GiB of which 1.06 GiB is free. (" +
        name_ + ")";
    line.seq = 1;
    sink(line);
    Coverage c = row("app", CoverageStatus::Ok, 1, name_);
    c.node = request.node;
    return {c};
  }

 private:
  std::string name_;
};

TEST(CollectNode, SharedSourceGivesOneRowWithItsEvents) {
  rules::LoadOptions options;
  options.pack_dir = attrib::test::rules_pack_dir();
  auto pack = rules::load_rule_pack(options);
  ASSERT_TRUE(pack.ok()) << pack.error().message;
  std::vector<std::unique_ptr<collectors::Collector>> collectors;
  collectors.push_back(std::make_unique<TwoAppCollector>("journald"));
  collectors.push_back(std::make_unique<TwoAppCollector>("app_output"));
  pipeline::NodeEvidence evidence = pipeline::collect_node(*pack, collectors, {.job_id = "7", .node = "n1"});
  ASSERT_EQ(evidence.events.size(), 2u);
  ASSERT_EQ(evidence.coverage.size(), 1u);
  EXPECT_EQ(evidence.coverage[0].events, 2u);
  EXPECT_EQ(evidence.coverage[0].lines, 2u);
  EXPECT_EQ(evidence.coverage[0].detail, "journald; app_output");
}


// A job's output floods one source with distinct lines: that source stops at its cap and
// says so (partial, with the count), while the kernel's Xid, read by the same collector
// after the flood, is still there and its row stays ok.
class FloodThenXidCollector : public collectors::Collector {
 public:
  std::string name() const override { return "journald"; }
  std::vector<Coverage> collect(const collectors::CollectRequest& request, const collectors::LineSink& sink) override {
    uint64_t seq = 0;
    for (size_t i = 0; i < kFloodLines; ++i) {
      LogLine line;
      line.node = request.node;
      line.source = "app";
      line.seq = ++seq;
      line.text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " + std::to_string(i) + ".00 MiB.";
      sink(line);
    }
    LogLine xid;
    xid.node = request.node;
    xid.source = "kernel";
    xid.trusted = true;
    xid.seq = 1;
    xid.text = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.";
    sink(xid);
    Coverage app = row("app", CoverageStatus::Ok, kFloodLines, "journald");
    Coverage kernel = row("kernel", CoverageStatus::Ok, 1, "journald");
    app.node = kernel.node = request.node;
    return {app, kernel};
  }
  static constexpr size_t kFloodLines = rules::Extractor::kDefaultMaxDistinctEventsPerStream + 500;
};

TEST(CollectNode, ASourceOverItsEventCapIsPartialAndTheOtherSourcesKeepTheirEvents) {
  rules::LoadOptions options;
  options.pack_dir = attrib::test::rules_pack_dir();
  auto pack = rules::load_rule_pack(options);
  ASSERT_TRUE(pack.ok()) << pack.error().message;
  std::vector<std::unique_ptr<collectors::Collector>> collectors;
  collectors.push_back(std::make_unique<FloodThenXidCollector>());
  pipeline::NodeEvidence evidence = pipeline::collect_node(*pack, collectors, {.job_id = "7", .node = "n1"});
  ASSERT_EQ(evidence.coverage.size(), 2u);
  const Coverage& app = evidence.coverage[0];
  const Coverage& kernel = evidence.coverage[1];
  ASSERT_EQ(app.source, "app");
  EXPECT_EQ(app.status, CoverageStatus::Partial);
  EXPECT_EQ(app.events, rules::Extractor::kDefaultMaxDistinctEventsPerStream);
  EXPECT_NE(app.detail.find("500 distinct events dropped: over the cap of 20000 per source"), std::string::npos)
      << app.detail;
  ASSERT_EQ(kernel.source, "kernel");
  EXPECT_EQ(kernel.status, CoverageStatus::Ok);
  EXPECT_EQ(kernel.events, 1u);
  auto xid = std::find_if(evidence.events.begin(), evidence.events.end(),
                          [](const Event& e) { return e.source == "kernel"; });
  ASSERT_NE(xid, evidence.events.end());
  EXPECT_EQ(xid->fields.value("xid", 0), 79);
}

}  // namespace
}  // namespace attrib::head
