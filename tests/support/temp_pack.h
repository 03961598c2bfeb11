// A rule pack written to a temporary directory, for tests that need rules of their own
// (the shipped pack changes as rules are added; engine semantics should not).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "rules/engine.h"

namespace attrib::test {

class TempPackDir {
 public:
  explicit TempPackDir(const std::string& tag) {
    // A parameterized test's name has a '/' ("Case/0"): one directory per test, not a subdirectory.
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(test.begin(), test.end(), '/', '_');
    dir_ = std::filesystem::temp_directory_path() /
           ("attrib-rules-" + tag + "-" + std::to_string(::getpid()) + "-" + test);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~TempPackDir() { std::filesystem::remove_all(dir_); }
  TempPackDir(const TempPackDir&) = delete;
  TempPackDir& operator=(const TempPackDir&) = delete;

  // pack.yaml listing one rule file, rules.yaml holding `rules`.
  void write_pack(const std::string& rules) {
    write("pack.yaml", "name: test\nversion: 0.0.1\nclock_skew_ms: 5000\nrule_files: [rules.yaml]\n");
    write("rules.yaml", rules);
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ / name) << text; }

  rules::LoadOptions options() const {
    rules::LoadOptions o;
    o.pack_dir = dir_;
    return o;
  }
  std::shared_ptr<const rules::RulePack> load() const {
    auto loaded = rules::load_rule_pack(options());
    if (!loaded.ok()) {
      ADD_FAILURE() << loaded.error().code << " " << loaded.error().message;
      return nullptr;
    }
    return *loaded;
  }
  Error load_error() const {
    auto loaded = rules::load_rule_pack(options());
    if (loaded.ok()) {
      ADD_FAILURE() << "pack loaded but should not have";
      return Error{};
    }
    return loaded.error();
  }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace attrib::test
