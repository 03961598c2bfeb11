#include "collectors/journald_collector.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>

#include <systemd/sd-journal.h>

#include "collectors/coverage_report.h"
#include "collectors/run_builder.h"

namespace attrib::collectors {
namespace {

constexpr std::string_view kFabricManagerIdentifier = "nv-fabricmanager";

struct JournalCloser {
  void operator()(sd_journal* journal) const { sd_journal_close(journal); }
};
using JournalHandle = std::unique_ptr<sd_journal, JournalCloser>;

std::string errno_text(int negative_errno) {
  return std::error_code(-negative_errno, std::generic_category()).message();
}

bool contains(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The value of FIELD in the current entry, or nullopt when the entry lacks it.
std::optional<std::string> field_value(sd_journal* journal, const char* field) {
  const void* data = nullptr;
  size_t length = 0;
  if (sd_journal_get_data(journal, field, &data, &length) < 0) return std::nullopt;
  std::string_view text(static_cast<const char*>(data), length);
  const size_t equals = text.find('=');
  if (equals == std::string_view::npos) return std::nullopt;
  return std::string(text.substr(equals + 1));
}

Status add_match(sd_journal* journal, const std::string& match) {
  const int r = sd_journal_add_match(journal, match.data(), match.size());
  if (r < 0) return Error{kCollectJournal, "sd_journal_add_match(" + match + "): " + errno_text(r)};
  return ok_status();
}

// Time of the earliest retained entry (of `host` when given); nullopt when there is none.
Result<std::optional<TimeUs>> earliest_entry(sd_journal* journal, const std::string* host) {
  sd_journal_flush_matches(journal);
  if (host != nullptr) {
    if (Status s = add_match(journal, "_HOSTNAME=" + *host); !s) return s.error();
  }
  int r = sd_journal_seek_head(journal);
  if (r >= 0) r = sd_journal_next(journal);
  if (r < 0) return Error{kCollectJournal, "reading the journal head: " + errno_text(r)};
  if (r == 0) return std::optional<TimeUs>();
  uint64_t usec = 0;
  r = sd_journal_get_realtime_usec(journal, &usec);
  if (r < 0) return Error{kCollectJournal, "reading the journal head: " + errno_text(r)};
  return std::optional<TimeUs>(static_cast<TimeUs>(usec));
}

struct Classified {
  std::string source;
  bool trusted = false;
};

}  // namespace

const OptionTable<JournaldOptions>& JournaldCollector::option_table() {
  static const OptionTable<JournaldOptions> table = {
      option("directory", &JournaldOptions::directory, "\"\"",
             "Journal directory to read (every *.journal file in it, e.g. a central "
             "systemd-journal-remote directory). Empty: the local system journal."),
      option("match_hostname", &JournaldOptions::match_hostname, "false",
             "true: keep only entries whose _HOSTNAME equals the Slurm node name (a directory "
             "holding many hosts). false: every entry belongs to the node (a node agent reading "
             "its own journal)."),
      option("identifiers", &JournaldOptions::identifiers, "[nv-fabricmanager, nvidia-persistenced]",
             "SYSLOG_IDENTIFIER values collected besides the kernel transport. nv-fabricmanager "
             "maps to source fabricmanager, the others to syslog; both are trusted only when "
             "_UID is 0."),
      option("app_identifiers", &JournaldOptions::app_identifiers, "[]",
             "SYSLOG_IDENTIFIER values whose entries are application output (source app, never "
             "trusted). Collected in addition to identifiers; an identifier in both lists counts "
             "as application output."),
  };
  return table;
}

Result<std::unique_ptr<Collector>> JournaldCollector::create(const YAML::Node& options) {
  auto parsed = read_collector_options(kName, option_table(), options);
  if (!parsed) return parsed.error();
  return std::unique_ptr<Collector>(std::make_unique<JournaldCollector>(std::move(*parsed)));
}

JournaldCollector::JournaldCollector(JournaldOptions options) : options_(std::move(options)) {}

std::vector<std::string> JournaldCollector::source_names() const {
  // One at a time, not from an initializer list: GCC 14 warns falsely (-Warray-bounds) on
  // push_back after an initializer-list construction.
  std::vector<std::string> sources;
  sources.reserve(4);
  sources.emplace_back("kernel");
  bool fabricmanager = false;
  bool syslog = false;
  for (const std::string& identifier : options_.identifiers) {
    if (contains(options_.app_identifiers, identifier)) continue;
    (identifier == kFabricManagerIdentifier ? fabricmanager : syslog) = true;
  }
  if (fabricmanager) sources.push_back("fabricmanager");
  if (syslog) sources.push_back("syslog");
  if (!options_.app_identifiers.empty()) sources.push_back("app");
  return sources;
}

std::vector<Coverage> JournaldCollector::collect(const CollectRequest& request, const LineSink& sink) {
  const std::vector<std::string> sources = source_names();
  // Every source shares the journal's fate: one status and detail for all of them,
  // line counts per source.
  CoverageReport coverage(request, sources);
  auto report = [&](std::optional<CoverageStatus> status, const std::string& detail) {
    return coverage.finish(status, detail);
  };

  const std::string where =
      options_.directory.empty() ? "the local system journal" : "journal directory " + options_.directory;

  sd_journal* raw = nullptr;
  int r = 0;
  if (options_.directory.empty()) {
    r = sd_journal_open(&raw, SD_JOURNAL_LOCAL_ONLY);
  } else {
    std::error_code ec;
    if (!std::filesystem::is_directory(options_.directory, ec)) {
      return report(CoverageStatus::Unavailable, where + " does not exist or is not a directory");
    }
    r = sd_journal_open_directory(&raw, options_.directory.c_str(), 0);
  }
  if (r < 0) return report(CoverageStatus::Failed, "cannot open " + where + ": " + errno_text(r));
  JournalHandle journal(raw);

  const std::string* host = options_.match_hostname ? &request.node : nullptr;
  auto earliest = earliest_entry(journal.get(), host);
  if (!earliest) return report(CoverageStatus::Failed, earliest.error().message);
  if (!earliest->has_value()) {
    return report(CoverageStatus::Unavailable,
                  where + " holds no entries" + (host ? " for host " + *host : std::string()));
  }
  std::string partial_reason;
  if (**earliest > request.window_start) {
    partial_reason = where + " begins at " + format_time(**earliest) + ", after the window start";
  }

  // (_TRANSPORT=kernel OR SYSLOG_IDENTIFIER=a OR ...) AND _HOSTNAME=node.
  // sd-journal ORs matches on the same field and ANDs different fields within one
  // term; add_disjunction / add_conjunction build the outer levels.
  sd_journal_flush_matches(journal.get());
  std::vector<std::string> wanted_identifiers = options_.identifiers;
  for (const std::string& identifier : options_.app_identifiers) {
    if (!contains(wanted_identifiers, identifier)) wanted_identifiers.push_back(identifier);
  }
  Status matched = add_match(journal.get(), "_TRANSPORT=kernel");
  if (matched && !wanted_identifiers.empty()) {
    r = sd_journal_add_disjunction(journal.get());
    if (r < 0) matched = Error{kCollectJournal, "sd_journal_add_disjunction: " + errno_text(r)};
    for (const std::string& identifier : wanted_identifiers) {
      if (matched) matched = add_match(journal.get(), "SYSLOG_IDENTIFIER=" + identifier);
    }
  }
  if (matched && host != nullptr) {
    r = sd_journal_add_conjunction(journal.get());
    if (r < 0) matched = Error{kCollectJournal, "sd_journal_add_conjunction: " + errno_text(r)};
    if (matched) matched = add_match(journal.get(), "_HOSTNAME=" + *host);
  }
  if (!matched) return report(CoverageStatus::Failed, matched.error().message);

  r = sd_journal_seek_realtime_usec(journal.get(), static_cast<uint64_t>(std::max<TimeUs>(0, request.window_start)));
  if (r < 0) return report(CoverageStatus::Failed, "seeking " + where + ": " + errno_text(r));

  std::set<std::string> boot_ids;
  uint64_t not_kernel = 0;
  RunBuilder runs(coverage, sink);  // consecutive entries of one stream: one run
  while (true) {
    r = sd_journal_next(journal.get());
    if (r < 0) {
      runs.finish();  // what was read counts
      return report(CoverageStatus::Failed, "reading " + where + ": " + errno_text(r));
    }
    if (r == 0) break;
    uint64_t usec = 0;
    if (sd_journal_get_realtime_usec(journal.get(), &usec) < 0) continue;
    const auto time = static_cast<TimeUs>(usec);
    if (time < request.window_start) continue;
    // Entries come in time order (per boot, by the monotonic clock), so the first
    // one past the window ends the read.
    if (time > request.window_end) break;

    uint64_t monotonic = 0;
    sd_id128_t boot_id;
    if (sd_journal_get_monotonic_usec(journal.get(), &monotonic, &boot_id) >= 0) {
      char text[SD_ID128_STRING_MAX];
      boot_ids.insert(sd_id128_to_string(boot_id, text));
    }

    const std::optional<std::string> transport = field_value(journal.get(), "_TRANSPORT");
    const std::optional<std::string> identifier = field_value(journal.get(), "SYSLOG_IDENTIFIER");
    const std::optional<std::string> uid = field_value(journal.get(), "_UID");
    const bool root = uid.has_value() && *uid == "0";
    Classified classified;
    if (transport == "kernel") {
      // journald imports every /dev/kmsg record as _TRANSPORT=kernel, also those user
      // space wrote there (root's `echo ... > /dev/kmsg`, early-boot daemons): those carry
      // another facility than kern (SYSLOG_FACILITY != 0) and are not kernel evidence,
      // as in the kmsg collector.
      if (const auto facility = field_value(journal.get(), "SYSLOG_FACILITY"); facility && *facility != "0") {
        ++not_kernel;
        continue;
      }
      classified = {"kernel", true};
    } else if (identifier && contains(options_.app_identifiers, *identifier)) {
      classified = {"app", false};
    } else if (identifier && *identifier == kFabricManagerIdentifier && contains(options_.identifiers, *identifier)) {
      // Only the root-run daemon is Fabric Manager; anyone can `logger -t nv-fabricmanager`.
      classified = {"fabricmanager", root};
    } else if (identifier && contains(options_.identifiers, *identifier)) {
      classified = {"syslog", root};
    } else {
      continue;  // cannot happen with the matches above; never guess a source
    }

    // A message of several lines stays one line.
    runs.add_line(request.node, classified.source, classified.trusted, time,
                  field_value(journal.get(), "MESSAGE").value_or(""));
  }
  runs.finish();

  if (boot_ids.size() > 1) {
    std::string ids;
    for (const std::string& id : boot_ids) ids += (ids.empty() ? "" : ", ") + id;
    if (!partial_reason.empty()) partial_reason += "; ";
    partial_reason += "the node rebooted inside the window (boot ids " + ids + ")";
  }
  const std::string skipped =
      not_kernel > 0
          ? std::to_string(not_kernel) + " user-space records of the kernel transport (facility != kern) skipped"
          : "";
  if (!partial_reason.empty()) return report(CoverageStatus::Partial, join_notes({partial_reason, skipped}));
  return report(std::nullopt, skipped);
}

}  // namespace attrib::collectors
