// The template miner of attrib-rules mine: masking, Drain clustering, ranking, and rule
// skeletons that the real pack loader accepts once the admin fills in the domain. The
// "widget controller" lines are a test fixture, not field messages.
#include "rules/evidence/template_miner.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "rules/engine.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using namespace attrib;
using namespace attrib::rules;

namespace {

MinedLine Line(const std::string& text, const std::string& attempt, const std::string& node = "n1",
               const std::string& source = "kernel") {
  return {text, node, source, attempt, true};
}

TEST(TemplateMiner, MasksVariablePartsAndTheJobsHostNames) {
  EXPECT_EQ(
      mask_tokens("NVRM: GPU at PCI:0000:3b:00.0: GPU-660d987e-1234-5678-9abc-def012345678 lost at 0x7f3a2c00", {}),
      (std::vector<std::string>{"NVRM:", "GPU", "at", "PCI:<PCI>:", "<ID>", "lost", "at", "<HEX>"}));
  EXPECT_EQ(mask_tokens("connect to 10.2.3.4 from gpu-017 failed after 12 tries, see /var/log/x.log", {"gpu-017"}),
            (std::vector<std::string>{"connect", "to", "<IP>", "from", "<NODE>", "failed", "after", "<NUM>", "tries,",
                                      "see", "<PATH>"}));
  // Short hex-looking words stay words.
  EXPECT_EQ(mask_tokens("dead beef cafe", {}), (std::vector<std::string>{"dead", "beef", "cafe"}));
}

TEST(TemplateMiner, ClustersLinesThatDifferInAFewTokens) {
  TemplateMiner miner;
  miner.add(Line("widget controller 7 stopped responding on n1", "1 run 0"), {"n1"});
  miner.add(Line("widget controller 9 stopped responding on n2", "2 run 0", "n2"), {"n2"});
  miner.add(Line("widget bus reset by user alice", "2 run 0"));
  miner.add(Line("widget bus reset by operator bob", "3 run 0"));
  const auto ranked = miner.ranked();
  ASSERT_EQ(ranked.size(), 2u);
  std::set<std::string> texts = {ranked[0].text(), ranked[1].text()};
  EXPECT_TRUE(texts.count("widget controller <NUM> stopped responding on <NODE>")) << ranked[0].text();
  EXPECT_TRUE(texts.count("widget bus reset by <*> <*>")) << ranked[1].text();
}

TEST(TemplateMiner, RanksByAttemptsAndPutsWhatSuccessesAlsoShowLast) {
  TemplateMiner miner;
  for (int i = 0; i < 5; ++i)
    miner.add(Line("audit: type=1400 apparmor ALLOWED op " + std::to_string(i), std::to_string(i)));
  for (int i = 0; i < 3; ++i)
    miner.add(Line("widget controller " + std::to_string(i) + " stopped responding", std::to_string(i)));
  miner.add(Line("something once", "9"));
  // The audit line shows in successful attempts too: background, ranked after the others.
  miner.add_baseline(Line("audit: type=1400 apparmor ALLOWED op 77", "100"));
  const auto ranked = miner.ranked();
  ASSERT_EQ(ranked.size(), 3u);
  EXPECT_EQ(ranked[0].text(), "widget controller <NUM> stopped responding");
  EXPECT_EQ(ranked[0].attempts.size(), 3u);
  EXPECT_EQ(ranked[1].text(), "something once");
  EXPECT_EQ(ranked[2].text(), "audit: type=<NUM> apparmor ALLOWED op <NUM>");
  EXPECT_EQ(ranked[2].baseline_attempts.size(), 1u);
}

class SkeletonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attrib-miner-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Result<std::shared_ptr<const RulePack>> LoadWith(const std::string& yaml) {
    std::ofstream(dir_ / "mined.yaml") << yaml;
    LoadOptions load;
    load.pack_dir = attrib::test::rules_pack_dir();
    load.site_dirs = {dir_};
    return load_rule_pack(load);
  }
  fs::path dir_;
};

TEST_F(SkeletonTest, TheLoaderRefusesItUntilTheDomainIsFilledThenAcceptsItUnchanged) {
  TemplateMiner miner;
  const std::vector<std::string> lines = {
      "widget controller 7 stopped responding at 0x7f3a2c00 (pid=4242, path=/dev/widget0) on n1",
      "widget controller 12 stopped responding at 0x7f3a2d10 (pid=77, path=/dev/widget3) on n2"};
  miner.add(Line(lines[0], "1 run 0", "n1"), {"n1"});
  miner.add(Line(lines[1], "2 run 0", "n2"), {"n2"});
  const auto ranked = miner.ranked();
  ASSERT_EQ(ranked.size(), 1u);
  const auto yaml = rule_skeleton(ranked[0], "site.widget_stall");
  ASSERT_TRUE(yaml);
  EXPECT_NE(yaml->find("prefilter: \"stopped responding at\""), std::string::npos) << *yaml;
  EXPECT_NE(yaml->find(lines[0]), std::string::npos) << *yaml;  // the real lines are its examples

  auto refused = LoadWith(*yaml);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("FILL_IN"), std::string::npos) << refused.error().message;

  const std::string filled = std::regex_replace(*yaml, std::regex("domain: FILL_IN"), "domain: HOST_OS");
  auto loaded = LoadWith(filled);
  ASSERT_TRUE(loaded) << loaded.error().code << " " << loaded.error().message << "\n" << filled;
  // The rule extracts the mined lines.
  Extractor extractor(*loaded);
  extractor.feed({"n1", "kernel", std::nullopt, 0, true, lines[1]});
  const auto events = extractor.finish();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "site.widget_stall");
}

TEST_F(SkeletonTest, LinesFromTheJobsOutputMakeAnUntrustedRoot) {
  TemplateMiner miner;
  miner.add(Line("[rank3]: widget stalled: 42 requests lost", "1 run 0", "n1", "app.rank3"));
  const auto yaml = rule_skeleton(miner.ranked().at(0), "site.widget_app");
  ASSERT_TRUE(yaml);
  EXPECT_NE(yaml->find("sources: [app]"), std::string::npos) << *yaml;
  EXPECT_NE(yaml->find("trusted: false"), std::string::npos) << *yaml;
  auto loaded = LoadWith(std::regex_replace(*yaml, std::regex("domain: FILL_IN"), "domain: APPLICATION"));
  ASSERT_TRUE(loaded) << loaded.error().message << "\n" << *yaml;
}

}  // namespace
