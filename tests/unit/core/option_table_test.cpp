// The option-table design every YAML reader shares (core/option_table.h): defaults,
// types, limits, nested sections, and errors that name the file, line and key.
#include "core/option_table.h"

#include <gtest/gtest.h>

namespace attrib {
namespace {

struct Inner {
  int64_t limit = 0;
};
struct Settings {
  std::string mode;
  int workers = 0;
  bool verbose = false;
  std::vector<std::string> names;
  std::map<std::string, std::string> labels;
  Inner inner;
};

const OptionTable<Settings>& table() {
  static const OptionTable<Settings> options = {
      option("mode", &Settings::mode, "fast", "How.", one_of({"fast", "slow"})),
      option("workers", &Settings::workers, "2", "How many.", at_least(1)),
      option("verbose", &Settings::verbose, "false", "Say more."),
      option("names", &Settings::names, "[a, b]", "Names."),
      option("labels", &Settings::labels, "{}", "Labels."),
      option<Settings>(
          "section.limit", [](Settings& s) -> int64_t& { return s.inner.limit; }, "10", "Nested.", at_most(100)),
  };
  return options;
}

Result<Settings> read(const std::string& yaml) {
  Settings settings;
  if (Status s = read_options(table(), YAML::Load(yaml), OptionScope{"x.yaml", ""}, settings); !s) return s.error();
  return settings;
}

TEST(OptionTable, DefaultsApplyWhenNothingIsGiven) {
  auto settings = read("{}");
  ASSERT_TRUE(settings) << settings.error().message;
  EXPECT_EQ(settings->mode, "fast");
  EXPECT_EQ(settings->workers, 2);
  EXPECT_FALSE(settings->verbose);
  EXPECT_EQ(settings->names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(settings->inner.limit, 10);
}

TEST(OptionTable, GivenValuesOfEveryTypeAreRead) {
  auto settings = read("mode: slow\nworkers: 4\nverbose: yes\nnames: [c]\nlabels: {k: v}\nsection:\n  limit: 99\n");
  ASSERT_TRUE(settings) << settings.error().message;
  EXPECT_EQ(settings->mode, "slow");
  EXPECT_EQ(settings->workers, 4);
  EXPECT_TRUE(settings->verbose);
  EXPECT_EQ(settings->names, (std::vector<std::string>{"c"}));
  EXPECT_EQ(settings->labels.at("k"), "v");
  EXPECT_EQ(settings->inner.limit, 99);
}

TEST(OptionTable, ErrorsNameFileLineKeyAndProblem) {
  auto type = read("workers: many\n");
  ASSERT_FALSE(type);
  EXPECT_EQ(type.error().code, kConfigType);
  EXPECT_EQ(type.error().message, "x.yaml:1: 'workers': expected an integer, got 'many'");

  auto range = read("verbose: true\nworkers: 0\n");
  ASSERT_FALSE(range);
  EXPECT_EQ(range.error().code, kConfigValue);
  EXPECT_EQ(range.error().message, "x.yaml:2: 'workers': must be at least 1, got 0");

  auto narrow = read("workers: 9999999999\n");  // fits int64_t, not the int field
  ASSERT_FALSE(narrow);
  EXPECT_EQ(narrow.error().code, kConfigValue);

  auto choice = read("mode: medium\n");
  ASSERT_FALSE(choice);
  EXPECT_EQ(choice.error().message, "x.yaml:1: 'mode': must be fast or slow, not 'medium'");

  auto nested = read("section:\n  limit: 101\n");
  ASSERT_FALSE(nested);
  EXPECT_EQ(nested.error().message, "x.yaml:2: 'section.limit': must be at most 100, got 101");
}

TEST(OptionTable, UnknownKeysAndBadSectionsAreRefused) {
  auto unknown = read("workers: 2\nsection:\n  limt: 3\n");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, kConfigUnknownKey);
  EXPECT_EQ(unknown.error().message, "x.yaml:3: unknown key 'section.limt'; known keys in 'section': limit");

  auto scalar_section = read("section: 5\n");
  ASSERT_FALSE(scalar_section);
  EXPECT_EQ(scalar_section.error().code, kConfigType);

  Settings settings;
  Status not_a_map = read_options(table(), YAML::Load("[a]"), OptionScope{"", "collector 't'"}, settings);
  ASSERT_FALSE(not_a_map);
  EXPECT_EQ(not_a_map.error().code, kConfigType);
  EXPECT_NE(not_a_map.error().message.find("collector 't'"), std::string::npos) << not_a_map.error().message;
}

TEST(OptionTable, ChecksRunOnDefaultsToo) {
  struct Path {
    std::string path;
  };
  const OptionTable<Path> strict = {
      option("path", &Path::path, "relative", "A path.", {}, [](const std::string& p) -> OptionProblem {
        if (p.empty() || p[0] != '/') return Error{kConfigValue, "not absolute"};
        return std::nullopt;
      })};
  Path path;
  Status s = read_options(strict, YAML::Node(), OptionScope{"", "collector 't'"}, path);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("'path' of collector 't': not absolute"), std::string::npos) << s.error().message;
}

TEST(OptionTable, MarkdownHasATypedRowPerOptionWithItsLimits) {
  const std::string markdown = options_markdown(option_docs(table()));
  EXPECT_NE(markdown.find("| key | type | default | meaning |"), std::string::npos);
  EXPECT_NE(markdown.find("| `workers` | integer | `2` | How many. At least 1. |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| `mode` | string | `fast` | How. One of: `fast` `slow`. |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| `section.limit` | integer | `10` | Nested. At most 100. |"), std::string::npos)
      << markdown;
}

}  // namespace
}  // namespace attrib
