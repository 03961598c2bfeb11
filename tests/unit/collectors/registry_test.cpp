// The collector registry and option validation driven by the option tables.
#include "collectors/registry.h"

#include <gtest/gtest.h>

#include "collectors/journald_collector.h"

namespace attrib::collectors {
namespace {

TEST(Registry, ListsJournaldWithItsOptionTable) {
  const CollectorKind* kind = find_collector_kind("journald");
  ASSERT_NE(kind, nullptr);
  std::vector<std::string> keys;
  for (const OptionDoc& spec : kind->options) {
    keys.push_back(spec.key);
    EXPECT_FALSE(spec.help.empty()) << spec.key << " is undocumented";
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"directory", "match_hostname", "identifiers", "app_identifiers"}));
  EXPECT_EQ(find_collector_kind("no-such-kind"), nullptr);
}

TEST(Registry, UnknownKeyNamesKeyCollectorAndLine) {
  const YAML::Node options = YAML::Load("directory: /var/log/journal/remote\nmatch_hostname: true\ndirectroy: /tmp\n");
  auto created = create_collector("journald", options);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().code, "CONFIG_E_UNKNOWN_KEY");
  EXPECT_NE(created.error().message.find("'directroy'"), std::string::npos) << created.error().message;
  EXPECT_NE(created.error().message.find("journald"), std::string::npos) << created.error().message;
  EXPECT_NE(created.error().message.find("line 3"), std::string::npos) << created.error().message;
}

TEST(Registry, WrongTypeNamesKeyAndLine) {
  auto not_bool = create_collector("journald", YAML::Load("directory: /x\nmatch_hostname: maybe\n"));
  ASSERT_FALSE(not_bool.ok());
  EXPECT_EQ(not_bool.error().code, "CONFIG_E_TYPE");
  EXPECT_NE(not_bool.error().message.find("'match_hostname'"), std::string::npos) << not_bool.error().message;
  EXPECT_NE(not_bool.error().message.find("line 2"), std::string::npos) << not_bool.error().message;

  auto not_list = create_collector("journald", YAML::Load("identifiers: nv-fabricmanager\n"));
  ASSERT_FALSE(not_list.ok());
  EXPECT_EQ(not_list.error().code, "CONFIG_E_TYPE");
  EXPECT_NE(not_list.error().message.find("'identifiers'"), std::string::npos) << not_list.error().message;

  auto nested = create_collector("journald", YAML::Load("app_identifiers: [python3, {a: b}]\n"));
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.error().message.find("'app_identifiers'"), std::string::npos) << nested.error().message;

  auto not_map = create_collector("journald", YAML::Load("[a, b]"));
  ASSERT_FALSE(not_map.ok());
  EXPECT_EQ(not_map.error().code, "CONFIG_E_TYPE");
}

TEST(Registry, UnknownCollectorIsAnError) {
  auto created = create_collector("journal", YAML::Node());
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().code, "CONFIG_E_UNKNOWN_COLLECTOR");
  EXPECT_NE(created.error().message.find("journald"), std::string::npos);
}

TEST(Registry, ValidOptionsCreateTheCollector) {
  auto created =
      create_collector("journald", YAML::Load("directory: /var/log/journal/remote\nmatch_hostname: yes\n"
                                              "identifiers: [nv-fabricmanager]\napp_identifiers: [python3]\n"));
  ASSERT_TRUE(created.ok()) << created.error().message;
  ASSERT_NE(created->get(), nullptr);
  EXPECT_EQ((*created)->name(), "journald");
  auto* journald = dynamic_cast<JournaldCollector*>(created->get());
  ASSERT_NE(journald, nullptr);
  EXPECT_EQ(journald->source_names(), (std::vector<std::string>{"kernel", "fabricmanager", "app"}));
}

TEST(Registry, TableDefaultsApplyWhenNoOptionsAreGiven) {
  for (const YAML::Node& none : {YAML::Node(), YAML::Load("~"), YAML::Load("{}")}) {
    auto created = create_collector("journald", none);
    ASSERT_TRUE(created.ok()) << created.error().message;
    auto* journald = dynamic_cast<JournaldCollector*>(created->get());
    ASSERT_NE(journald, nullptr);
    // Default identifiers: nv-fabricmanager and nvidia-persistenced; no app identifiers.
    EXPECT_EQ(journald->source_names(), (std::vector<std::string>{"kernel", "fabricmanager", "syslog"}));
  }
}

TEST(Registry, EveryTableDefaultIsAcceptedByItsParser) {
  // Creating each kind with its defaults written out explicitly must succeed: a
  // default that the parser rejects would only surface for users who omit the key.
  for (const CollectorKind& kind : collector_kinds()) {
    YAML::Node explicit_defaults(YAML::NodeType::Map);
    for (const OptionDoc& spec : kind.options) {
      if (!spec.default_value.empty()) explicit_defaults[spec.key] = YAML::Load(spec.default_value);
    }
    auto created = kind.create(explicit_defaults);
    EXPECT_TRUE(created.ok()) << kind.name << ": " << created.error().message;
  }
}

TEST(Registry, MarkdownReferenceHasARowPerOption) {
  const std::string markdown = options_reference_markdown();
  EXPECT_NE(markdown.find("### journald"), std::string::npos);
  EXPECT_NE(markdown.find("| key | type | default | meaning |"), std::string::npos);
  for (const OptionDoc& spec : find_collector_kind("journald")->options) {
    EXPECT_NE(markdown.find("| `" + spec.key + "` | " + spec.type + " | `" + spec.default_value + "` |"),
              std::string::npos)
        << spec.key << "\n"
        << markdown;
  }
}

TEST(Registry, ValuesOutsideTheirLimitsNameKeyLineAndLimit) {
  auto offset = create_collector("fabricmanager", YAML::Load("timezone_offset_minutes: 5000\n"));
  ASSERT_FALSE(offset.ok());
  EXPECT_EQ(offset.error().code, "CONFIG_E_VALUE");
  EXPECT_EQ(offset.error().message,
            "line 1: 'timezone_offset_minutes' of collector 'fabricmanager': must be between -1440 and 1440, got 5000");
  auto glob = create_collector("kmsg", YAML::Load("path: /var/log/*.kmsg\n"));
  ASSERT_FALSE(glob.ok());
  EXPECT_EQ(glob.error().code, "CONFIG_E_VALUE");
  EXPECT_NE(glob.error().message.find("glob"), std::string::npos) << glob.error().message;
  auto source = create_collector("loki", YAML::Load("default_source: kernal\n"));
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.error().message.find("must be kernel, syslog, fabricmanager or app, not 'kernal'"),
            std::string::npos)
      << source.error().message;
}

}  // namespace
}  // namespace attrib::collectors
