#include "common/config.h"

#include <gtest/gtest.h>

#include "collectors/registry.h"
#include "tests/support/test_paths.h"

using attrib::common::parse_config;

TEST(Config, DefaultsApplyAndKeysParse) {
  auto c = parse_config("cluster: lab\nhead:\n  workers: 4\n  listen: [\"127.0.0.1:7069\"]\n", "a.yaml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->cluster, "lab");
  EXPECT_EQ(c->head.workers, 4);
  EXPECT_EQ(c->head.listen, std::vector<std::string>{"127.0.0.1:7069"});
  EXPECT_EQ(c->head.database, "/var/lib/attrib/attrib.db");
  EXPECT_EQ(c->epilog.deadline_ms, 1000);
  EXPECT_EQ(c->rules_pack_dir, "/usr/share/attrib/rules");
  EXPECT_TRUE(c->head.write_comment);
}

TEST(Config, UnknownKeyNamesFileLineAndKey) {
  auto c = parse_config("cluster: lab\nhead:\n  workers: 2\n  wokers: 3\n", "/etc/attrib/attrib.yaml");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "CONFIG_E_UNKNOWN_KEY");
  EXPECT_NE(c.error().message.find("/etc/attrib/attrib.yaml:4"), std::string::npos) << c.error().message;
  EXPECT_NE(c.error().message.find("head.wokers"), std::string::npos) << c.error().message;
}

TEST(Config, WrongTypeNamesKey) {
  auto c = parse_config("cluster: lab\nepilog:\n  deadline_ms: soon\n", "x.yaml");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "CONFIG_E_TYPE");
  EXPECT_NE(c.error().message.find("x.yaml:3: 'epilog.deadline_ms'"), std::string::npos) << c.error().message;
}

TEST(Config, ClusterIsRequired) {
  auto c = parse_config("head:\n  workers: 1\n", "x.yaml");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "CONFIG_E_REQUIRED");
}

TEST(Config, BrokenYamlNamesLine) {
  auto c = parse_config("cluster: lab\nhead: [\n", "x.yaml");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "CONFIG_E_YAML");
  EXPECT_NE(c.error().message.find("x.yaml:"), std::string::npos);
}

TEST(Config, CollectorsKeepKindOptionsAndLine) {
  auto c = parse_config("cluster: lab\ncollectors:\n  - kind: journald\n    options:\n      directory: /j\n", "x.yaml");
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->collectors.size(), 1u);
  EXPECT_EQ(c->collectors[0].kind, "journald");
  EXPECT_EQ(c->collectors[0].options["directory"].as<std::string>(), "/j");
  EXPECT_EQ(c->collectors[0].line, 3);
  auto bad = parse_config("cluster: lab\ncollectors:\n  - kind: journald\n    opts: {}\n", "x.yaml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "CONFIG_E_TYPE");
}

TEST(Config, ReferenceDocumentsEveryKey) {
  std::string ref = attrib::common::config_reference_markdown();
  for (const char* key :
       {"cluster", "head.listen", "head.database", "head.spool_dir", "head.workers", "head.scope_max_wait_s",
        "epilog.server", "epilog.deadline_ms", "rules.pack_dir", "collectors"})
    EXPECT_NE(ref.find(std::string("`") + key + "`"), std::string::npos) << key;
}

TEST(Config, ShippedConfigIsValidAndMatchesTheTableDefaults) {
  auto c = attrib::common::load_config(attrib::test::source_dir() + "/packaging/rpm/attrib.yaml");
  ASSERT_TRUE(c) << c.error().message;
  auto defaults = parse_config("cluster: mycluster\n", "defaults.yaml");
  ASSERT_TRUE(defaults);
  EXPECT_EQ(c->head.listen, defaults->head.listen);
  EXPECT_EQ(c->head.database, defaults->head.database);
  EXPECT_EQ(c->head.scope_max_wait_s, defaults->head.scope_max_wait_s);
  EXPECT_EQ(c->head.window_lead_s, defaults->head.window_lead_s);
  EXPECT_EQ(c->epilog.server, defaults->epilog.server);
  EXPECT_EQ(c->epilog.spool_dir, defaults->epilog.spool_dir);
  EXPECT_EQ(c->rules_pack_dir, defaults->rules_pack_dir);
  ASSERT_EQ(c->collectors.size(), 1u);
  auto journald = attrib::collectors::create_collector(c->collectors[0].kind, c->collectors[0].options);
  EXPECT_TRUE(journald) << journald.error().message;
}

TEST(Config, AuthDefaultsToMungeAndRejectsUnknownModes) {
  auto defaults = parse_config("cluster: lab\n", "a.yaml");
  ASSERT_TRUE(defaults) << defaults.error().message;
  EXPECT_EQ(defaults->auth.mode, "munge");
  EXPECT_TRUE(defaults->auth.enabled());
  EXPECT_EQ(defaults->auth.munge_socket, "");
  EXPECT_EQ(defaults->auth.slurm_user, "slurm");
  EXPECT_EQ(defaults->auth.admin_group, "");
  auto set =
      parse_config("cluster: lab\nauth:\n  mode: none\n  munge_socket: /tmp/m.sock\n  admin_group: hpcadm\n", "a.yaml");
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_FALSE(set->auth.enabled());
  EXPECT_EQ(set->auth.munge_socket, "/tmp/m.sock");
  EXPECT_EQ(set->auth.admin_group, "hpcadm");
  auto bad = parse_config("cluster: lab\nauth:\n  mode: trust\n", "a.yaml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("'auth.mode': must be munge or none"), std::string::npos) << bad.error().message;
}
