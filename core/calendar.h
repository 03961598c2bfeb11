// The one calendar every timestamp parser and formatter shares: proleptic Gregorian
// arithmetic on days since 1970-01-01 (Howard Hinnant's public-domain algorithms), the
// English month and weekday abbreviations logs print, and civil times read at a UTC
// offset. Done by hand so parsing never depends on the daemon's TZ or locale.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/types.h"

namespace attrib {

inline constexpr std::array<std::string_view, 12> kMonthAbbrevs = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
inline constexpr std::array<std::string_view, 7> kWeekdayAbbrevs = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};

// 1..12 for "Jan".."Dec" (case-sensitive, as the logs print them), else 0.
int month_from_abbrev(std::string_view name);

// Days since 1970-01-01 of a date, and back.
int64_t days_from_civil(int64_t year, unsigned month, unsigned day);
void civil_from_days(int64_t days, int64_t& year, unsigned& month, unsigned& day);

bool is_leap_year(int64_t year);
unsigned days_in_month(int64_t year, unsigned month);  // month 1..12

// a / b rounded towards negative infinity (times before 1970 stay on the right day).
int64_t floor_div(int64_t a, int64_t b);

// The UTC year of `t`.
int utc_year(TimeUs t);

// A wall-clock reading as a log prints it, without a zone.
struct CivilTime {
  int year = 1970;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
  int hour = 0;
  int minute = 0;
  int second = 0;  // 0..60
  int micros = 0;
};

// UTC microseconds of `civil` read as local time at `utc_offset_minutes` east of UTC;
// nullopt when the date does not exist (Feb 30, month 13, ...).
std::optional<TimeUs> civil_to_utc(const CivilTime& civil, int utc_offset_minutes);

// For formats without a year (glog "E0321 02:07:08", syslog "Nov 30 10:03:12"): the year
// that puts the time closest to `reference` (e.g. the window start), so a job around New
// Year works.
std::optional<TimeUs> civil_to_utc_near(CivilTime civil, int utc_offset_minutes, TimeUs reference);

}  // namespace attrib
