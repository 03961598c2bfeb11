// Where tests find the checkout's data: the rule pack, golden fixtures, scripts and the
// shared test support. The paths are compiled into one file that CMake generates in the
// build tree (tests/support/test_paths.cpp.in), not passed to every test's compile
// command: a compile command that names the checkout's absolute path differs between
// two checkouts of the same commit, and ccache could not share the object between them
// (scripts/lib/ccache.sh).
#pragma once

#include <string>

namespace attrib::test {

const std::string& source_dir();
const std::string& rules_pack_dir();
const std::string& fixtures_dir();
const std::string& scripts_dir();
const std::string& support_dir();

}  // namespace attrib::test
