// Hostlists as Slurm prints them, and what is refused before libslurm sees it.
#include <gtest/gtest.h>

#include "slurm/slurmdbd_client.h"

namespace attrib::slurm {
namespace {

TEST(Hostlist, WhatSlurmPrintsIsAHostlist) {
  for (const char* text : {"", "None assigned", "n1", "n[1-3]", "gpu[07-08],login", "rack[1-2]-gpu[01-08,10]",
                           "node-1.cluster", "a[1],b[2-3]x"})
    EXPECT_TRUE(is_hostlist(text)) << text;
}

TEST(Hostlist, MalformedGroupsNamesAndSeparatorsAreRefused) {
  // "gpu[001-002,0.7]" and "gpu[010-002,017]" made libslurm leak (fuzz/regressions/job_ended).
  for (const char* text : {"gpu[001-002,0.7]", "gpu[010-002,017]", "n[", "n[1-3", "n]", "n[]", "n[1-]", "n[-1]",
                           "n[1,]", "n[1--2]", "n[[1]]", ",n1", "n1,", "n1,,n2", "n 1", "n\t1", "n1\n"})
    EXPECT_FALSE(is_hostlist(text)) << text;
}

TEST(Hostlist, ExpandsInOrderAndRefusesWhatIsNotAHostlist) {
  EXPECT_EQ(expand_hostlist("n[1-3],gpu07"), (std::vector<std::string>{"n1", "n2", "n3", "gpu07"}));
  EXPECT_TRUE(expand_hostlist("gpu[001-002,0.7]").empty());
  EXPECT_TRUE(expand_hostlist("None assigned").empty());
}

TEST(Hostlist, AnExpansionStopsAtTheBound) {
  // One range of over 64Ki names is not a hostlist (libslurm leaks on it); ranges add up.
  EXPECT_FALSE(is_hostlist("n[0-65536]"));
  EXPECT_TRUE(expand_hostlist("n[0-99999999]").empty());
  EXPECT_EQ(expand_hostlist("n[0-65535]").size(), 65536u);
  EXPECT_EQ(expand_hostlist("a[0-60000],b[0-60000]").size(), kMaxHostlistNames);
}

}  // namespace
}  // namespace attrib::slurm
