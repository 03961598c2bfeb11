// The Fabric Manager log collector's line parser ("[Jul 23 2024 07:53:55] payload",
// continuation lines, entry limits), through FabricManagerCollector::collect: the input is
// the log file it reads (an in-memory file; its rotated ".1" does not exist).
#include "collectors/fabricmanager_collector.h"
#include "fuzz/fuzz_support.h"

namespace attrib::fuzz {

int fabricmanager(const uint8_t* data, size_t size) {
  static MemFile* file = new MemFile("fabricmanager");
  file->write(as_text(data, size));
  collectors::CollectRequest request;
  request.job_id = "4242";
  request.node = "gpu021";
  request.window_start = 1796032800LL * 1000000;  // 2026-11-30T10:00:00Z
  request.window_end = request.window_start + 3600LL * 1000000;
  for (int offset_minutes : {0, 330, -720}) {
    collectors::FabricManagerCollector collector({file->path(), offset_minutes});
    size_t lines = 0;
    auto coverage = collector.collect(request, [&](const LogLine& line) {
      require(line.source == "fabricmanager" && line.trusted, "a Fabric Manager line that is not trusted");
      require(line.time && *line.time >= request.window_start && *line.time <= request.window_end,
              "a Fabric Manager entry outside the window");
      ++lines;
    });
    require(coverage.size() == 1 && coverage[0].lines == lines, "coverage does not count the entries sent");
  }
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(fabricmanager)
