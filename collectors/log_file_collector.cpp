#include "collectors/log_file_collector.h"

#include <sys/stat.h>

#include <cctype>
#include <optional>
#include <string_view>

#include "collectors/coverage_report.h"
#include "collectors/rotated_files.h"
#include "collectors/run_builder.h"
#include "collectors/source_files.h"
#include "core/calendar.h"

namespace attrib::collectors {
namespace {

constexpr int kMaxOffsetMinutes = 24 * 60;
// Debian's first uid of an ordinary user (UID_MIN): below it, system accounts.
constexpr uid_t kFirstUserUid = 1000;

bool digits(std::string_view text, size_t& pos, size_t count, int& out) {
  out = 0;
  for (size_t i = 0; i < count; ++i, ++pos) {
    if (pos >= text.size() || !std::isdigit(static_cast<unsigned char>(text[pos]))) return false;
    out = out * 10 + (text[pos] - '0');
  }
  return true;
}

bool expect(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

// "2024-04-05T21:29:39[.123456][Z|+02:00|+0200]" at pos: UTC, with the zone when there
// is one, else at utc_offset_minutes. pos ends after the stamp.
std::optional<TimeUs> parse_iso_stamp(std::string_view text, size_t& pos, int utc_offset_minutes) {
  CivilTime c;
  if (!digits(text, pos, 4, c.year) || !expect(text, pos, '-') || !digits(text, pos, 2, c.month) ||
      !expect(text, pos, '-') || !digits(text, pos, 2, c.day) || !expect(text, pos, 'T') ||
      !digits(text, pos, 2, c.hour) || !expect(text, pos, ':') || !digits(text, pos, 2, c.minute) ||
      !expect(text, pos, ':') || !digits(text, pos, 2, c.second))
    return std::nullopt;
  if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
    ++pos;
    int scale = 100000;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      c.micros += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  int offset = utc_offset_minutes;
  if (pos < text.size() && text[pos] == 'Z') {
    offset = 0;
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int hours = 0, minutes = 0;
    if (!digits(text, pos, 2, hours)) return std::nullopt;
    if (pos < text.size() && text[pos] == ':') ++pos;
    if (!digits(text, pos, 2, minutes)) return std::nullopt;
    offset = sign * (hours * 60 + minutes);
  }
  return civil_to_utc(c, offset);
}

struct Parsed {
  std::optional<TimeUs> time;
  std::string host;  // syslog only
  std::string tag;   // syslog only: the ident, without "[pid]"
  std::string_view message;
};

// "Apr  5 21:29:39 host tag[pid]: message" or "2024-04-05T21:29:39.123+02:00 host tag: message".
std::optional<Parsed> parse_syslog(std::string_view line, int utc_offset_minutes, TimeUs reference) {
  Parsed p;
  size_t pos = 0;
  if (line.size() > 4 && std::isdigit(static_cast<unsigned char>(line[0]))) {
    p.time = parse_iso_stamp(line, pos, utc_offset_minutes);
    if (!p.time) return std::nullopt;
  } else {
    CivilTime c;
    c.month = month_from_abbrev(line.substr(0, 3));
    if (c.month == 0 || line.size() < 16) return std::nullopt;
    pos = 3;
    if (!expect(line, pos, ' ')) return std::nullopt;
    if (line[pos] == ' ') ++pos;
    if (!digits(line, pos, line[pos + 1] == ' ' ? 1 : 2, c.day) || !expect(line, pos, ' ') ||
        !digits(line, pos, 2, c.hour) || !expect(line, pos, ':') || !digits(line, pos, 2, c.minute) ||
        !expect(line, pos, ':') || !digits(line, pos, 2, c.second))
      return std::nullopt;
    p.time = civil_to_utc_near(c, utc_offset_minutes, reference);
  }
  if (!expect(line, pos, ' ')) return std::nullopt;
  const size_t host_end = line.find(' ', pos);
  if (host_end == std::string_view::npos) return std::nullopt;
  p.host = std::string(line.substr(pos, host_end - pos));
  pos = host_end + 1;
  // The tag ends at ": " ("tag[pid]: msg", "tag: msg"); a line without one is all message.
  const size_t colon = line.find(": ", pos);
  const size_t space = line.find(' ', pos);
  if (colon != std::string_view::npos && (space == std::string_view::npos || colon < space)) {
    std::string_view tag = line.substr(pos, colon - pos);
    if (const size_t bracket = tag.find('['); bracket != std::string_view::npos) tag = tag.substr(0, bracket);
    p.tag = std::string(tag);
    p.message = line.substr(colon + 2);
  } else {
    p.message = line.substr(pos);
  }
  return p;
}

// "[2024-04-05T21:29:39.123] message" (Slurm's default LogTimeFormat, node-local time, or
// with a zone); "[2024-04-05T21:29:39.123] [4242.0] error: ..." keeps the step prefix.
std::optional<Parsed> parse_slurm(std::string_view line, int utc_offset_minutes) {
  Parsed p;
  size_t pos = 0;
  if (!expect(line, pos, '[')) return std::nullopt;
  p.time = parse_iso_stamp(line, pos, utc_offset_minutes);
  if (!p.time || !expect(line, pos, ']')) return std::nullopt;
  if (pos < line.size() && line[pos] == ' ') ++pos;
  p.message = line.substr(pos);
  return p;
}

// A kernel message as rsyslog's imklog may keep it: "[ 1234.567890] NVRM: ..." -> "NVRM: ...".
std::string_view strip_dmesg_stamp(std::string_view message) {
  if (message.empty() || message[0] != '[') return message;
  const size_t close = message.find("] ");
  if (close == std::string_view::npos) return message;
  const std::string_view inside = message.substr(1, close - 1);
  if (inside.find_first_not_of(" 0123456789.") != std::string_view::npos || inside.find('.') == std::string_view::npos)
    return message;
  return message.substr(close + 2);
}

bool same_host(const std::string& host, const std::string& node) {
  if (host == node) return true;
  const size_t dot = host.find('.');
  return dot != std::string::npos && host.compare(0, dot, node) == 0 && dot == node.size();
}

// Trusted by its file: root or a system account owns it, and no one else may write it.
bool written_by_the_system(const std::string& path, std::string& why_not) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    why_not = path + " cannot be inspected";
    return false;
  }
  if (st.st_uid >= kFirstUserUid) {
    why_not = path + " is owned by uid " + std::to_string(st.st_uid) + ", an ordinary user";
    return false;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    why_not = path + " is writable by others than its owner";
    return false;
  }
  return true;
}

OptionProblem trust_problem(const std::string& trust) {
  if (trust == "auto" || trust == "file" || trust == "none") return std::nullopt;
  return Error{kConfigValue, "must be auto, file or none"};
}

// The options both kinds share, with each kind's own default and words.
Option<LogFileOptions> path_option(const char* fallback, const char* doc) {
  return option("path", &LogFileOptions::path, fallback, doc, {},
                [](const std::string& path) { return path_template_problem(path, {"node"}); });
}
Option<LogFileOptions> timezone_option(const char* doc) {
  return option("timezone_offset_minutes", &LogFileOptions::timezone_offset_minutes, "0", doc,
                between(-kMaxOffsetMinutes, kMaxOffsetMinutes));
}
Option<LogFileOptions> rotations_option() {
  return option("rotations", &LogFileOptions::rotations, "4",
                "Rotated generations read at most (the newest); those last written before the window are skipped.",
                between(0, 100));
}

}  // namespace

std::string unescape_rsyslog(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto octal = [&](size_t k) { return text[k] >= '0' && text[k] <= '7'; };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '#' && i + 3 < text.size() && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      const int value = (text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 + (text[i + 3] - '0');
      if (value < 32 || value == 127) {
        out += static_cast<char>(value);
        i += 3;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

const OptionTable<LogFileOptions>& LogFileCollector::syslog_option_table() {
  static const OptionTable<LogFileOptions> table = {
      path_option("/var/log/messages",
                  "rsyslog's file (/var/log/messages on RHEL, /var/log/syslog or kern.log on Debian). Its rotated "
                  "generations (<path>.1, <path>.N.gz, <path>-YYYYMMDD[.gz]) are read first. May contain {node} (the "
                  "Slurm node name) for a head reading a log server's per-host files."),
      timezone_option("The node's UTC offset in minutes (east positive) for stamps without a zone (rsyslog's "
                      "traditional format writes local time without one)."),
      rotations_option(),
      option("match_hostname", &LogFileOptions::match_hostname, "true",
             "Keep only lines whose host field is the node (or its short name): a file many hosts log into."),
      option("trust", &LogFileOptions::trust, "auto",
             "Whose word the lines are. `auto` and `none`: untrusted, since any local user can write into a syslog "
             "file with logger(1), so a hardware rule never acts on them alone. `file`: trusted when root or a "
             "system account owns the file and no one else may write it; set it only for a file that trusted "
             "writers alone feed (e.g. kern.log written from imklog).",
             {}, trust_problem),
  };
  return table;
}

const OptionTable<LogFileOptions>& LogFileCollector::slurm_option_table() {
  static const OptionTable<LogFileOptions> table = {
      path_option("/var/log/slurm/slurmd.log",
                  "Slurm's LogFile on the node (slurmd.log, with slurmstepd's lines), or slurmctld.log on the "
                  "controller. Rotated generations are read first. May contain {node}."),
      timezone_option("The node's UTC offset in minutes for Slurm's stamps without a zone (LogTimeFormat "
                      "iso8601_ms, the default, writes local time)."),
      rotations_option(),
      option("trust", &LogFileOptions::trust, "auto",
             "`auto` and `file`: the lines are trusted when root or a system account (SlurmUser) owns the file and "
             "no one else may write it; the detail of the coverage row says why not otherwise. `none`: untrusted.",
             {}, trust_problem),
  };
  return table;
}

Result<std::unique_ptr<Collector>> LogFileCollector::create_syslog(const YAML::Node& options) {
  auto parsed = read_collector_options(kSyslogName, syslog_option_table(), options);
  if (!parsed) return parsed.error();
  return std::unique_ptr<Collector>(std::make_unique<LogFileCollector>(Format::Syslog, std::move(*parsed)));
}

Result<std::unique_ptr<Collector>> LogFileCollector::create_slurm(const YAML::Node& options) {
  auto parsed = read_collector_options(kSlurmName, slurm_option_table(), options);
  if (!parsed) return parsed.error();
  parsed->match_hostname = false;  // Slurm's lines name no host
  return std::unique_ptr<Collector>(std::make_unique<LogFileCollector>(Format::Slurm, std::move(*parsed)));
}

LogFileCollector::LogFileCollector(Format format, LogFileOptions options)
    : format_(format), options_(std::move(options)) {}

std::vector<Coverage> LogFileCollector::collect(const CollectRequest& request, const LineSink& sink) {
  const bool syslog = format_ == Format::Syslog;
  CoverageReport report(request,
                        syslog ? std::vector<std::string>{"syslog", "kernel"} : std::vector<std::string>{"slurm"});
  auto path = expand_path_template(options_.path, {{"node", request.node}});
  if (!path) return report.finish(CoverageStatus::Failed, path.error().message);

  bool capped = false;  // older generations than `rotations` allows were left
  std::vector<LogGeneration> generations = log_generations(*path, options_.rotations, &capped);
  if (generations.empty()) return report.finish(CoverageStatus::Unavailable, *path + " does not exist");
  // A generation last written before the window holds none of its lines.
  std::erase_if(generations, [&](const LogGeneration& g) { return g.modified < request.window_start; });
  if (generations.empty()) return report.finish(std::nullopt, *path + " was last written before the window");

  const bool check_file = options_.trust == "file" || (options_.trust == "auto" && !syslog);
  std::vector<std::string> notes, problems;
  uint64_t unstamped = 0, other_hosts = 0;
  bool truncated = false;
  std::optional<TimeUs> earliest;
  static const std::string kSlurm = "slurm", kKernel = "kernel", kSyslog = "syslog";
  RunBuilder runs(report, sink);  // consecutive lines of one stream: one run
  for (const LogGeneration& generation : generations) {
    FileContent content = read_log_generation(generation, ReadLimits{});
    if (content.state != FileContent::State::Read) {
      problems.push_back(content.error.empty() ? generation.path + ": cannot read" : content.error);
      continue;
    }
    truncated = truncated || content.truncated;
    std::string why_untrusted;
    const bool trusted = check_file && written_by_the_system(generation.path, why_untrusted);
    if (check_file && !trusted) notes.push_back("untrusted: " + why_untrusted);
    for (const std::string& raw : split_lines(content.data)) {
      if (raw.empty()) continue;
      std::optional<Parsed> parsed = syslog ? parse_syslog(raw, options_.timezone_offset_minutes, generation.modified)
                                            : parse_slurm(raw, options_.timezone_offset_minutes);
      if (!parsed || !parsed->time) {
        ++unstamped;  // a continuation or a line of another shape: no time, no place in the window
        continue;
      }
      if (!earliest || *parsed->time < *earliest) earliest = parsed->time;
      if (*parsed->time < request.window_start || *parsed->time > request.window_end) continue;
      if (syslog && options_.match_hostname && !same_host(parsed->host, request.node)) {
        ++other_hosts;
        continue;
      }
      const std::string& source = !syslog ? kSlurm : parsed->tag == "kernel" ? kKernel : kSyslog;
      const std::string_view message = &source == &kKernel ? strip_dmesg_stamp(parsed->message) : parsed->message;
      if (syslog)
        runs.add_line(request.node, source, trusted, parsed->time, unescape_rsyslog(message));
      else
        runs.add_line(request.node, source, trusted, parsed->time, message);
    }
  }
  runs.finish();
  if (unstamped > 0) notes.push_back(std::to_string(unstamped) + " lines without a recognised stamp skipped");
  if (other_hosts > 0) notes.push_back(std::to_string(other_hosts) + " lines of other hosts in the window skipped");
  // Generations left out by `rotations` hold the window's start when the oldest read begins after it.
  if (capped && earliest && *earliest > request.window_start)
    problems.push_back("the oldest generation read begins at " + format_time(*earliest) +
                       ", after the window start; older ones are past `rotations`");
  if (truncated) problems.push_back("only the last part of a large generation was read");
  if (!problems.empty()) {
    problems.insert(problems.end(), notes.begin(), notes.end());
    return report.finish(CoverageStatus::Partial, join_notes(problems));
  }
  return report.finish(std::nullopt, join_notes(notes));
}

}  // namespace attrib::collectors
