#include <gtest/gtest.h>

#include "core/comment.h"
#include "core/verdict.h"
#include "tests/support/rule_test_support.h"

namespace attrib {
namespace {

using nlohmann::json;

Event sample_event(const std::string& id, std::optional<TimeUs> time) {
  Event e;
  e.id = id;
  e.kind = "gpu.xid";
  e.rule = "nvidia.xid";
  e.node = "gpu017";
  e.source = "kernel";
  e.time = time;
  e.seq = 118;
  e.trusted = true;
  e.line = "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";
  e.fields = {{"xid", 79}, {"pci", "0000:3b:00"}};
  e.count = 3;
  return e;
}

Verdict sample_verdict() {
  Verdict v;
  v.job_id = "4242_7";
  v.cluster = "lab";
  v.attempt = 1;
  v.terminal_state = "FAILED";
  v.exit_code = 1;
  v.domain = "GPU_HARDWARE";
  v.root_cause = RootCause{"gpu.fallen_off_bus", "GPU 0000:3b:00 on gpu017 fell off the bus (Xid 79)",
                           sample_event("e1", 1796032992123456LL)};
  Event timeout = sample_event("e2", std::nullopt);
  timeout.kind = "nccl.watchdog_timeout";
  timeout.trusted = false;
  timeout.source = "app.rank3";
  v.symptoms.push_back({timeout, "gpu.fallen_off_bus", 3});
  v.unexplained.push_back(sample_event("e3", 1796032993000000LL));
  v.nodes = {"gpu001", "gpu017"};
  v.affected_nodes = {"gpu017"};
  v.affected_gpus = {{"gpu017", "0000:3b:00.0"}};
  v.recommended_action = "DRAIN_NODE";
  Coverage c;
  c.node = "gpu017";
  c.source = "kernel";
  c.status = CoverageStatus::Ok;
  c.lines = 1832;
  c.events = 4;
  c.window_start = 1796032800000000LL;
  c.window_end = 1796034000000000LL;
  v.coverage.push_back(c);
  Coverage missing;
  missing.node = "gpu001";
  missing.source = "kernel";
  missing.status = CoverageStatus::Unavailable;
  missing.detail = "node agent unreachable";
  v.coverage.push_back(missing);
  v.missing_sources.push_back(
      {"gpu001", "kernel", CoverageStatus::Unavailable, "no kernel log from gpu001 (unavailable)", {"e2"}});
  v.ruleset_version = "1.0.0";
  v.ruleset_hash = "sha256:00";
  v.comment = "attrib: GPU_HARDWARE node=gpu017";
  return v;
}

TEST(VerdictJson, HasTheV1Shape) {
  const json j = to_json(sample_verdict());
  EXPECT_EQ(j["schema"], "attrib.verdict.v1");
  EXPECT_EQ(j["job_id"], "4242_7");
  EXPECT_EQ(j["root_cause"]["rule"], "gpu.fallen_off_bus");
  const json& event = j["root_cause"]["event"];
  for (const char* key :
       {"id", "kind", "rule", "node", "source", "time", "seq", "trusted", "line", "fields", "count"}) {
    EXPECT_TRUE(event.contains(key)) << key;
  }
  EXPECT_EQ(event["time"], "2026-11-30T10:03:12.123456Z");
  EXPECT_EQ(event["fields"]["xid"], 79);
  EXPECT_TRUE(j["symptoms"][0]["event"]["time"].is_null());
  EXPECT_EQ(j["symptoms"][0]["explained_by"], "gpu.fallen_off_bus");
  EXPECT_EQ(j["candidates"], json::array());
  // coverage sorted by (node, source); a missing window is null
  EXPECT_EQ(j["coverage"][0]["node"], "gpu001");
  EXPECT_TRUE(j["coverage"][0]["window"].is_null());
  EXPECT_EQ(j["coverage"][1]["window"], json::array({"2026-11-30T10:00:00.000000Z", "2026-11-30T10:20:00.000000Z"}));
  EXPECT_EQ(j["coverage"][1]["status"], "ok");
  EXPECT_EQ(j["ruleset"]["version"], "1.0.0");
  EXPECT_EQ(j["affected_gpus"][0]["pci"], "0000:3b:00.0");
  EXPECT_EQ(j["missing_sources"][0], json({{"node", "gpu001"},
                                           {"source", "kernel"},
                                           {"status", "unavailable"},
                                           {"note", "no kernel log from gpu001 (unavailable)"},
                                           {"named_by", {"e2"}}}));
}

TEST(VerdictJson, NullRootCauseForUnattributed) {
  Verdict v;
  v.job_id = "1";
  const json j = to_json(v);
  EXPECT_TRUE(j["root_cause"].is_null());
  EXPECT_EQ(j["domain"], "UNATTRIBUTED");
}

TEST(VerdictJson, RoundTrips) {
  const json j = to_json(sample_verdict());
  auto parsed = verdict_from_json(j);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(to_json(*parsed), j);
  // through text, too (the archive stores text)
  auto reparsed = verdict_from_json(json::parse(j.dump()));
  ASSERT_TRUE(reparsed.ok());
  EXPECT_EQ(to_json(*reparsed).dump(), j.dump());
}

TEST(VerdictJson, RoundTripsEngineVerdicts) {
  const auto facts = test::job("FAILED", 1, {"n1", "n2", "n3"});
  const Verdict v = test::attribute(
      facts, {test::kernel_line("n2", "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
                                test::at("2026-11-30T10:03:12Z"), 1),
              test::app_line("n1", "app.rank0",
                             "[rank0]:[E1130 10:13:12.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
                             "collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=4, "
                             "NumelOut=4, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
                             std::nullopt, 7)});
  const json j = to_json(v);
  auto parsed = verdict_from_json(j);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(to_json(*parsed), j);
}

TEST(VerdictJson, AHetJobsComponentsRoundTripAndOtherJobsHaveNone) {
  EXPECT_FALSE(to_json(sample_verdict()).contains("components")) << "every other verdict keeps its bytes";
  Verdict v = sample_verdict();
  v.components = {{"4242+0", "COMPLETED", 0, 0, {"n1"}}, {"4242+1", "FAILED", 5, 0, {"n2", "n3"}}};
  const json j = to_json(v);
  EXPECT_EQ(j["components"][1]["nodes"], (json{"n2", "n3"}));
  auto parsed = verdict_from_json(j);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->components, v.components);
  json bad = j;
  bad["components"][1]["state"] = 3;
  auto refused = verdict_from_json(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("verdict.components[1].state"), std::string::npos)
      << refused.error().message;
}

TEST(VerdictJson, RestartsInsideTheAllocationAreCountedInTheJsonAndTheComment) {
  EXPECT_FALSE(to_json(sample_verdict()).contains("restarts"));
  Verdict v = sample_verdict();
  v.restarts = 2;
  v.comment = render_comment(v);
  EXPECT_NE(v.comment.find(" restarts=2"), std::string::npos) << v.comment;
  const json j = to_json(v);
  EXPECT_EQ(j["restarts"], 2);
  auto parsed = verdict_from_json(j);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->restarts, 2);
}

TEST(VerdictJson, ConfidenceIsWrittenReadAndShownInTheCommentOnlyWhenNotHigh) {
  // A verdict archived before confidence existed has none, and stays without one.
  EXPECT_FALSE(to_json(sample_verdict()).contains("confidence"));
  auto old = verdict_from_json(to_json(sample_verdict()));
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->confidence, "");

  Verdict v = sample_verdict();
  v.confidence = "high";
  EXPECT_EQ(render_comment(v).find("conf="), std::string::npos) << render_comment(v);
  for (const char* level : {"medium", "low"}) {
    v.confidence = level;
    v.comment = render_comment(v);
    EXPECT_NE(v.comment.find(std::string(" conf=") + level + " missing="), std::string::npos) << v.comment;
    const json j = to_json(v);
    EXPECT_EQ(j["confidence"], level);
    auto parsed = verdict_from_json(j);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(parsed->confidence, level);
  }
  json bad = to_json(v);
  bad["confidence"] = "certain";
  auto refused = verdict_from_json(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("verdict.confidence"), std::string::npos) << refused.error().message;
}

TEST(VerdictJson, ErrorsNameTheField) {
  json j = to_json(sample_verdict());
  j["symptoms"][0]["event"]["time"] = "yesterday";
  auto parsed = verdict_from_json(j);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("verdict.symptoms[0].event.time"), std::string::npos) << parsed.error().message;

  json k = to_json(sample_verdict());
  k.erase("domain");
  auto missing = verdict_from_json(k);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("verdict.domain"), std::string::npos);

  json s = to_json(sample_verdict());
  s["schema"] = "attrib.verdict.v0";
  EXPECT_EQ(verdict_from_json(s).error().code, "VERDICT_E_SCHEMA");

  json c = to_json(sample_verdict());
  c["coverage"][0]["status"] = "fine";
  EXPECT_FALSE(verdict_from_json(c).ok());
}

TEST(VerdictJson, ArraysAreSortedWhateverTheInputOrder) {
  Verdict a = sample_verdict();
  Verdict b = sample_verdict();
  std::reverse(b.coverage.begin(), b.coverage.end());
  b.affected_nodes = {"gpu017"};
  Event e10 = sample_event("e10", std::nullopt);
  Event e9 = sample_event("e9", std::nullopt);
  a.unexplained = {e9, e10};
  b.unexplained = {e10, e9};
  EXPECT_EQ(to_json(a).dump(), to_json(b).dump());
  EXPECT_EQ(to_json(a)["unexplained"][0]["id"], "e9");  // numeric, not lexical, order
}

}  // namespace
}  // namespace attrib
