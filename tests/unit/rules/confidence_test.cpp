// Verdict confidence (docs/rules.md "Confidence"): high for a trusted report of the cause
// with every deciding source read, medium when a deciding source is missing, low when only
// untrusted evidence points at the domain; a low verdict names what would confirm it and
// never recommends a drain. A small pack of its own keeps the rules under test in view.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/comment.h"
#include "tests/support/rule_test_support.h"

namespace attrib {
namespace {

namespace fs = std::filesystem;
using test::app_line;
using test::at;
using test::job;
using test::kernel_line;

constexpr const char* kRules = R"(extract:
  - id: test.xid
    kind: gpu.xid
    sources: [kernel, app]
    prefilter: "NVRM: Xid"
    regex: 'NVRM: Xid \(PCI:(?P<pci>[0-9a-f:]+)\): (?P<xid>\d+)'
    fields: {pci: string, xid: int}
    examples:
      match:
        - line: "NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus."
          fields: {xid: 79}
  - id: test.ecc_in_output
    kind: cuda.ecc_uncorrectable
    sources: [app]
    prefilter: "uncorrectable ECC error encountered"
    regex: 'uncorrectable ECC error encountered'
    examples:
      match:
        - line: "RuntimeError: CUDA error: uncorrectable ECC error encountered"
  - id: test.panic
    kind: host.panic
    sources: [kernel]
    prefilter: "Kernel panic"
    regex: '^Kernel panic - not syncing: (?P<reason>.*)'
    fields: {reason: string}
    examples:
      match:
        - line: "Kernel panic - not syncing: Fatal machine check"
correlate:
  - id: test.panic
    precedence: 110
    domain: HOST_OS
    action: REBOOT_NODE
    root: {kind: host.panic}
    explains: [gpu.xid]
    summary: "{node} panicked"
  - id: test.fallen_off_bus
    precedence: 100
    domain: GPU_HARDWARE
    action: DRAIN_NODE
    root: {kind: gpu.xid, where: {xid: 79}}
    explains: [cuda.ecc_uncorrectable]
    summary: "GPU {pci} on {node}"
  - id: test.ecc_reported_by_cuda
    precedence: 25
    domain: GPU_HARDWARE
    action: NONE
    confidence: low
    root: {kind: cuda.ecc_uncorrectable, trusted: false}
    summary: "CUDA reported an uncorrectable ECC error on {node}"
)";

const char* kXid79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
const char* kEcc = "RuntimeError: CUDA error: uncorrectable ECC error encountered";

class Confidence : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attrib-confidence-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "pack.yaml") << "name: test\nversion: 0.0.1\nrule_files: [rules.yaml]\n";
    std::ofstream(dir_ / "rules.yaml") << kRules;
    rules::LoadOptions options;
    options.pack_dir = dir_;
    auto loaded = rules::load_rule_pack(options);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    pack_ = *loaded;
  }
  void TearDown() override { fs::remove_all(dir_); }

  Verdict attribute(const JobFacts& facts, const std::vector<LogLine>& lines, std::vector<Coverage> coverage) {
    rules::Extractor extractor(pack_);
    for (const auto& line : lines) extractor.feed(line);
    return rules::correlate(*pack_, facts, extractor.finish(), std::move(coverage));
  }

  static Coverage row(const std::string& node, const std::string& source, CoverageStatus status) {
    Coverage c;
    c.node = node;
    c.source = source;
    c.status = status;
    return c;
  }

  fs::path dir_;
  std::shared_ptr<const rules::RulePack> pack_;
};

TEST_F(Confidence, TrustedRootWithEverySourceReadIsHigh) {
  const Verdict v = attribute(job("FAILED", 1, {"n1", "n2"}), {kernel_line("n1", kXid79, at("2026-11-30T10:03:12Z"), 1)},
                              test::full_coverage({"n1", "n2"}));
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
  EXPECT_EQ(v.confidence, "high");
  EXPECT_EQ(v.recommended_action, "DRAIN_NODE");
  EXPECT_EQ(v.comment.find("conf="), std::string::npos) << v.comment;
}

TEST_F(Confidence, AMissingSourceThatCouldChangeTheVerdictMakesItMedium) {
  // n2's kernel log is missing. It could hold a panic, which would outrank the Xid: medium.
  auto coverage = test::full_coverage({"n1"});
  coverage.push_back(row("n2", "kernel", CoverageStatus::Unavailable));
  const Verdict v = attribute(job("FAILED", 1, {"n1", "n2"}), {kernel_line("n1", kXid79, at("2026-11-30T10:03:12Z"), 1)},
                              coverage);
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
  EXPECT_EQ(v.confidence, "medium");
  EXPECT_EQ(v.recommended_action, "DRAIN_NODE");
  EXPECT_NE(v.comment.find(" conf=medium missing=n2:kernel"), std::string::npos) << v.comment;
}

TEST_F(Confidence, ARootReadFromAPartialLogIsMedium) {
  auto coverage = test::full_coverage({"n1"});
  for (auto& c : coverage)
    if (c.source == "kernel") c.status = CoverageStatus::Partial;
  const Verdict v = attribute(job("FAILED", 1, {"n1"}), {kernel_line("n1", kXid79, at("2026-11-30T10:03:12Z"), 1)},
                              coverage);
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
  EXPECT_EQ(v.confidence, "medium");
}

TEST_F(Confidence, OnlyTheJobsOwnOutputPointingAtTheGpuIsLowNamesTheKernelLogAndNeverDrains) {
  const Verdict v = attribute(job("FAILED", 1, {"n1"}), {app_line("n1", "app", kEcc, at("2026-11-30T10:03:12Z"), 1)},
                              {row("n1", "app", CoverageStatus::Ok)});
  EXPECT_EQ(v.domain, "GPU_HARDWARE");
  EXPECT_EQ(v.confidence, "low");
  EXPECT_EQ(v.recommended_action, "NONE");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "test.ecc_reported_by_cuda");
  ASSERT_EQ(v.missing_sources.size(), 1u);
  EXPECT_EQ(v.missing_sources[0].node, "n1");
  EXPECT_EQ(v.missing_sources[0].source, "kernel");
  EXPECT_EQ(v.missing_sources[0].status, CoverageStatus::NotConfigured);
  EXPECT_NE(v.missing_sources[0].note.find("could confirm GPU_HARDWARE"), std::string::npos) << v.missing_sources[0].note;
  EXPECT_NE(v.comment.find("action=NONE"), std::string::npos) << v.comment;
  EXPECT_NE(v.comment.find(" conf=low missing=n1:kernel"), std::string::npos) << v.comment;
}

TEST_F(Confidence, TheKernelsOwnReportWinsAndTheCudaErrorIsItsSymptom) {
  const Verdict v = attribute(job("FAILED", 1, {"n1"}),
                              {kernel_line("n1", kXid79, at("2026-11-30T10:03:12Z"), 1),
                               app_line("n1", "app", kEcc, at("2026-11-30T10:03:13Z"), 1)},
                              test::full_coverage({"n1"}));
  EXPECT_EQ(v.confidence, "high");
  ASSERT_TRUE(v.root_cause.has_value());
  EXPECT_EQ(v.root_cause->rule, "test.fallen_off_bus");
  ASSERT_EQ(v.symptoms.size(), 1u);
  EXPECT_EQ(v.symptoms[0].event.kind, "cuda.ecc_uncorrectable");
}

TEST_F(Confidence, APrintedXidIsNoCauseAndNothingElsePointsAnywhere) {
  const Verdict v = attribute(job("FAILED", 1, {"n1"}), {app_line("n1", "app", kXid79, at("2026-11-30T10:03:12Z"), 1)},
                              test::full_coverage({"n1"}));
  EXPECT_EQ(v.domain, "UNATTRIBUTED");
  EXPECT_EQ(v.confidence, "low");
}

TEST_F(Confidence, ASuccessfulJobIsHigh) {
  const Verdict v = attribute(job("COMPLETED", 0, {"n1"}), {}, test::full_coverage({"n1"}));
  EXPECT_EQ(v.domain, "NONE");
  EXPECT_EQ(v.confidence, "high");
}

}  // namespace
}  // namespace attrib
