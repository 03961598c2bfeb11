// attrib-dashboard-fixture DATABASE FIXTURES_DIR PACK_DIR: writes the dashboard tests'
// known archive (tests/support/dashboard_archive.h) for the browser test, with the real
// rules engine and the real JobStore, times relative to now.
#include <chrono>
#include <cstdio>

#include "attributiond/store/archive_queries.h"
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
  // One template as attrib-rules mine --save stores it (a fixture line, not a field one).
  auto db = attrib::store::Database::open(argv[1]);
  attrib::store::MinedTemplateRow row{1, now, "widget controller <NUM> stopped responding", 2, 1, 2, 2, 0,
                                      {"5003 run 0", "5004 run 0"}, "widget controller 7 stopped responding", ""};
  if (!db || !attrib::store::save_mined_templates(*db, {row})) {
    std::fprintf(stderr, "%s: cannot save the mined template\n", argv[0]);
    return 1;
  }
  return 0;
}
