// Times as admins type them on the command line (attrib-show --since): a relative age
// ("7d", "24h", "30m", "90s", "2w") or an ISO 8601 date/time ("2026-11-30",
// "2026-11-30T10:00", "2026-11-30 10:00:00", "...Z" or "+01:00"; no zone means UTC).
#pragma once

#include <string>

#include "core/result.h"
#include "core/types.h"

namespace attrib::common {

// Microseconds since the epoch of `text`, relative ages counted back from now_us.
Result<TimeUs> parse_time_spec(const std::string& text, TimeUs now_us);

}  // namespace attrib::common
