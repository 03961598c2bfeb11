// attrib-rules eval's scoring (rules/corpus_eval.h): right, confidently wrong, the grep
// baseline, the floor, and incident.json errors that name the field. The real corpus
// itself is scored by the ctest attrib_rules_corpus_floor.
#include "rules/evidence/corpus_eval.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "rules/evidence/grep_baseline.h"
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
  // One incident: a job on node1, one log file, and its truth (UNATTRIBUTED: never
  // established; any other: a confirmed fix). `extra`: more incident.json members.
  fs::path incident(const std::string& name, const std::string& source, const std::string& lines,
                    const std::string& truth, const std::string& extra = R"("acceptable": [])") {
    const fs::path dir = root_ / name;
    write(dir / "job.json", R"({"job_id": "1", "state": "FAILED", "exit_code": 1, "nodes": ["node1"]})");
    write(dir / "node1" / (source + ".log"), lines);
    const std::string confidence = truth == "UNATTRIBUTED" ? "never_established" : "confirmed_fix";
    write(dir / "incident.json", R"({"source": "https://example.org/thread", "title": "t", "truth": {"domain": ")" +
                                     truth + R"(", "node": "node1", "confidence": ")" + confidence + R"("},
                                     "resolution": "r", "hard": "h", )" +
                                     extra + "}");
    return dir;
  }
  std::vector<rules::IncidentResult> evaluate_all() {
    std::vector<rules::IncidentResult> results;
    for (const auto& dir : rules::list_incidents(root_)) {
      auto r = rules::evaluate_incident(dir, test::shipped_pack());
      EXPECT_TRUE(r.ok()) << r.error().message;
      if (r) results.push_back(*r);
    }
    return results;
  }
  std::string load_error(const fs::path& dir) {
    auto r = rules::evaluate_incident(dir, test::shipped_pack());
    return r.ok() ? "" : r.error().message;
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
  incident("c-open", "app", "nothing to see\n", "UNATTRIBUTED");
  const auto results = evaluate_all();
  ASSERT_EQ(results.size(), 3u);
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

// No cause (UNATTRIBUTED, AMBIGUOUS) is right only where the thread never found one;
// another domain only where the thread disputes the cause, which it must say.
TEST_F(Corpus, ScoringIsStrict) {
  incident("a-known-cause", "app", "nothing to see\n", "STORAGE");
  incident("b-disputed", "kernel", kXid79, "HOST_HARDWARE",
           R"("acceptable": ["GPU_HARDWARE"], "disputed": "the reporter blames the riser, a maintainer the card")");
  const auto results = evaluate_all();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].verdict.domain, "UNATTRIBUTED");
  EXPECT_FALSE(rules::verdict_correct(results[0]));
  EXPECT_FALSE(rules::confidently_wrong(results[0]));
  EXPECT_EQ(results[1].verdict.domain, "GPU_HARDWARE");
  EXPECT_TRUE(rules::verdict_correct(results[1]));

  rules::IncidentResult open_case = results[0];
  open_case.truth.domain = "UNATTRIBUTED";
  open_case.truth.confidence = "never_established";
  open_case.verdict.domain = "AMBIGUOUS";
  EXPECT_TRUE(rules::verdict_correct(open_case));

  // One disputed incident in two is more than one in six: the corpus scores itself.
  const auto s = rules::summarize(results);
  EXPECT_EQ(s.disputed, 1u);
  const auto failures = rules::check_eval_floor(s, {0, 9});
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("1 of 2 incidents accept another domain"), std::string::npos) << failures[0];
}

TEST_F(Corpus, LenientTruthsAreErrorsNamingTheField) {
  EXPECT_NE(load_error(incident("no-dispute", "kernel", kXid79, "GPU_HARDWARE", R"("acceptable": ["HOST_HARDWARE"])"))
                .find("disputed: an acceptable domain needs the thread's dispute"),
            std::string::npos);
  EXPECT_NE(load_error(incident("no-cause-ok", "kernel", kXid79, "GPU_HARDWARE",
                                R"("acceptable": ["UNATTRIBUTED"], "disputed": "d")"))
                .find("acceptable: expected a list of concrete domains"),
            std::string::npos);
  const fs::path dir = incident("open-but-named", "kernel", kXid79, "GPU_HARDWARE");
  write(dir / "incident.json", R"({"source": "https://example.org/x", "truth": {"domain": "GPU_HARDWARE",
                                   "confidence": "never_established"}, "resolution": "r", "hard": "h", "acceptable": []})");
  EXPECT_NE(load_error(dir).find("truth.domain: UNATTRIBUTED exactly when truth.confidence is never_established"),
            std::string::npos);
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
  const auto s = rules::summarize(evaluate_all());
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
