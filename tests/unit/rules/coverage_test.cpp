// Coverage lowers certainty (rules.md): a verdict names the missing (node, source) whose
// evidence would decide or change it, and does not claim what such a source could move.
// A pack of its own keeps these semantics independent of the shipped rules.
#include <algorithm>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "core/verdict.h"
#include "tests/support/rule_test_support.h"
#include "tests/support/temp_pack.h"

namespace attrib {
namespace {

constexpr const char* kRules = R"(extract:
  - id: t.gpu_fault
    kind: gpu.fault
    sources: [kernel, app]
    prefilter: "GPU_FAULT"
    regex: 'GPU_FAULT pci=(?P<pci>[0-9a-f:.]+)'
    fields: {pci: string}
    examples: {match: ["GPU_FAULT pci=0000:3b:00.0"]}
  - id: t.pcie_fatal
    kind: pcie.fatal
    sources: [kernel]
    prefilter: "PCIE_FATAL"
    regex: 'PCIE_FATAL (?P<bdf>\S+)'
    fields: {bdf: string}
    examples: {match: ["PCIE_FATAL 0000:3a:00.0"]}
  - id: t.power_fault
    kind: power.fault
    sources: [syslog]
    prefilter: "POWER_FAULT"
    regex: 'POWER_FAULT'
    examples: {match: ["POWER_FAULT"]}
  - id: t.link_down
    kind: link.down
    sources: [kernel]
    prefilter: "LINK_DOWN"
    regex: 'LINK_DOWN port=(?P<port>\d+)'
    fields: {port: int}
    examples: {match: ["LINK_DOWN port=1"]}
  - id: t.timeout
    kind: coll.timeout
    sources: [app]
    prefilter: "COLL_TIMEOUT"
    regex: 'COLL_TIMEOUT rank=(?P<rank>\d+)'
    fields: {rank: int}
    examples: {match: ["COLL_TIMEOUT rank=1"]}
  - id: t.oom
    kind: app.oom
    sources: [app]
    prefilter: "APP_OOM"
    regex: 'APP_OOM'
    examples: {match: ["APP_OOM"]}
  - id: t.task_exit
    kind: task.exit
    sources: [spank]
    prefilter: "TASK_EXIT"
    regex: 'TASK_EXIT host=(?P<host>\S+) code=(?P<code>\d+)'
    fields: {host: string, code: int}
    examples: {match: ["TASK_EXIT host=n1 code=1"]}
correlate:
  - id: gpu
    precedence: 100
    domain: GPU_HARDWARE
    action: DRAIN_NODE
    root: gpu.fault
    explains: [coll.timeout, task.exit]
    summary: "GPU {pci} on {node}"
  - id: pcie
    precedence: 100
    domain: HOST_HARDWARE
    action: DRAIN_NODE
    root: pcie.fatal
    explains: [coll.timeout, task.exit]
    summary: "PCIe {bdf} on {node}"
  - id: power
    precedence: 100
    domain: HOST_HARDWARE
    action: DRAIN_NODE
    root: power.fault
    explains: [{kind: gpu.fault, scope: same_node}, {kind: pcie.fatal, scope: same_node}]
    summary: "power fault on {node}"
  - id: link
    precedence: 80
    domain: NETWORK
    action: INSPECT_NETWORK
    root: link.down
    explains: [coll.timeout, task.exit]
    summary: "link down on {node}"
  - id: oom
    precedence: 50
    domain: APPLICATION
    action: FIX_APPLICATION
    root: app.oom
    explains: [coll.timeout]
    summary: "OOM on {node}"
  - id: first_task
    precedence: 10
    domain: UNATTRIBUTED
    action: NONE
    root: task.exit
    explains: [task.exit, coll.timeout]
    summary: "first task failure on {host}"
)";

const std::vector<std::string> kNodes = {"n1", "n2"};
const std::vector<std::string> kSources = {"app", "kernel", "spank", "syslog"};

class CoverageVerdicts : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<test::TempPackDir>("coverage");
    dir_->write_pack(kRules);
    pack_ = dir_->load();
    ASSERT_TRUE(pack_);
  }

  // Every (node, source) ok except those listed.
  static std::vector<Coverage> coverage(const std::map<std::pair<std::string, std::string>, CoverageStatus>& except) {
    std::vector<Coverage> out;
    for (const auto& node : kNodes) {
      for (const auto& source : kSources) {
        Coverage c;
        c.node = node;
        c.source = source;
        auto it = except.find({node, source});
        c.status = it == except.end() ? CoverageStatus::Ok : it->second;
        c.lines = c.status == CoverageStatus::Ok ? 10 : 0;
        out.push_back(c);
      }
    }
    return out;
  }

  std::vector<Event> extract(const std::vector<LogLine>& lines) const {
    rules::Extractor extractor(pack_);
    for (const auto& l : lines) extractor.feed(l);
    return extractor.finish();
  }

  Verdict attribute(const std::vector<LogLine>& lines, std::vector<Coverage> cov) const {
    return rules::correlate(*pack_, test::job("FAILED", 1, kNodes), extract(lines), std::move(cov));
  }

  static std::vector<std::string> missing(const Verdict& v) {
    std::vector<std::string> out;
    for (const auto& m : v.missing_sources) out.push_back(m.node + ":" + m.source);
    return out;
  }

  static LogLine line(const std::string& node, const std::string& source, const std::string& text, uint64_t seq,
                      int minute = 5) {
    const TimeUs t = test::at("2026-11-30T10:00:00Z") + static_cast<TimeUs>(minute) * 60'000'000;
    return LogLine{node, source, t, seq, source.rfind("app", 0) != 0, text};
  }

  std::unique_ptr<test::TempPackDir> dir_;
  std::shared_ptr<const rules::RulePack> pack_;
};

TEST_F(CoverageVerdicts, UnattributedNamesTheMissingSourcesThatCouldHoldARoot) {
  const Verdict v = attribute({line("n1", "app", "COLL_TIMEOUT rank=0", 1)},
                              coverage({{{"n2", "kernel"}, CoverageStatus::Unavailable},
                                        {{"n2", "app"}, CoverageStatus::Timeout},
                                        {{"n2", "syslog"}, CoverageStatus::Failed},
                                        {{"n2", "spank"}, CoverageStatus::Partial}}));
  EXPECT_EQ(v.domain, "UNATTRIBUTED");  // symptoms only: no cause is invented
  EXPECT_FALSE(v.root_cause);
  // spank can only hold a locator's root (never a cause): it decides nothing here.
  EXPECT_EQ(missing(v), (std::vector<std::string>{"n2:app", "n2:kernel", "n2:syslog"}));
  EXPECT_EQ(v.missing_sources[1].note, "no kernel log from n2 (unavailable)");
  EXPECT_EQ(v.missing_sources[1].status, CoverageStatus::Unavailable);
  EXPECT_EQ(
      v.comment,
      "attrib: UNATTRIBUTED action=NONE symptoms=0 unexplained=1 coverage=1/2 conf=low missing=n2:app,n2:kernel,n2:syslog");
}

TEST_F(CoverageVerdicts, FullCoverageNamesNothing) {
  const Verdict v = attribute({line("n1", "app", "COLL_TIMEOUT rank=0", 1)}, coverage({}));
  EXPECT_EQ(v.domain, "UNATTRIBUTED");
  EXPECT_TRUE(v.missing_sources.empty());
  EXPECT_EQ(v.comment, "attrib: UNATTRIBUTED action=NONE symptoms=0 unexplained=1 coverage=2/2 conf=low");
  EXPECT_NE(to_json(v).dump().find("\"missing_sources\":[]"), std::string::npos);
}

TEST_F(CoverageVerdicts, ADecidedVerdictSaysWhichMissingSourceCouldChangeIt) {
  const Verdict v =
      attribute({line("n1", "kernel", "LINK_DOWN port=1", 1, 4), line("n2", "app", "COLL_TIMEOUT rank=1", 1)},
                coverage({{{"n2", "kernel"}, CoverageStatus::Unavailable},
                          {{"n2", "app"}, CoverageStatus::Unavailable},
                          {{"n2", "syslog"}, CoverageStatus::Unavailable}}));
  EXPECT_EQ(v.domain, "NETWORK");  // made: the link is down whatever else may be missing
  ASSERT_TRUE(v.root_cause);
  // kernel and syslog could hold higher roots (GPU 100, power 100). The app output could
  // not: the GPU rule needs trusted evidence, and an OOM (50) would not outrank the link.
  EXPECT_EQ(missing(v), (std::vector<std::string>{"n2:kernel", "n2:syslog"}));
}

TEST_F(CoverageVerdicts, AmbiguousNamesTheSourceThatWouldOrderTheCandidates) {
  const Verdict v = attribute(
      {line("n1", "kernel", "GPU_FAULT pci=0000:3b:00.0", 1), line("n1", "kernel", "PCIE_FATAL 0000:3a:00.0", 2)},
      coverage({{{"n1", "syslog"}, CoverageStatus::Partial},
                {{"n2", "syslog"}, CoverageStatus::Unavailable},
                {{"n2", "kernel"}, CoverageStatus::Unavailable},
                {{"n2", "app"}, CoverageStatus::Unavailable}}));
  EXPECT_EQ(v.domain, "AMBIGUOUS");
  ASSERT_EQ(v.candidates.size(), 2u);
  // A power fault on n1 would explain both (same node); on n2 it would explain neither,
  // and n2's kernel could only add another equal candidate.
  EXPECT_EQ(missing(v), (std::vector<std::string>{"n1:syslog"}));
  EXPECT_EQ(v.missing_sources[0].note, "syslog log from n1 is partial");
  EXPECT_NE(v.comment.find(" missing=n1:syslog"), std::string::npos) << v.comment;
}

TEST_F(CoverageVerdicts, ALocatorDoesNotClaimTheFirstFailureWhenAnotherNodesRecordsAreMissing) {
  const std::vector<LogLine> lines = {line("n1", "spank", "TASK_EXIT host=n1 code=1", 1),
                                      line("n1", "app", "COLL_TIMEOUT rank=0", 2, 6)};
  const Verdict in_doubt = attribute(lines, coverage({{{"n2", "spank"}, CoverageStatus::Unavailable}}));
  EXPECT_EQ(in_doubt.domain, "UNATTRIBUTED");
  EXPECT_TRUE(in_doubt.affected_nodes.empty());  // n2 may have failed first
  EXPECT_EQ(missing(in_doubt), (std::vector<std::string>{"n2:spank"}));

  const Verdict located = attribute(lines, coverage({{{"n2", "kernel"}, CoverageStatus::Unavailable}}));
  EXPECT_EQ(located.affected_nodes, (std::vector<std::string>{"n1"}));
  EXPECT_EQ(missing(located), (std::vector<std::string>{"n2:kernel"}));
}

TEST_F(CoverageVerdicts, EventsPointingAtAPeerWithMissingEvidenceAreNamed) {
  const Verdict v =
      attribute({line("n1", "spank", "TASK_EXIT host=n2 code=9", 1), line("n1", "app", "COLL_TIMEOUT rank=0", 2)},
                coverage({{{"n2", "kernel"}, CoverageStatus::Unavailable}}));
  EXPECT_EQ(v.domain, "UNATTRIBUTED");
  ASSERT_EQ(v.missing_sources.size(), 1u);
  ASSERT_EQ(v.missing_sources[0].named_by.size(), 1u);
  const std::string id = v.missing_sources[0].named_by[0];
  const auto all = to_json(v).dump();
  EXPECT_NE(all.find("\"named_by\":[\"" + id + "\"]"), std::string::npos) << all;
}

TEST_F(CoverageVerdicts, MissingSourcesRoundTripAndStayDeterministic) {
  std::vector<LogLine> lines = {
      line("n1", "kernel", "GPU_FAULT pci=0000:3b:00.0", 1), line("n1", "kernel", "PCIE_FATAL 0000:3a:00.0", 2),
      line("n2", "spank", "TASK_EXIT host=n1 code=9", 1), line("n2", "app", "COLL_TIMEOUT rank=1", 1)};
  auto cov = coverage({{{"n1", "syslog"}, CoverageStatus::Partial}, {{"n2", "syslog"}, CoverageStatus::Partial}});
  const std::string expected = to_json(attribute(lines, cov)).dump();
  std::mt19937 rng(7);
  for (int i = 0; i < 20; ++i) {
    std::shuffle(lines.begin(), lines.end(), rng);
    std::shuffle(cov.begin(), cov.end(), rng);
    EXPECT_EQ(to_json(attribute(lines, cov)).dump(), expected);
  }
  auto parsed = verdict_from_json(nlohmann::json::parse(expected));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(to_json(*parsed).dump(), expected);
  // Writers from before the field: absent on input is no missing source.
  auto older = nlohmann::json::parse(expected);
  older.erase("missing_sources");
  auto parsed_older = verdict_from_json(older);
  ASSERT_TRUE(parsed_older.ok()) << parsed_older.error().message;
  EXPECT_TRUE(parsed_older->missing_sources.empty());
}

}  // namespace
}  // namespace attrib
