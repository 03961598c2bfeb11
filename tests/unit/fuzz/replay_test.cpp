// Replays fuzz/regressions/<target>/ and fuzz/corpus/<target>/ through every fuzz target
// (tests/unit/fuzz/CMakeLists.txt). A target aborts on a broken property, as under
// libFuzzer, so a failing input ends this test's process, naming the target; the input
// is printed first.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz_targets.h"  // ATTRIB_FUZZ_TARGET_LIST, from fuzz/targets.cmake
#include "tests/support/test_paths.h"

namespace attrib::fuzz {
#define X(name) int name(const uint8_t* data, size_t size);
ATTRIB_FUZZ_TARGET_LIST(X)
#undef X

namespace {

namespace fs = std::filesystem;

struct Target {
  const char* name;
  int (*run)(const uint8_t*, size_t);
};

const std::vector<Target>& targets() {
#define X(name) Target{#name, &name},
  static const std::vector<Target> all{ATTRIB_FUZZ_TARGET_LIST(X)};
#undef X
  return all;
}

std::vector<fs::path> inputs_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

size_t replay(const Target& target, const fs::path& dir) {
  size_t count = 0;
  for (const fs::path& file : inputs_in(dir)) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::cerr << "replaying " << file.string() << "\n";
    EXPECT_EQ(target.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0) << file;
    ++count;
  }
  return count;
}

class FuzzReplay : public testing::TestWithParam<Target> {};

TEST_P(FuzzReplay, RegressionsAndSeedsPass) {
  const fs::path fuzz_dir = fs::path(attrib::test::source_dir()) / "fuzz";
  replay(GetParam(), fuzz_dir / "regressions" / GetParam().name);
  // Every target has seeds: a target fuzzed from nothing finds little in 20 s.
  EXPECT_GT(replay(GetParam(), fuzz_dir / "corpus" / GetParam().name), 0u) << "no seeds for " << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, testing::ValuesIn(targets()),
                         [](const testing::TestParamInfo<Target>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace attrib::fuzz
