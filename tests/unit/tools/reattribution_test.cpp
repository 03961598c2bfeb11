// Re-attribution over a real SQLite archive: runs archived with their raw evidence (packed
// as the daemon packs it) under the shipped pack, judged again under the shipped pack plus
// a site rule that knows their unknown line. The site rule and its line are a test fixture
// made up here, not a field message.
#include "tools/attrib-reattribute/reattribution.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "attributiond/store/retention.h"
#include "common/evidence_archive.h"
#include "core/json_text.h"
#include "rules/evidence/bundle.h"
#include "rules/evidence/bundle_export.h"
#include "rules/engine.h"
#include "tests/support/rule_test_support.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using namespace attrib;

namespace {

constexpr TimeUs kStart = 1796083200000000;  // 2026-12-01T00:00:00Z
constexpr TimeUs kSecond = 1000000;

const char* kSiteRule = R"(extract:
  - id: site.widget_stall
    kind: site.widget_stall
    description: a test fixture's widget controller stopped responding
    sources: [kernel]
    prefilter: ["widget controller"]
    regex: 'widget controller (?P<unit>\d+) stopped responding'
    fields: {unit: string}
    examples:
      match:
        - line: "widget controller 3 stopped responding"
          fields: {unit: "3"}
      no_match:
        - "widget controller 3 is fine"
correlate:
  - id: site.widget_stall
    description: the widget controller stopped responding
    precedence: 60
    confidence: medium
    domain: HOST_OS
    action: FIX_CONFIGURATION
    root:
      kind: site.widget_stall
    summary: "Widget controller {unit} on {node} stopped responding"
)";

class ReattributionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attrib-reattribute-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "site");
    std::ofstream(dir_ / "site" / "widget.yaml") << kSiteRule;
    auto store = store::JobStore::open((dir_ / "attrib.db").string());
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    rules::LoadOptions load;
    load.pack_dir = attrib::test::rules_pack_dir();
    load.site_dirs = {dir_ / "site"};
    auto candidate = rules::load_rule_pack(load);
    ASSERT_TRUE(candidate) << candidate.error().message;
    candidate_ = *candidate;
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  // A failed 1-node job whose kernel log holds `line`, judged and archived as the daemon
  // does: the raw evidence packed, the verdict the shipped pack's replay of it.
  void Archive(const std::string& id, const std::string& line, bool done = true) {
    JobFacts facts;
    facts.job_id = id;
    facts.cluster = "lab";
    facts.state = "FAILED";
    facts.exit_code = 1;
    facts.start = kStart;
    facts.end = kStart + 600 * kSecond;
    facts.nodes = {"n1"};
    rules::RawEvidence raw;
    raw.lines.add(LogLine{"n1", "kernel", kStart + 300 * kSecond, 0, true, line});
    Coverage kernel;
    kernel.node = "n1";
    kernel.source = "kernel";
    kernel.status = CoverageStatus::Ok;
    kernel.lines = 1;
    raw.coverage.push_back(kernel);
    raw.window_start = kStart;
    raw.window_end = *facts.end;
    auto files = rules::raw_bundle_files(facts, raw);
    ASSERT_TRUE(files) << files.error().message;
    store::ArchivedEvidence evidence;
    evidence.blob = common::pack_evidence(*files);
    evidence.lines = 1;
    evidence.complete = true;
    ASSERT_TRUE(rules::write_bundle_files(dir_ / ("b" + id), *files));
    auto verdict = rules::replay_bundle(dir_ / ("b" + id), test::shipped_pack());
    ASSERT_TRUE(verdict) << verdict.error().message;
    v1::JobEnded request;
    request.set_job_id(id);
    request.set_node_list("n1");
    ASSERT_TRUE(store_->enqueue(request, "lab", kStart));
    ASSERT_TRUE(store_->archive({"lab", id}, *verdict, rules::events_of_verdict(*verdict), kStart + 700 * kSecond,
                                std::nullopt, &evidence));
    if (done) {
      ASSERT_TRUE(store_->mark_done({"lab", id}, kStart + 701 * kSecond));
    }
  }

  reattribute::Report Rejudge(const reattribute::Selection& selection = {}) {
    auto report = reattribute::rejudge(*store_, selection, candidate_);
    EXPECT_TRUE(report) << report.error().message;
    return report ? *report : reattribute::Report{};
  }

  const reattribute::Rejudged* Find(const reattribute::Report& report, const std::string& id) {
    for (const auto& r : report.runs)
      if (r.key.job_id == id) return &r;
    return nullptr;
  }

  fs::path dir_;
  std::unique_ptr<store::JobStore> store_;
  std::shared_ptr<const rules::RulePack> candidate_;
};

TEST_F(ReattributionTest, OnlyTheJobsTheNewRuleExplainsChange) {
  Archive("1", "widget controller 7 stopped responding");
  Archive("2", "widget controller 9 stopped responding");
  Archive("3", "a line nobody knows");
  const auto report = Rejudge();
  ASSERT_EQ(report.runs.size(), 3u);
  EXPECT_EQ(Find(report, "1")->outcome, reattribute::Outcome::Changed);
  EXPECT_EQ(Find(report, "1")->old_domain, "UNATTRIBUTED");
  EXPECT_EQ(Find(report, "1")->new_domain, "HOST_OS");
  EXPECT_EQ(Find(report, "1")->new_rule, "site.widget_stall");
  EXPECT_EQ(Find(report, "3")->outcome, reattribute::Outcome::Unchanged);
  EXPECT_EQ(report.transitions.at("UNATTRIBUTED -> HOST_OS"), 2);
  EXPECT_EQ(report.transitions.size(), 1u);
  const std::string text = reattribute::report_text(report);
  EXPECT_NE(text.find("UNATTRIBUTED -> HOST_OS: 2"), std::string::npos) << text;
  const auto json = reattribute::report_json(report);
  EXPECT_EQ(json["counts"]["changed"], 2);
  EXPECT_EQ(json["counts"]["unchanged"], 1);
  // Without --apply nothing is stored.
  auto versions = store_->versions({"lab", "1"});
  ASSERT_TRUE(versions);
  EXPECT_TRUE(versions->empty());
}

TEST_F(ReattributionTest, ApplyKeepsEveryVersionAndQueuesTheCommentWithoutActing) {
  Archive("1", "widget controller 7 stopped responding");
  Archive("3", "a line nobody knows");
  auto report = Rejudge();
  auto applied = reattribute::apply(*store_, report, kStart + 900 * kSecond);
  ASSERT_TRUE(applied) << applied.error().message;
  EXPECT_EQ(*applied, 1);

  auto versions = store_->versions({"lab", "1"});
  ASSERT_TRUE(versions);
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].domain, "UNATTRIBUTED");
  EXPECT_EQ((*versions)[0].why, "attributed");
  EXPECT_EQ((*versions)[0].ruleset_hash, rules::pack_hash(*test::shipped_pack()));
  EXPECT_EQ((*versions)[1].domain, "HOST_OS");
  EXPECT_EQ((*versions)[1].rule, "site.widget_stall");
  EXPECT_EQ((*versions)[1].ruleset_hash, rules::pack_hash(*candidate_));
  EXPECT_NE((*versions)[1].why.find(rules::pack_hash(*candidate_)), std::string::npos);

  // The run's current verdict is the new one, its comment to be rewritten by a worker,
  // which knows it is a revision (no remediation).
  auto record = store_->lookup("lab", "1");
  ASSERT_TRUE(record && record->has_value());
  EXPECT_EQ((*record)->status, "archived");
  EXPECT_EQ(nlohmann::json::parse(*(*record)->verdict_json)["domain"], "HOST_OS");
  auto due = store_->next_due(kStart + 901 * kSecond, {});
  ASSERT_TRUE(due && due->has_value());
  EXPECT_EQ((*due)->key.job_id, "1");
  EXPECT_TRUE((*due)->revised);
  const int64_t history = store_->with_read_db([](store::Database& db) {
    auto stmt = db.prepare("SELECT count(*) FROM history WHERE job_id = '1' AND domain = 'HOST_OS'");
    stmt.step();
    return stmt.int_at(0);
  });
  EXPECT_EQ(history, 1);
  // The untouched run has no versions.
  EXPECT_TRUE(store_->versions({"lab", "3"})->empty());

  // Judged again under the same candidate pack, nothing changes any more.
  ASSERT_TRUE(store_->mark_done({"lab", "1"}, kStart + 902 * kSecond));
  const auto again = Rejudge();
  EXPECT_EQ(Find(again, "1")->outcome, reattribute::Outcome::Unchanged);
}

TEST_F(ReattributionTest, PrunedUnfinishedAndEvidenceLessRunsAreReportedNeverTouched) {
  Archive("1", "widget controller 7 stopped responding");
  Archive("2", "widget controller 8 stopped responding", /*done=*/false);
  Archive("4", "widget controller 9 stopped responding");
  store::RetentionPolicy policy;
  policy.evidence_before = kStart + 702 * kSecond;  // run 1's and 4's raw evidence goes
  policy.keep_runs_after = kStart;
  ASSERT_TRUE(store::prune_archive(*store_, policy, kStart + 800 * kSecond));
  // Run 4 lost its evidence some other way: archived before evidence was kept.
  ASSERT_TRUE(store_->with_db(
      [](store::Database& db) { return db.exec("UPDATE jobs SET evidence_pruned_us = NULL WHERE job_id = '4'"); }));
  auto report = Rejudge();
  EXPECT_EQ(Find(report, "1")->outcome, reattribute::Outcome::Pruned);
  EXPECT_EQ(Find(report, "2")->outcome, reattribute::Outcome::NotFinished);
  EXPECT_EQ(Find(report, "4")->outcome, reattribute::Outcome::NoEvidence);
  auto applied = reattribute::apply(*store_, report, kStart + 900 * kSecond);
  ASSERT_TRUE(applied);
  EXPECT_EQ(*applied, 0);
  for (const char* id : {"1", "2", "4"}) EXPECT_TRUE(store_->versions({"lab", id})->empty()) << id;
  const std::string text = reattribute::report_text(report);
  EXPECT_NE(text.find("Not re-judged, pruned: 1 runs"), std::string::npos) << text;
}

TEST_F(ReattributionTest, TheSelectionNarrowsByDomainJobAndTime) {
  Archive("1", "widget controller 7 stopped responding");
  Archive("5", "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  reattribute::Selection by_domain;
  by_domain.domain = "GPU_HARDWARE";
  auto report = Rejudge(by_domain);
  ASSERT_EQ(report.runs.size(), 1u);
  EXPECT_EQ(report.runs[0].key.job_id, "5");
  reattribute::Selection by_job;
  by_job.jobs = {"1"};
  EXPECT_EQ(Rejudge(by_job).runs.size(), 1u);
  reattribute::Selection later;
  later.since = kStart + 3600 * kSecond;
  EXPECT_TRUE(Rejudge(later).runs.empty());
}

}  // namespace
