// Strict key=value plugstack arguments.
#include "spank/plugin_args.h"

#include <gtest/gtest.h>

namespace attrib::spank {
namespace {

TEST(SpankPluginArgs, DefaultsWhenNoArguments) {
  auto parsed = parse_plugin_args({});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->spool_dir, "/var/spool/attrib/tasks");
  EXPECT_FALSE(parsed->allow_opt_out);
  EXPECT_EQ(parsed->nccl_trace_buffer_size, 2000);
}

TEST(SpankPluginArgs, ReadsEveryKey) {
  auto parsed = parse_plugin_args({"spool_dir=/srv/attrib/%n", "allow_opt_out=yes", "nccl_trace_buffer_size=500"});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->spool_dir, "/srv/attrib/%n");
  EXPECT_TRUE(parsed->allow_opt_out);
  EXPECT_EQ(parsed->nccl_trace_buffer_size, 500);
}

TEST(SpankPluginArgs, RejectsUnknownKeyNamingIt) {
  auto parsed = parse_plugin_args({"spool_dir=/x", "spooldir=/y"});
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code, "SPANK_E_ARG");
  EXPECT_NE(parsed.error().message.find("unknown key 'spooldir'"), std::string::npos) << parsed.error().message;
}

TEST(SpankPluginArgs, RejectsMalformedValues) {
  for (const char* bad : {"allow_opt_out", "=yes", "allow_opt_out=true", "spool_dir=relative/dir", "spool_dir=",
                          "nccl_trace_buffer_size=0", "nccl_trace_buffer_size=12x", "nccl_trace_buffer_size=-4"}) {
    auto parsed = parse_plugin_args({bad});
    EXPECT_FALSE(parsed) << bad;
  }
}

TEST(SpankPluginArgs, RejectsRepeatedKey) {
  auto parsed = parse_plugin_args({"allow_opt_out=yes", "allow_opt_out=no"});
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("twice"), std::string::npos);
}

TEST(SpankPluginArgs, ExpandsNodeName) {
  EXPECT_EQ(expand_spool_dir("/a/%n/b/%n", "n2"), "/a/n2/b/n2");
  EXPECT_EQ(expand_spool_dir("/a/100%", "n2"), "/a/100%");
  EXPECT_EQ(expand_spool_dir("/a/%x", "n2"), "/a/%x");
}

}  // namespace
}  // namespace attrib::spank
