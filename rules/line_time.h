// Line prefixes and their timestamps: the shapes raw log files carry (syslog, ISO 8601,
// dmesg seconds-since-boot, dmesg -T, dmesg --time-format=iso, Fabric Manager, slurmd,
// PyTorch/glog) and journald JSON export lines.
//
// Collectors hand the engine a payload (journald's MESSAGE); files captured by other
// means carry a prefix in front of it. parse_line_stamp() finds the prefix, converts its
// time to UTC microseconds and says where the payload starts, so extraction rules see
// the same text either way. A line whose prefix carries no usable time gets no time:
// its position in its stream is then its only order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/types.h"

namespace attrib::rules {

enum class StampFormat {
  None,           // no recognised prefix: the whole line is the payload
  Syslog,         // "Nov 30 10:03:12 host ident[pid]: " (optionally followed by a dmesg stamp)
  Iso,            // "2026-11-30T10:03:12.123456+00:00 " (',' or '.' fraction, zone optional)
  SlurmIso,       // "[2020-12-14T09:43:55.500] " slurmd/slurmctld log
  DmesgUptime,    // "[ 1234.567890] " seconds since boot
  DmesgCtime,     // "[Fri Aug 30 11:43:09 2024] " dmesg -T
  DmesgIso,       // "kern  :err   : 2025-01-25T10:34:54,859532+00:00 " dmesg --decode --time-format=iso
  FabricManager,  // "[Jul 23 2024 07:53:55] " Fabric Manager log
  Glog,           // "[rank3]:[E1130 10:07:08.408271257 file:line] " or "E0801 13:23:20.000000 pid file:line] "
};
const char* to_string(StampFormat format);

// What the caller knows about time in this log: a reference instant (the job window) to
// give year-less stamps a year, and the offset of the nodes' local clock from UTC.
struct TimeContext {
  std::optional<TimeUs> reference;  // year-less stamps take the year that puts them nearest to it
  int64_t utc_offset_s = 0;         // local time = UTC + offset; stamps with a zone ignore it
};

struct LineStamp {
  StampFormat format = StampFormat::None;
  std::optional<TimeUs> time;    // wall clock in UTC, when the prefix carries one (and a year is known)
  std::optional<TimeUs> uptime;  // dmesg seconds since boot, in microseconds
  size_t payload_offset = 0;     // the payload is line.substr(payload_offset)
  bool year_missing = false;     // a year-less stamp seen without a reference: time left empty
};

// Recognises the prefix of one raw line. system_log: the line comes from a system log
// (kernel, syslog, fabricmanager), where a "host ident[pid]: " header after an ISO stamp
// is rsyslog's and is stripped; in application output it is kept as text.
// PyTorch/glog prefixes give a time but stay in the payload: rules read the rank from them,
// and journald hands application output to the engine unstripped.
LineStamp parse_line_stamp(std::string_view line, const TimeContext& context, bool system_log);

// One `journalctl -o json` line, the fields the engine uses.
struct JournalEntry {
  std::string message;  // MESSAGE (a byte array is decoded; null/absent -> "")
  bool has_message = false;
  std::optional<TimeUs> realtime;         // __REALTIME_TIMESTAMP
  std::optional<TimeUs> monotonic;        // __MONOTONIC_TIMESTAMP (time since boot)
  std::optional<std::string> hostname;    // _HOSTNAME
  std::optional<std::string> transport;   // _TRANSPORT (kernel, syslog, journal, stdout)
  std::optional<std::string> uid;         // _UID (trust: root-written entries only)
  std::optional<std::string> identifier;  // SYSLOG_IDENTIFIER
  std::optional<uint64_t> seq;            // ATTRIB_SEQ: stream position kept by attrib's bundle export
  uint64_t count = 1;                     // ATTRIB_COUNT: the line occurred this many times (export of folded events)
};

// Parses one JSON export line. Error code BUNDLE_E_JSON with what is wrong.
Result<JournalEntry> parse_journal_json(std::string_view line);

// Civil UTC date/time to microseconds since the epoch (proleptic Gregorian).
TimeUs civil_to_us(int year, int month, int day, int hour, int minute, int second, int64_t micros);

}  // namespace attrib::rules
