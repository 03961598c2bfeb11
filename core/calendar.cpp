#include "core/calendar.h"

namespace attrib {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kSecondsPerDay = 86'400;

}  // namespace

int month_from_abbrev(std::string_view name) {
  for (size_t i = 0; i < kMonthAbbrevs.size(); ++i)
    if (kMonthAbbrevs[i] == name) return static_cast<int>(i) + 1;
  return 0;
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void civil_from_days(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

bool is_leap_year(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(int64_t y, unsigned m) {
  static constexpr std::array<unsigned, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return (m == 2 && is_leap_year(y)) ? 29 : kDays[m - 1];
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int utc_year(TimeUs t) {
  int64_t year = 0;
  unsigned month = 0, day = 0;
  civil_from_days(floor_div(floor_div(t, kMicrosPerSecond), kSecondsPerDay), year, month, day);
  return static_cast<int>(year);
}

std::optional<TimeUs> civil_to_utc(const CivilTime& c, int utc_offset_minutes) {
  if (c.month < 1 || c.month > 12 || c.day < 1 ||
      static_cast<unsigned>(c.day) > days_in_month(c.year, static_cast<unsigned>(c.month)) || c.hour < 0 ||
      c.hour > 23 || c.minute < 0 || c.minute > 59 || c.second < 0 || c.second > 60 || c.micros < 0 ||
      c.micros > 999'999) {
    return std::nullopt;
  }
  const int64_t days = days_from_civil(c.year, static_cast<unsigned>(c.month), static_cast<unsigned>(c.day));
  const int64_t seconds =
      days * kSecondsPerDay + c.hour * 3600 + c.minute * 60 + c.second - static_cast<int64_t>(utc_offset_minutes) * 60;
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

}  // namespace attrib
