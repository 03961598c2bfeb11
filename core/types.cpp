// Plain-data helpers for the core types: coverage status names and UTC time text
// (core/calendar.h does the arithmetic, so formatting never depends on TZ or locale).
#include "core/types.h"

#include <cctype>
#include <cstdio>

#include "core/calendar.h"

namespace attrib {

const char* to_string(CoverageStatus status) {
  switch (status) {
    case CoverageStatus::Ok:
      return "ok";
    case CoverageStatus::Empty:
      return "empty";
    case CoverageStatus::Partial:
      return "partial";
    case CoverageStatus::Failed:
      return "failed";
    case CoverageStatus::Timeout:
      return "timeout";
    case CoverageStatus::Unavailable:
      return "unavailable";
    case CoverageStatus::NotConfigured:
      return "not_configured";
    case CoverageStatus::Refused:
      return "refused";
  }
  return "not_configured";
}

std::optional<CoverageStatus> coverage_status_from(const std::string& text) {
  for (auto s : {CoverageStatus::Ok, CoverageStatus::Empty, CoverageStatus::Partial, CoverageStatus::Failed,
                 CoverageStatus::Timeout, CoverageStatus::Unavailable, CoverageStatus::NotConfigured,
                 CoverageStatus::Refused})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kSecondsPerDay = 86'400;

bool read_digits(const std::string& s, size_t& pos, size_t count, int& out) {
  if (pos + count > s.size()) return false;
  int value = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = s[pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    value = value * 10 + (c - '0');
  }
  pos += count;
  out = value;
  return true;
}

bool expect(const std::string& s, size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

}  // namespace

std::string format_time(TimeUs t) {
  const int64_t seconds = floor_div(t, kMicrosPerSecond);
  const int64_t micros = t - seconds * kMicrosPerSecond;
  const int64_t days = floor_div(seconds, kSecondsPerDay);
  const int64_t second_of_day = seconds - days * kSecondsPerDay;
  int64_t year = 0;
  unsigned month = 0, day = 0;
  civil_from_days(days, year, month, day);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04lld-%02u-%02uT%02d:%02d:%02d.%06lldZ", static_cast<long long>(year), month,
                day, static_cast<int>(second_of_day / 3600), static_cast<int>(second_of_day / 60 % 60),
                static_cast<int>(second_of_day % 60), static_cast<long long>(micros));
  return buffer;
}

// Accepts YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM). The fraction may use '.'
// or ',' (dmesg --time-format=iso prints a comma) and is truncated to microseconds.
// A zone designator is required: a time without one is ambiguous (local time?).
std::optional<TimeUs> parse_iso_time(const std::string& text) {
  size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!read_digits(text, pos, 4, year) || !expect(text, pos, '-') || !read_digits(text, pos, 2, month) ||
      !expect(text, pos, '-') || !read_digits(text, pos, 2, day) || !expect(text, pos, 'T') ||
      !read_digits(text, pos, 2, hour) || !expect(text, pos, ':') || !read_digits(text, pos, 2, minute) ||
      !expect(text, pos, ':') || !read_digits(text, pos, 2, second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 ||
      static_cast<unsigned>(day) > days_in_month(year, static_cast<unsigned>(month)) || hour > 23 || minute > 59 ||
      second > 60) {
    return std::nullopt;
  }
  int64_t micros = 0;
  if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
    ++pos;
    int digits = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      if (digits < 6) micros = micros * 10 + (text[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (int i = digits; i < 6; ++i) micros *= 10;
  }
  int64_t offset_seconds = 0;
  if (pos >= text.size()) return std::nullopt;
  if (text[pos] == 'Z') {
    ++pos;
  } else if (text[pos] == '+' || text[pos] == '-') {
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int off_h = 0, off_m = 0;
    if (!read_digits(text, pos, 2, off_h)) return std::nullopt;
    expect(text, pos, ':');  // "+01:00" and "+0100" are both ISO 8601
    if (!read_digits(text, pos, 2, off_m)) return std::nullopt;
    if (off_h > 23 || off_m > 59) return std::nullopt;
    offset_seconds = sign * (off_h * 3600 + off_m * 60);
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  const int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const int64_t seconds = days * kSecondsPerDay + hour * 3600 + minute * 60 + second - offset_seconds;
  return seconds * kMicrosPerSecond + micros;
}

}  // namespace attrib
