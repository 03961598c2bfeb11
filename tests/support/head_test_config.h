// The head daemon's configuration for in-process tests: a fresh per-test directory
// (journal/, spool/, the socket and the archive inside it), no authentication (the auth
// suite covers MUNGE), fast scoping and a short evidence window.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "common/config.h"

namespace attrib::test {

// dir: <tmp>/<prefix>-<pid>-<test name>, emptied and created with journal/ and spool/.
inline common::Config head_test_config(const std::string& prefix, const std::string& rules_pack_dir,
                                       std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  dir = fs::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()) + "-" +
                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir / "journal");
  fs::create_directories(dir / "spool");
  common::Config config;
  config.cluster = "lab";
  config.auth.mode = "none";  // authentication has its own suite (test_auth.cpp)
  config.head.listen = {"unix://" + (dir / "sock").string()};
  config.head.database = (dir / "attrib.db").string();
  config.head.spool_dir = (dir / "spool").string();
  config.head.scope_poll_interval_ms = 20;
  config.head.window_lead_s = 0;
  config.head.window_grace_s = 1;
  config.rules_pack_dir = rules_pack_dir;
  return config;
}

}  // namespace attrib::test
