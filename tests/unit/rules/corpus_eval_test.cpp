// attrib-rules eval's scoring (rules/corpus_eval.h): right, confidently wrong, the grep
// baseline, the floor, and incident.json errors that name the field. The real corpus
// itself is scored by the ctest attrib_rules_corpus_floor.
#include "rules/corpus_eval.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "rules/grep_baseline.h"
#include "tests/support/rule_test_support.h"

namespace attrib {
namespace {

namespace fs = std::filesystem;

class Corpus : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("attrib-corpus-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  // One incident: a job on node1, one log file, and its truth.
  fs::path incident(const std::string& name, const std::string& source, const std::string& lines,
                    const std::string& truth, const std::string& acceptable = "[]") {
    const fs::path dir = root_ / name;
    write(dir / "job.json", R"({"job_id": "1", "state": "FAILED", "exit_code": 1, "nodes": ["node1"]})");
    write(dir / "node1" / (source + ".log"), lines);
    write(dir / "incident.json", R"({"source": "https://example.org/thread", "title": "t", "truth": {"domain": ")" +
                                     truth + R"(", "node": "node1", "confidence": "confirmed_fix"},
                                     "resolution": "r", "hard": "h", "acceptable": )" +
                                     acceptable + "}");
    return dir;
  }

  fs::path root_;
};

constexpr const char* kXid79 =
    "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n";
constexpr const char* kValueError =
    "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nValueError: bad shape\n";

TEST_F(Corpus, ScoresTheVerdictAndTheGrepBaselineOnTheSameLines) {
  incident("a-xid", "kernel", kXid79, "GPU_HARDWARE");
  incident("b-net", "app", kValueError, "NETWORK");
  incident("c-open", "app", "nothing to see\n", "UNATTRIBUTED", R"(["AMBIGUOUS"])");
  const auto dirs = rules::list_incidents(root_);
  ASSERT_EQ(dirs.size(), 3u);
  std::vector<rules::IncidentResult> results;
  for (const auto& dir : dirs) {
    auto r = rules::evaluate_incident(dir, test::shipped_pack());
    ASSERT_TRUE(r.ok()) << r.error().message;
    results.push_back(*r);
  }
  EXPECT_EQ(results[0].verdict.domain, "GPU_HARDWARE");
  EXPECT_TRUE(rules::verdict_correct(results[0]));
  EXPECT_EQ(results[0].baseline_domain, "GPU_HARDWARE");
  // A plain programming error read as the application's fault, against a network truth:
  // wrong, and not marked low, so confidently wrong. grep says APPLICATION too.
  EXPECT_EQ(results[1].verdict.domain, "APPLICATION");
  EXPECT_TRUE(rules::confidently_wrong(results[1]));
  EXPECT_EQ(results[1].baseline_domain, "APPLICATION");
  // Nothing points anywhere: UNATTRIBUTED is right for a cause never established.
  EXPECT_EQ(results[2].verdict.domain, "UNATTRIBUTED");
  EXPECT_TRUE(rules::verdict_correct(results[2]));
  EXPECT_FALSE(rules::confidently_wrong(results[2]));

  const auto s = rules::summarize(results);
  EXPECT_EQ(s.incidents, 3u);
  EXPECT_EQ(s.correct, 2u);
  EXPECT_EQ(s.confidently_wrong, 1u);
  EXPECT_EQ(s.unattributed, 1u);
  EXPECT_EQ(s.node_known, 1u);
  EXPECT_EQ(s.node_right, 1u);
  EXPECT_EQ(s.baseline_correct, 2u);  // the xid, and nothing matched for the open case
  EXPECT_EQ(s.baseline_wrong, 1u);
  EXPECT_EQ(s.confusion.at("NETWORK").at("APPLICATION"), 1u);

  EXPECT_TRUE(rules::check_eval_floor(s, {2, 1}).empty());
  const auto below = rules::check_eval_floor(s, {3, 0});
  ASSERT_EQ(below.size(), 2u);
  EXPECT_NE(below[0].find("correct 2 is below the floor of 3"), std::string::npos) << below[0];
  EXPECT_NE(below[1].find("confidently wrong 1 is above the ceiling of 0"), std::string::npos) << below[1];
}

TEST_F(Corpus, AnIncidentWithoutATruthDomainIsAnErrorNamingTheField) {
  const fs::path dir = incident("bad", "kernel", kXid79, "GPU_HARDWARE");
  write(dir / "incident.json", R"({"source": "https://example.org/x", "truth": {"node": null, "confidence": "confirmed_fix"},
                                   "resolution": "r", "hard": "h", "acceptable": []})");
  auto r = rules::evaluate_incident(dir, test::shipped_pack());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "CORPUS_E_INCIDENT");
  EXPECT_NE(r.error().message.find("incident.json: truth.domain"), std::string::npos) << r.error().message;

  write(dir / "incident.json", R"({"source": "https://example.org/x", "truth": {"domain": "GPU", "confidence": "confirmed_fix"},
                                   "resolution": "r", "hard": "h", "acceptable": []})");
  r = rules::evaluate_incident(dir, test::shipped_pack());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown domain 'GPU'"), std::string::npos) << r.error().message;
}

TEST_F(Corpus, HeldOutIncidentsAreScoredApart) {
  const fs::path dir = incident("held", "kernel", kXid79, "GPU_HARDWARE");
  write(dir / "incident.json", R"({"source": "https://example.org/x", "held_out": true,
                                   "truth": {"domain": "GPU_HARDWARE", "node": null, "confidence": "confirmed_fix"},
                                   "resolution": "r", "hard": "h", "acceptable": []})");
  incident("seen", "app", kValueError, "APPLICATION");
  std::vector<rules::IncidentResult> results;
  for (const auto& d : rules::list_incidents(root_)) {
    auto r = rules::evaluate_incident(d, test::shipped_pack());
    ASSERT_TRUE(r.ok()) << r.error().message;
    results.push_back(*r);
  }
  const auto s = rules::summarize(results);
  EXPECT_EQ(s.correct, 2u);
  EXPECT_EQ(s.held_out, 1u);
  EXPECT_EQ(s.held_out_correct, 1u);
  EXPECT_EQ(s.held_out_confidently_wrong, 0u);

  write(dir / "incident.json", R"({"source": "https://example.org/x", "held_out": "yes",
                                   "truth": {"domain": "GPU_HARDWARE", "node": null, "confidence": "confirmed_fix"},
                                   "resolution": "r", "hard": "h", "acceptable": []})");
  auto bad = rules::evaluate_incident(dir, test::shipped_pack());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("held_out"), std::string::npos) << bad.error().message;
}

TEST_F(Corpus, TheFloorFileNamesWhatIsWrong) {
  write(root_ / "floor.json", R"({"correct_at_least": 120})");
  auto floor = rules::read_eval_floor(root_ / "floor.json");
  ASSERT_FALSE(floor.ok());
  EXPECT_NE(floor.error().message.find("confidently_wrong_at_most"), std::string::npos) << floor.error().message;
  write(root_ / "floor.json", R"({"correct_at_least": 120, "confidently_wrong_at_most": 3})");
  floor = rules::read_eval_floor(root_ / "floor.json");
  ASSERT_TRUE(floor.ok()) << floor.error().message;
  EXPECT_EQ(floor->correct_at_least, 120u);
  EXPECT_EQ(floor->confidently_wrong_at_most, 3u);
}

TEST(GrepBaseline, TheHighestPriorityPatternSeenAnywhereWins) {
  rules::GrepBaseline grep;
  EXPECT_EQ(grep.domain(), "UNATTRIBUTED");
  grep.feed("Traceback (most recent call last):");
  EXPECT_EQ(grep.domain(), "APPLICATION");
  grep.feed("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
  EXPECT_EQ(grep.domain(), "GPU_HARDWARE");
  grep.feed("slurmstepd: error: *** JOB 1 ON n1 CANCELLED AT 2026-11-30T10:00:00 DUE TO TIME LIMIT ***");
  EXPECT_EQ(grep.domain(), "GPU_HARDWARE");
}

}  // namespace
}  // namespace attrib
