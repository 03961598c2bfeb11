// Line prefixes -> (time, payload). Hand-written scanners rather than regexes: this runs on
// every line of a bundle (storms of a million lines) before any rule does, and each shape
// is fixed-width enough that a cursor is simpler to get exactly right than a pattern.
#include "rules/line_time.h"

#include <array>
#include <cctype>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "core/calendar.h"
#include "core/types.h"

namespace attrib::rules {
namespace {

constexpr int64_t kSecondUs = 1000000;

// A read cursor over the line; every matcher either advances it or leaves the line alone.
struct Cursor {
  std::string_view s;
  size_t i = 0;

  bool done() const { return i >= s.size(); }
  char peek(size_t ahead = 0) const { return i + ahead < s.size() ? s[i + ahead] : '\0'; }
  bool lit(char c) {
    if (peek() != c) return false;
    ++i;
    return true;
  }
  bool lit(std::string_view text) {
    if (s.substr(i, text.size()) != text) return false;
    i += text.size();
    return true;
  }
  // Exactly n digits.
  bool digits(size_t n, int& out) {
    int value = 0;
    for (size_t k = 0; k < n; ++k) {
      const char c = peek(k);
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    i += n;
    out = value;
    return true;
  }
  // 1..max digits.
  bool some_digits(size_t max, int64_t& out) {
    size_t n = 0;
    int64_t value = 0;
    while (n < max && peek(n) >= '0' && peek(n) <= '9') value = value * 10 + (peek(n++) - '0');
    if (n == 0) return false;
    i += n;
    out = value;
    return true;
  }
  size_t spaces() {
    size_t n = 0;
    while (peek() == ' ') ++i, ++n;
    return n;
  }
  // A run of non-space characters.
  std::string_view token() {
    const size_t start = i;
    while (!done() && peek() != ' ' && peek() != '\t') ++i;
    return s.substr(start, i - start);
  }
};

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool month(Cursor& c, int& out) {
  if (c.i + 3 > c.s.size()) return false;
  out = month_from_abbrev(c.s.substr(c.i, 3));
  if (out == 0) return false;
  c.i += 3;
  return true;
}

bool weekday(Cursor& c) {
  for (auto d : kWeekdayAbbrevs)
    if (c.lit(d)) return true;
  return false;
}

struct Clock {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int64_t micros = 0;
  std::optional<int64_t> zone_s;  // offset east of UTC when the stamp names one
};

bool valid(const Clock& k) {
  return k.month >= 1 && k.month <= 12 && k.day >= 1 && k.day <= 31 && k.hour <= 23 && k.minute <= 59 && k.second <= 60;
}

// "HH:MM:SS"
bool hms(Cursor& c, Clock& k) {
  return c.digits(2, k.hour) && c.lit(':') && c.digits(2, k.minute) && c.lit(':') && c.digits(2, k.second);
}

// ".123456" or ",859532" (any number of digits; kept to microseconds).
void fraction(Cursor& c, Clock& k) {
  if (c.peek() != '.' && c.peek() != ',') return;
  if (c.peek(1) < '0' || c.peek(1) > '9') return;
  ++c.i;
  int64_t micros = 0;
  size_t n = 0;
  while (c.peek() >= '0' && c.peek() <= '9') {
    if (n < 6) micros = micros * 10 + (c.peek() - '0');
    ++n;
    ++c.i;
  }
  for (; n < 6; ++n) micros *= 10;
  k.micros = micros;
}

// "Z", "+00:00", "+0000", "-05:00"; nothing is fine (local time).
void zone(Cursor& c, Clock& k) {
  if (c.lit('Z')) {
    k.zone_s = 0;
    return;
  }
  if (c.peek() != '+' && c.peek() != '-') return;
  Cursor probe = c;
  const int sign = probe.peek() == '-' ? -1 : 1;
  ++probe.i;
  int hours = 0, minutes = 0;
  if (!probe.digits(2, hours)) return;
  probe.lit(':');
  if (!probe.digits(2, minutes)) return;
  c = probe;
  k.zone_s = sign * (hours * 3600 + minutes * 60);
}

// "YYYY-MM-DD[T ]HH:MM:SS[.frac][zone]"
bool iso(Cursor& c, Clock& k) {
  Cursor probe = c;
  if (!(probe.digits(4, k.year) && probe.lit('-') && probe.digits(2, k.month) && probe.lit('-') &&
        probe.digits(2, k.day)))
    return false;
  if (!probe.lit('T') && !probe.lit(' ')) return false;
  if (!hms(probe, k)) return false;
  fraction(probe, k);
  zone(probe, k);
  if (!valid(k)) return false;
  c = probe;
  return true;
}

TimeUs to_utc(const Clock& k, const TimeContext& context) {
  const int64_t offset = k.zone_s.value_or(context.utc_offset_s);
  return civil_to_us(k.year, k.month, k.day, k.hour, k.minute, k.second, k.micros) - offset * kSecondUs;
}

// Stamps without a year (syslog, glog) take the year that puts them nearest the reference:
// a job that starts on Dec 31 and logs "Jan  1 00:00:03" is in the next year.
std::optional<TimeUs> resolve_year(Clock k, const TimeContext& context) {
  if (!context.reference) return std::nullopt;
  const int base = utc_year(*context.reference);
  std::optional<TimeUs> best;
  for (int year : {base - 1, base, base + 1}) {
    k.year = year;
    const TimeUs t = to_utc(k, context);
    if (!best || std::llabs(t - *context.reference) < std::llabs(*best - *context.reference)) best = t;
  }
  return best;
}

// "[ 1234.567890]" -> microseconds since boot.
bool dmesg_uptime(Cursor& c, TimeUs& out) {
  Cursor probe = c;
  if (!probe.lit('[')) return false;
  probe.spaces();
  int64_t seconds = 0;
  if (!probe.some_digits(12, seconds) || !probe.lit('.')) return false;
  Clock k;
  --probe.i;  // fraction() expects to sit on the separator
  fraction(probe, k);
  if (!probe.lit(']')) return false;
  c = probe;
  out = seconds * kSecondUs + k.micros;
  return true;
}

// "Mon DD HH:MM:SS host ident[pid]: " -> advances past it; Clock without year.
bool syslog_header(Cursor& c, Clock& k) {
  Cursor probe = c;
  if (!month(probe, k.month) || probe.spaces() == 0) return false;
  int64_t day = 0;
  if (!probe.some_digits(2, day) || !probe.lit(' ')) return false;
  k.day = static_cast<int>(day);
  if (!hms(probe, k) || !probe.lit(' ')) return false;
  fraction(probe, k);                                          // some rsyslog templates add sub-second digits
  if (probe.token().empty() || !probe.lit(' ')) return false;  // host
  const size_t ident_start = probe.i;
  while (is_word(probe.peek()) || probe.peek() == '-' || probe.peek() == '.' || probe.peek() == '/') ++probe.i;
  if (probe.i == ident_start) return false;
  if (probe.lit('[')) {
    int64_t pid = 0;
    if (!probe.some_digits(10, pid) || !probe.lit(']')) return false;
  }
  if (!probe.lit(':')) return false;
  if (!probe.done() && !probe.lit(' ')) return false;
  if (k.year == 0) k.year = 1970;  // placeholder; the caller resolves the real year
  if (!valid(k)) return false;
  c = probe;
  return true;
}

// "host ident[pid]: " after an rsyslog ISO stamp.
bool host_ident(Cursor& c) {
  Cursor probe = c;
  if (probe.token().empty() || !probe.lit(' ')) return false;
  const size_t ident_start = probe.i;
  while (is_word(probe.peek()) || probe.peek() == '-' || probe.peek() == '.' || probe.peek() == '/') ++probe.i;
  if (probe.i == ident_start) return false;
  if (probe.lit('[')) {
    int64_t pid = 0;
    if (!probe.some_digits(10, pid) || !probe.lit(']')) return false;
  }
  if (!probe.lit(':') || !(probe.done() || probe.lit(' '))) return false;
  c = probe;
  return true;
}

// An optional dmesg stamp right after a syslog header ("kernel: [21584690.529862] ").
void nested_uptime(Cursor& c, LineStamp& out) {
  TimeUs up = 0;
  Cursor probe = c;
  if (dmesg_uptime(probe, up)) {
    probe.lit(' ');
    c = probe;
    out.uptime = up;
  }
}

// PyTorch's glog stamp "E1130 10:07:08.408271257" (level, MMDD, local time).
bool glog_stamp(Cursor& c, Clock& k) {
  Cursor probe = c;
  const char level = probe.peek();
  if (level != 'I' && level != 'W' && level != 'E' && level != 'F') return false;
  ++probe.i;
  if (!probe.digits(2, k.month) || !probe.digits(2, k.day) || !probe.lit(' ') || !hms(probe, k)) return false;
  fraction(probe, k);
  k.year = 1970;
  if (!valid(k)) return false;
  c = probe;
  return true;
}

void set_yearless(LineStamp& out, const Clock& k, const TimeContext& context) {
  out.time = resolve_year(k, context);
  out.year_missing = !out.time.has_value();
}

// A prefix recognised: its format, the wall clock it gave and where the payload starts.
LineStamp accepted(StampFormat format, const Clock& k, const TimeContext& context, size_t payload_offset) {
  LineStamp out;
  out.format = format;
  out.time = to_utc(k, context);
  out.payload_offset = payload_offset;
  return out;
}

}  // namespace

const char* to_string(StampFormat format) {
  switch (format) {
    case StampFormat::None:
      return "none";
    case StampFormat::Syslog:
      return "syslog";
    case StampFormat::Iso:
      return "iso8601";
    case StampFormat::SlurmIso:
      return "slurm";
    case StampFormat::DmesgUptime:
      return "dmesg";
    case StampFormat::DmesgCtime:
      return "dmesg-T";
    case StampFormat::DmesgIso:
      return "dmesg-iso";
    case StampFormat::FabricManager:
      return "fabricmanager";
    case StampFormat::Glog:
      return "glog";
  }
  return "none";
}

TimeUs civil_to_us(int year, int month, int day, int hour, int minute, int second, int64_t micros) {
  const int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return ((days * 86400) + hour * 3600 + minute * 60 + second) * kSecondUs + micros;
}

LineStamp parse_line_stamp(std::string_view line, const TimeContext& context, bool system_log) {
  LineStamp out;
  Cursor c{line, 0};
  Clock k;

  if (c.peek() == '[') {
    TimeUs up = 0;
    if (dmesg_uptime(c, up)) {
      c.lit(' ');
      out.format = StampFormat::DmesgUptime;
      out.uptime = up;
      out.payload_offset = c.i;
      return out;
    }
    // "[Fri Aug 30 11:43:09 2024] " (dmesg -T)
    Cursor probe = c;
    probe.lit('[');
    if (weekday(probe) && probe.lit(' ') && month(probe, k.month) && probe.spaces() > 0) {
      int64_t day = 0;
      if (probe.some_digits(2, day) && probe.lit(' ') && hms(probe, k) && probe.lit(' ') && probe.digits(4, k.year) &&
          probe.lit(']')) {
        k.day = static_cast<int>(day);
        if (valid(k)) {
          probe.lit(' ');
          return accepted(StampFormat::DmesgCtime, k, context, probe.i);
        }
      }
    }
    // "[Jul 23 2024 07:53:55] " (Fabric Manager)
    probe = c;
    k = Clock{};
    probe.lit('[');
    if (month(probe, k.month) && probe.lit(' ') && probe.digits(2, k.day) && probe.lit(' ') &&
        probe.digits(4, k.year) && probe.lit(' ') && hms(probe, k) && probe.lit(']') && valid(k)) {
      probe.lit(' ');
      return accepted(StampFormat::FabricManager, k, context, probe.i);
    }
    // "[2020-12-14T09:43:55.500] " (slurmd, slurmctld)
    probe = c;
    k = Clock{};
    probe.lit('[');
    if (iso(probe, k) && probe.lit(']')) {
      probe.lit(' ');
      return accepted(StampFormat::SlurmIso, k, context, probe.i);
    }
    // "[rank3]:[E1130 10:07:08.408271257 ProcessGroupNCCL.cpp:607] " (kept in the payload)
    probe = c;
    k = Clock{};
    int64_t rank = 0;
    if (probe.lit("[rank") && probe.some_digits(9, rank) && probe.lit("]:[") && glog_stamp(probe, k)) {
      out.format = StampFormat::Glog;
      set_yearless(out, k, context);
      return out;
    }
    return out;
  }

  // "kern  :err   : 2025-01-25T10:34:54,859532+00:00 " (dmesg --decode --time-format=iso)
  {
    Cursor probe = c;
    const size_t facility = probe.i;
    while (is_word(probe.peek())) ++probe.i;
    if (probe.i > facility) {
      probe.spaces();
      if (probe.lit(':')) {
        const size_t level = probe.i;
        while (is_word(probe.peek())) ++probe.i;
        if (probe.i > level) {
          probe.spaces();
          if (probe.lit(": ") && iso(probe, k) && (probe.done() || probe.lit(' ')))
            return accepted(StampFormat::DmesgIso, k, context, probe.i);
        }
      }
    }
    k = Clock{};
  }

  // "2026-11-30T10:03:12.123456+00:00 " (rsyslog RFC 3339, application loggers)
  {
    Cursor probe = c;
    if (iso(probe, k) && (probe.done() || probe.lit(' '))) {
      out = accepted(StampFormat::Iso, k, context, probe.i);
      if (system_log && host_ident(probe)) {
        nested_uptime(probe, out);
        out.payload_offset = probe.i;
      }
      return out;
    }
    k = Clock{};
  }

  // "Nov 30 10:03:12 gpu017 kernel: [ 1234.5] " (rsyslog traditional, journalctl short)
  {
    Cursor probe = c;
    if (syslog_header(probe, k)) {
      out.format = StampFormat::Syslog;
      set_yearless(out, k, context);
      nested_uptime(probe, out);
      out.payload_offset = probe.i;
      return out;
    }
    k = Clock{};
  }

  // "E0801 13:23:20.000000 32974 torch/distributed/...:874] " (glog, kept in the payload)
  {
    Cursor probe = c;
    int64_t thread = 0;
    if (glog_stamp(probe, k) && probe.spaces() > 0 && probe.some_digits(12, thread) && probe.lit(' ')) {
      out.format = StampFormat::Glog;
      set_yearless(out, k, context);
      return out;
    }
  }
  return out;
}

namespace {

std::optional<std::string> text_field(const nlohmann::json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_unsigned() || it->is_number_integer()) return it->dump();
  // journald exports non-UTF-8 or binary values as an array of byte values.
  if (it->is_array()) {
    std::string bytes;
    for (const auto& b : *it) {
      if (!b.is_number_unsigned() || b.get<uint64_t>() > 255) return std::nullopt;
      bytes += static_cast<char>(b.get<uint64_t>());
    }
    return bytes;
  }
  return std::nullopt;
}

std::optional<uint64_t> number_field(const nlohmann::json& j, const char* name, bool& bad) {
  auto text = text_field(j, name);
  if (!text) return std::nullopt;
  if (text->empty() || text->size() > 19 || text->find_first_not_of("0123456789") != std::string::npos) {
    bad = true;
    return std::nullopt;
  }
  return std::stoull(*text);
}

}  // namespace

Result<JournalEntry> parse_journal_json(std::string_view line) {
  nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded()) return Error{kBundleJson, "not a JSON object (journalctl -o json line expected)"};
  if (!j.is_object()) return Error{kBundleJson, "not a JSON object (journalctl -o json line expected)"};
  JournalEntry e;
  if (auto m = text_field(j, "MESSAGE")) {
    e.message = *m;
    e.has_message = true;
  }
  bool bad = false;
  const auto numeric = [&](const char* name) -> Result<std::optional<uint64_t>> {
    auto v = number_field(j, name, bad);
    if (bad) return Error{kBundleJson, std::string(name) + " is not a decimal number"};
    return v;
  };
  auto realtime = numeric("__REALTIME_TIMESTAMP");
  if (!realtime) return realtime.error();
  auto monotonic = numeric("__MONOTONIC_TIMESTAMP");
  if (!monotonic) return monotonic.error();
  auto seq = numeric("ATTRIB_SEQ");
  if (!seq) return seq.error();
  auto count = numeric("ATTRIB_COUNT");
  if (!count) return count.error();
  if (*realtime) e.realtime = static_cast<TimeUs>(**realtime);
  if (*monotonic) e.monotonic = static_cast<TimeUs>(**monotonic);
  e.seq = *seq;
  if (*count) {
    if (**count == 0) return Error{kBundleJson, "ATTRIB_COUNT must be at least 1"};
    e.count = **count;
  }
  e.hostname = text_field(j, "_HOSTNAME");
  e.transport = text_field(j, "_TRANSPORT");
  e.uid = text_field(j, "_UID");
  e.identifier = text_field(j, "SYSLOG_IDENTIFIER");
  return e;
}

}  // namespace attrib::rules
