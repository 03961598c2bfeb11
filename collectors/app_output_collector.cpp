#include "collectors/app_output_collector.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "collectors/coverage_report.h"
#include "collectors/run_builder.h"
#include "collectors/source_files.h"
#include "core/calendar.h"

namespace attrib::collectors {
namespace {

constexpr int kMaxOffsetMinutes = 24 * 60;
constexpr const char* kAppSource = "app";

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Reads 1..max_digits digits at pos; false when there are none.
bool read_number(std::string_view text, size_t& pos, size_t max_digits, int64_t& out) {
  const size_t start = pos;
  out = 0;
  while (pos < text.size() && pos - start < max_digits && is_digit(text[pos])) out = out * 10 + (text[pos++] - '0');
  return pos > start;
}

bool read_fixed(std::string_view text, size_t& pos, size_t digits, int& out) {
  if (pos + digits > text.size()) return false;
  int value = 0;
  for (size_t i = 0; i < digits; ++i) {
    if (!is_digit(text[pos + i])) return false;
    value = value * 10 + (text[pos + i] - '0');
  }
  pos += digits;
  out = value;
  return true;
}

bool expect(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

// "HH:MM:SS[.fraction]" (fraction of any length, truncated to µs).
bool read_clock(std::string_view text, size_t& pos, CivilTime& t) {
  if (!read_fixed(text, pos, 2, t.hour) || !expect(text, pos, ':') || !read_fixed(text, pos, 2, t.minute) ||
      !expect(text, pos, ':') || !read_fixed(text, pos, 2, t.second)) {
    return false;
  }
  t.micros = 0;
  if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
    ++pos;
    int digits = 0;
    while (pos < text.size() && is_digit(text[pos])) {
      if (digits < 6) t.micros = t.micros * 10 + (text[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return false;
    for (int i = digits; i < 6; ++i) t.micros *= 10;
  }
  return true;
}

// glog / c10 logging: "E0321 02:07:08.408271257 file:line]" (the month may be
// unpadded: "E321"), optionally inside '[': local time, no year.
std::optional<TimeUs> glog_time(std::string_view text, int offset_minutes, TimeUs reference) {
  size_t pos = 0;
  if (pos < text.size() && text[pos] == '[') ++pos;
  if (pos >= text.size() || std::string_view("IWEF").find(text[pos]) == std::string_view::npos) return std::nullopt;
  ++pos;
  const size_t digits_start = pos;
  int64_t mmdd = 0;
  if (!read_number(text, pos, 4, mmdd) || pos - digits_start < 3) return std::nullopt;
  if (!expect(text, pos, ' ')) return std::nullopt;
  CivilTime t;
  t.month = static_cast<int>(mmdd / 100);
  t.day = static_cast<int>(mmdd % 100);
  if (!read_clock(text, pos, t) || !expect(text, pos, ' ')) return std::nullopt;
  return civil_to_utc_near(t, offset_minutes, reference);
}

// ISO 8601 or Python logging: "2024-04-20T09:09:37", "2025-01-25 10:34:54,859",
// optionally inside '[' and with a zone (Z, +HH:MM, +HHMM); without one, node-local.
std::optional<TimeUs> iso_time(std::string_view text, int offset_minutes) {
  size_t pos = 0;
  if (pos < text.size() && text[pos] == '[') ++pos;
  CivilTime t;
  if (!read_fixed(text, pos, 4, t.year) || !expect(text, pos, '-') || !read_fixed(text, pos, 2, t.month) ||
      !expect(text, pos, '-') || !read_fixed(text, pos, 2, t.day)) {
    return std::nullopt;
  }
  if (pos >= text.size() || (text[pos] != 'T' && text[pos] != ' ')) return std::nullopt;
  ++pos;
  if (!read_clock(text, pos, t)) return std::nullopt;
  int offset = offset_minutes;
  if (pos < text.size() && text[pos] == 'Z') {
    offset = 0;
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos] == '-' ? -1 : 1;
    size_t p = pos + 1;
    int hours = 0, minutes = 0;
    if (read_fixed(text, p, 2, hours)) {
      expect(text, p, ':');
      if (read_fixed(text, p, 2, minutes) && hours <= 23 && minutes <= 59) {
        offset = sign * (hours * 60 + minutes);
        pos = p;
      }
    }
  }
  // The time must end the token: "2024-04-20T09:09:37abc" is not a timestamp prefix.
  if (pos < text.size() && text[pos] != ' ' && text[pos] != ']' && text[pos] != '\t') return std::nullopt;
  return civil_to_utc(t, offset);
}

}  // namespace

AppLinePrefix parse_app_line(const std::string& line, const std::map<int, std::string>& ranks,
                             int timezone_offset_minutes, TimeUs reference) {
  AppLinePrefix out;
  std::string_view text = line;

  // srun --label: "<task>: " with the task id right-aligned (leading spaces when the
  // step has 10 tasks or more). A bare "12: " could also be the program's own text,
  // so when the step layout is known the number must be one of its ranks.
  size_t pos = 0;
  while (pos < text.size() && text[pos] == ' ') ++pos;
  int64_t label = 0;
  if (read_number(text, pos, 7, label) && expect(text, pos, ':') && (pos == text.size() || text[pos] == ' ') &&
      (ranks.empty() || ranks.count(static_cast<int>(label)) > 0)) {
    if (pos < text.size()) ++pos;  // the single space srun writes after the colon
    out.rank = static_cast<int>(label);
    out.srun_label = true;
    text.remove_prefix(pos);
  }
  out.text = std::string(text);

  // PyTorch: "[rankN]:" (kept in the text: the rules read the rank from it too).
  std::string_view rest = text;
  if (rest.rfind("[rank", 0) == 0) {
    size_t p = 5;
    int64_t rank = 0;
    if (read_number(rest, p, 7, rank) && expect(rest, p, ']') && expect(rest, p, ':')) {
      // With both prefixes the srun label wins: it is the Slurm task id the step
      // layout maps to a node (under torchrun, [rankN] is a global rank instead).
      if (!out.rank) out.rank = static_cast<int>(rank);
      rest.remove_prefix(p);
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    }
  }
  out.time = glog_time(rest, timezone_offset_minutes, reference);
  if (!out.time) out.time = iso_time(rest, timezone_offset_minutes);
  return out;
}

const OptionTable<AppOutputOptions>& AppOutputCollector::option_table() {
  static const OptionTable<AppOutputOptions> table = {
      option("paths", &AppOutputOptions::paths, "[]",
             "Explicit path templates of the job's output files, with {job_id} and {node} (the node "
             "collected for), e.g. [/shared/slurm/{job_id}.out]. Globs are refused. Read in addition to the "
             "output paths the head passes with the request (from slurmctld or the SPANK step records).",
             {},
             [](const std::vector<std::string>& paths) -> OptionProblem {
               for (const std::string& path : paths)
                 if (auto problem = path_template_problem(path, {"job_id", "node"})) return problem;
               return std::nullopt;
             }),
      option("timezone_offset_minutes", &AppOutputOptions::timezone_offset_minutes, "0",
             "The nodes' UTC offset in minutes (east positive) for glog and ISO times without a zone.",
             between(-kMaxOffsetMinutes, kMaxOffsetMinutes)),
      option("max_bytes_per_file", &AppOutputOptions::max_bytes_per_file, "67108864",
             "Only the last this many bytes of each file are read (the failure is at the end); coverage "
             "is partial when a file was cut.",
             at_least(4096)),
      option("max_ranks", &AppOutputOptions::max_ranks, "4096",
             "When the step layout is unknown, a `[rankN]:` prefix with N below this starts a stream of its "
             "own (source app.rank<N>); other lines stay in `app`. With a known layout only its ranks do: "
             "a job's output cannot make more streams (coverage rows, verdict size) than it has tasks.",
             between(1, 1 << 20)),
  };
  return table;
}

Result<std::unique_ptr<Collector>> AppOutputCollector::create(const YAML::Node& options) {
  auto parsed = read_collector_options(kName, option_table(), options);
  if (!parsed) return parsed.error();
  return std::unique_ptr<Collector>(std::make_unique<AppOutputCollector>(std::move(*parsed)));
}

AppOutputCollector::AppOutputCollector(AppOutputOptions options) : options_(std::move(options)) {}

std::vector<Coverage> AppOutputCollector::collect(const CollectRequest& request, const LineSink& sink) {
  // The batch node's "app" row first, then each rank's stream in first-seen order.
  CoverageReport coverage(request, {kAppSource});
  auto report = [&](std::optional<CoverageStatus> status, const std::string& detail) {
    std::vector<Coverage> rows = coverage.finish(status, detail);
    for (size_t i = 1; i < rows.size(); ++i)
      rows[i].detail = join_notes({"read from the job's output on " + request.node, detail});
    return rows;
  };

  std::vector<std::string> paths;
  std::vector<std::string> notes;
  auto add_path = [&](const std::string& path) {
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  };
  for (const std::string& path : request.output_paths) {
    if (path.empty() || path[0] != '/') {
      notes.push_back("ignored output path '" + path + "' (not absolute)");
      continue;
    }
    add_path(path);
  }
  for (const std::string& path_template : options_.paths) {
    auto path = expand_path_template(path_template, {{"job_id", request.job_id}, {"node", request.node}});
    if (!path) {
      notes.push_back(path.error().message);
      continue;
    }
    add_path(*path);
  }
  if (paths.empty()) {
    notes.insert(notes.begin(), "no output paths known for job " + request.job_id);
    return report(CoverageStatus::Unavailable, join_notes(notes));
  }

  const TimeUs reference = request.window_start + (request.window_end - request.window_start) / 2;
  std::vector<std::string> missing;
  std::vector<std::string> errors;
  std::vector<std::string> refusals;
  std::vector<std::string> cut;
  size_t files_read = 0;
  RunBuilder runs(coverage, sink);  // consecutive lines of one rank (or of none): one run
  const std::string app_source = kAppSource;
  for (const std::string& path : paths) {
    // The job's user chose the path and wrote the file, and the daemon reads with more
    // rights than that user: only a regular file the job's user owns, reached without
    // any symbolic link, is read (never another user's output or a system file).
    const FileContent content = read_user_file(path, request.owner_uid, options_.max_bytes_per_file);
    if (content.state == FileContent::State::Missing) {
      missing.push_back(path);
      continue;
    }
    if (content.state == FileContent::State::Refused) {
      refusals.push_back(content.error);
      continue;
    }
    if (content.state == FileContent::State::Error) {
      errors.push_back(content.error);
      continue;
    }
    ++files_read;
    if (content.truncated) {
      cut.push_back("read the last " + std::to_string(options_.max_bytes_per_file) + " bytes of " + path + " (" +
                    std::to_string(content.size) + " bytes)");
    }
    for (const std::string& raw : split_lines(content.data)) {
      if (raw.empty()) continue;
      AppLinePrefix parsed = parse_app_line(raw, request.ranks, options_.timezone_offset_minutes, reference);
      // Lines without a time cannot be placed; they are kept (the file is this
      // job's own output) and ordered by seq.
      if (parsed.time && (*parsed.time < request.window_start || *parsed.time > request.window_end)) continue;
      const bool rank_of_the_job = parsed.rank && (request.ranks.empty() ? *parsed.rank < options_.max_ranks
                                                                         : request.ranks.contains(*parsed.rank));
      if (!rank_of_the_job) {
        runs.add_line(request.node, app_source, /*trusted=*/false, parsed.time,
                      parsed.text);  // the job's user wrote it
        continue;
      }
      // A shared output file holds every rank's lines; each is attributed to the node its
      // rank ran on, when the step layout is known.
      auto mapped = request.ranks.find(*parsed.rank);
      const std::string& node =
          mapped != request.ranks.end() && !mapped->second.empty() ? mapped->second : request.node;
      runs.add_line(node, "app.rank" + std::to_string(*parsed.rank), /*trusted=*/false, parsed.time, parsed.text);
    }
  }
  runs.finish();

  if (!missing.empty()) notes.push_back("not found: " + join_notes(missing));
  if (files_read == 0) {
    if (!errors.empty()) {
      errors.insert(errors.end(), refusals.begin(), refusals.end());
      errors.insert(errors.end(), notes.begin(), notes.end());
      return report(CoverageStatus::Failed, join_notes(errors));
    }
    if (!refusals.empty()) {
      refusals.insert(refusals.end(), notes.begin(), notes.end());
      return report(CoverageStatus::Refused, join_notes(refusals));
    }
    return report(CoverageStatus::Unavailable, join_notes(notes));
  }
  if (!errors.empty() || !refusals.empty() || !cut.empty()) {
    std::vector<std::string> partial = errors;
    partial.insert(partial.end(), refusals.begin(), refusals.end());
    partial.insert(partial.end(), cut.begin(), cut.end());
    partial.insert(partial.end(), notes.begin(), notes.end());
    return report(CoverageStatus::Partial, join_notes(partial));
  }
  return report(std::nullopt, join_notes(notes));
}

}  // namespace attrib::collectors
