// Emitter catalogs (rules/emitter_catalog.h): rows read, errors that name file:line and
// column, and coverage counted per message and per family against the shipped pack. The
// shipped catalogs themselves are checked by the ctest attrib_rules_emitter_catalogs.
#include "rules/evidence/emitter_catalog.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/rule_test_support.h"

namespace attrib {
namespace {

namespace fs = std::filesystem;

class EmitterCatalog : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attrib-emitter-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "data" / "emitters");
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Header lines 1-4, rows from line 5.
  fs::path write(const std::string& rows) {
    const fs::path file = dir_ / "data" / "emitters" / "demo.tsv";
    std::ofstream(file) << "# emitter: Demo\n# repository: https://github.com/example/demo\n# tag: v1\n"
                           "message\twhere\tfamily\trole\tknown_by\tleft_out\n"
                        << rows;
    return file;
  }
  fs::path dir_;
};

TEST_F(EmitterCatalog, CountsKnownLeftOutAndTodoPerMessageAndFamily) {
  write("Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx\tsrc/init.cc:1\tduplicate_gpu\t"
        "root_cause\tnccl.duplicate_gpu\t\n"
        "Duplicate GPU again %d\tsrc/init.cc:2\tduplicate_gpu\troot_cause\t-\ttodo\n"
        "Could not open %s\tsrc/a.cc:3\tfile_open_failed\troot_cause\t-\ttodo\n"
        "trace %d\tsrc/b.cc:4\tdebug\tbenign\t-\tdebug-only path\n"
        "ghost\tsrc/c.cc:5\tghost\tsymptom\tno.such_extractor\t\n");
  auto catalogs = rules::read_emitter_catalogs(dir_);
  ASSERT_TRUE(catalogs.ok()) << catalogs.error().message;
  ASSERT_EQ(catalogs->size(), 1u);
  const auto& catalog = catalogs->front();
  EXPECT_EQ(catalog.emitter, "Demo");
  EXPECT_EQ(catalog.tag, "v1");
  const auto c = rules::emitter_coverage(catalog, *test::shipped_pack());
  EXPECT_EQ(c.messages, 5u);
  EXPECT_EQ(c.known, 2u);
  EXPECT_EQ(c.todo, 2u);
  EXPECT_EQ(c.left_out, 1u);
  EXPECT_EQ(c.left_out_reasons.at("debug-only path"), 1u);
  EXPECT_EQ(c.families, 4u);
  EXPECT_EQ(c.families_known, 2u);  // duplicate_gpu (one of its messages is known), ghost
  // A family with a known message is not a todo family, even with an unknown sibling.
  EXPECT_EQ(c.todo_families, std::vector<std::string>{"file_open_failed"});
  ASSERT_EQ(c.missing_extractors.size(), 1u);
  EXPECT_EQ(c.missing_extractors[0], "demo.tsv:9: no.such_extractor");
}

TEST_F(EmitterCatalog, AMalformedRowNamesFileLineAndColumn) {
  const auto error = [&](const std::string& rows) {
    auto c = rules::read_emitter_catalog(write(rows));
    return c.ok() ? std::string() : c.error().code + " " + c.error().message;
  };
  EXPECT_NE(error("a\tb\tc\n").find("demo.tsv:5: expected 6 tab-separated columns, got 3"), std::string::npos);
  EXPECT_NE(error("m\tw\tf\tcause\t-\ttodo\n").find("demo.tsv:5: role: expected root_cause"), std::string::npos);
  EXPECT_NE(error("m\tw\tf\tbenign\t-\t\n").find("left_out: a message no extractor knows needs a reason"),
            std::string::npos);
  EXPECT_NE(error("m\tw\tf\tbenign\tnccl.duplicate_gpu\tdebug\n").find("left_out: must be empty"), std::string::npos);
  EXPECT_NE(error("\tw\tf\tbenign\t-\ttodo\n").find("message: empty"), std::string::npos);
  EXPECT_EQ(error("m\tw\tf\tbenign\t-\ttodo\n"), "");
  EXPECT_EQ(error("m\tw\tf\n").rfind("RULE_E_CATALOG ", 0), 0u);
}

TEST_F(EmitterCatalog, NoCatalogsIsNotAnError) {
  fs::remove_all(dir_ / "data");
  auto catalogs = rules::read_emitter_catalogs(dir_);
  ASSERT_TRUE(catalogs.ok());
  EXPECT_TRUE(catalogs->empty());
}

}  // namespace
}  // namespace attrib
