// Calendar helpers for log timestamps that carry no zone (Fabric Manager, glog,
// Python logging): a node-local civil time plus a configured UTC offset.
// Done by hand so that parsing never depends on the daemon's TZ or locale.
#pragma once

#include <optional>
#include <string_view>

#include "core/types.h"

namespace attrib {

struct CivilTime {
  int year = 1970;
  int month = 1;   // 1..12
  int day = 1;     // 1..31
  int hour = 0;
  int minute = 0;
  int second = 0;  // 0..60
  int micros = 0;
};

// 1..12 for "Jan".."Dec" (English, case-sensitive as the logs print them), else 0.
int month_from_abbrev(std::string_view name);

// UTC microseconds of `civil` read as local time at `utc_offset_minutes` east of
// UTC; nullopt when the date does not exist (Feb 30, month 13, ...).
std::optional<TimeUs> civil_to_utc(const CivilTime& civil, int utc_offset_minutes);

// For formats without a year (glog "E0321 02:07:08"): the year that puts the time
// closest to `reference` (e.g. the window start), so a job around New Year works.
std::optional<TimeUs> civil_to_utc_near(CivilTime civil, int utc_offset_minutes, TimeUs reference);

// The UTC year of `t`.
int utc_year(TimeUs t);

}  // namespace attrib
