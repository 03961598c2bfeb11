#include "core/calendar.h"

#include "core/types.h"

#include <array>
#include <cstdint>

namespace attrib {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kSecondsPerDay = 86'400;

// days_from_civil: attrib/rules/types.h.

int64_t year_from_days(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
}

bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int64_t y, int m) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return (m == 2 && is_leap(y)) ? 29 : kDays[static_cast<size_t>(m - 1)];
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

int month_from_abbrev(std::string_view name) {
  static constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                               "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (size_t i = 0; i < kMonths.size(); ++i) {
    if (kMonths[i] == name) return static_cast<int>(i) + 1;
  }
  return 0;
}

std::optional<TimeUs> civil_to_utc(const CivilTime& c, int utc_offset_minutes) {
  if (c.month < 1 || c.month > 12 || c.day < 1 || c.day > days_in_month(c.year, c.month) || c.hour < 0 ||
      c.hour > 23 || c.minute < 0 || c.minute > 59 || c.second < 0 || c.second > 60 || c.micros < 0 ||
      c.micros > 999'999) {
    return std::nullopt;
  }
  const int64_t days = days_from_civil(c.year, static_cast<unsigned>(c.month), static_cast<unsigned>(c.day));
  const int64_t seconds = days * kSecondsPerDay + c.hour * 3600 + c.minute * 60 + c.second -
                          static_cast<int64_t>(utc_offset_minutes) * 60;
  return seconds * kMicrosPerSecond + c.micros;
}

std::optional<TimeUs> civil_to_utc_near(CivilTime civil, int utc_offset_minutes, TimeUs reference) {
  const int reference_year = utc_year(reference);
  std::optional<TimeUs> best;
  for (int year = reference_year - 1; year <= reference_year + 1; ++year) {
    civil.year = year;
    const std::optional<TimeUs> t = civil_to_utc(civil, utc_offset_minutes);
    if (!t) continue;  // Feb 29 outside a leap year
    const auto distance = [&](TimeUs x) { return x > reference ? x - reference : reference - x; };
    if (!best || distance(*t) < distance(*best)) best = t;
  }
  return best;
}

int utc_year(TimeUs t) {
  return static_cast<int>(year_from_days(floor_div(floor_div(t, kMicrosPerSecond), kSecondsPerDay)));
}

}  // namespace attrib
