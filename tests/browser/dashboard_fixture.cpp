// attrib-dashboard-fixture DATABASE FIXTURES_DIR PACK_DIR: writes the dashboard tests'
// known archive (tests/support/dashboard_archive.h) for the browser test, with the real
// rules engine and the real JobStore, times relative to now.
#include <chrono>
#include <cstdio>

#include "core/clock.h"
#include "tests/support/dashboard_archive.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s DATABASE FIXTURES_DIR PACK_DIR\n", argv[0]);
    return 2;
  }
  auto now = attrib::wall_clock_us();
  auto written = attrib::test::write_archive(argv[1], argv[2], argv[3], attrib::test::known_jobs(now));
  if (!written) {
    std::fprintf(stderr, "%s: %s %s\n", argv[0], written.error().code.c_str(), written.error().message.c_str());
    return 1;
  }
  return 0;
}
