// The kmsg collector's record parser ("prio,seq,usec,flags;message", \xNN escapes,
// continuation lines), reached through its one entry point, KmsgCollector::collect: the
// input is the file it reads (an in-memory file standing in for /dev/kmsg or a copy of it).
#include "collectors/kmsg_collector.h"
#include "fuzz/fuzz_support.h"

namespace attrib::fuzz {

int kmsg(const uint8_t* data, size_t size) {
  static MemFile* file = new MemFile("kmsg");  // kept for the process: one memfd, reused
  file->write(as_text(data, size));
  constexpr TimeUs kBootSeconds = 1796032000;  // 2026-11-30T09:46:40Z
  collectors::KmsgCollector collector({file->path(), std::to_string(kBootSeconds)});
  collectors::CollectRequest request;
  request.job_id = "4242";
  request.node = "gpu017";
  request.window_start = kBootSeconds * 1000000;
  request.window_end = request.window_start + 7LL * 86400 * 1000000;
  size_t lines = 0;
  auto coverage = collector.collect(request, [&](const LogLine& line) {
    require(line.source == "kernel" && line.trusted, "a kmsg line that is not trusted kernel evidence");
    require(line.time && *line.time >= request.window_start && *line.time <= request.window_end,
            "a kmsg line outside the window");
    ++lines;
  });
  require(coverage.size() == 1 && coverage[0].lines == lines, "kmsg coverage does not count the lines sent");
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(kmsg)
