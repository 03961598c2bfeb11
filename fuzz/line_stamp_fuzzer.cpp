// Line timestamps: rules/line_time.h parse_line_stamp, the prefix parser every raw line of
// a bundle, a syslog file or a node agent's file goes through, and core/types.h
// parse_iso_time (job.json's and the verdict's times). The input is one line; each call
// is made both as a system log and as application output, with and without a reference
// year, at a few UTC offsets.
#include <array>
#include <string>

#include "core/types.h"
#include "fuzz/fuzz_support.h"
#include "rules/line_time.h"

namespace attrib::fuzz {

int line_stamp(const uint8_t* data, size_t size) {
  const std::string_view line = as_text(data, size);
  // 2026-11-30T10:00:00Z, the start of the fixtures' jobs, and a New Year's Eve.
  static const std::array<std::optional<TimeUs>, 3> kReferences = {std::nullopt, 1796032800LL * 1000000,
                                                                   1798761599LL * 1000000};
  static const std::array<int64_t, 3> kOffsets = {0, 5 * 3600 + 1800, -12 * 3600};
  for (size_t i = 0; i < kReferences.size(); ++i) {
    rules::TimeContext context{kReferences[i], kOffsets[i]};
    for (bool system_log : {true, false}) {
      const rules::LineStamp stamp = rules::parse_line_stamp(line, context, system_log);
      require(stamp.payload_offset <= line.size(), "payload_offset past the end of the line");
      require(stamp.format != rules::StampFormat::None || (stamp.payload_offset == 0 && !stamp.time && !stamp.uptime),
              "a line without a recognised prefix has a time or a payload offset");
      require(!(stamp.year_missing && stamp.time), "year_missing with a time");
      require(!stamp.year_missing || !context.reference, "year_missing although a reference was given");
      (void)rules::to_string(stamp.format);
    }
  }
  (void)parse_iso_time(std::string(line));
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(line_stamp)
