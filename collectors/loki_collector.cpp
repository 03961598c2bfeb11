#include "collectors/loki_collector.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "collectors/coverage_report.h"
#include "collectors/http_client.h"
#include "collectors/run_builder.h"
#include "core/json_text.h"

namespace attrib::collectors {
namespace {

using json = nlohmann::json;

// Loki's default max_entries_limit_per_query: a larger page is refused.
constexpr int64_t kMaxPage = 5000;
const std::vector<std::string> kSources = {"kernel", "syslog", "fabricmanager", "app"};

bool is_source(const std::string& name) { return std::find(kSources.begin(), kSources.end(), name) != kSources.end(); }

std::optional<int64_t> parse_ns(const std::string& text) {
  int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// Identity of an entry for de-duplication at a page boundary.
using EntryKey = std::tuple<int64_t, std::map<std::string, std::string>, std::string>;

}  // namespace

Result<std::vector<LokiEntry>> parse_loki_streams(const std::string& body) {
  json doc;
  try {
    doc = json::parse(body);
  } catch (const json::exception&) {
    return Error{kLokiFormat, "answer is not JSON: " + body_excerpt(body)};
  }
  if (!doc.is_object()) return Error{kLokiFormat, "answer is not a JSON object"};
  if (json_string_or(doc, "status") != "success") {
    return Error{kLokiError, "status " + json_string_or(doc, "status", "(none)") + ": " + body_excerpt(body)};
  }
  const json* data = doc.contains("data") ? &doc["data"] : nullptr;
  if (data == nullptr || !data->is_object() || !data->contains("result") || !(*data)["result"].is_array()) {
    return Error{kLokiFormat, "answer has no data.result"};
  }
  if (json_string_or(*data, "resultType") != "streams") {
    return Error{kLokiFormat, "answer is a " + json_string_or(*data, "resultType", "(none)") +
                                  ", not log streams (is the query a metric query?)"};
  }
  std::vector<LokiEntry> entries;
  for (const json& item : (*data)["result"]) {
    if (!item.is_object() || !item.contains("values") || !item["values"].is_array()) {
      return Error{kLokiFormat, "malformed stream in the answer"};
    }
    std::map<std::string, std::string> labels;
    if (item.contains("stream") && item["stream"].is_object()) {
      for (const auto& [key, value] : item["stream"].items()) {
        if (value.is_string()) labels[key] = value.get<std::string>();
      }
    }
    for (const json& value : item["values"]) {
      // [ "<ns>", "<line>" ] and, in newer Loki, a third element (structured metadata).
      if (!value.is_array() || value.size() < 2 || !value[0].is_string() || !value[1].is_string()) {
        return Error{kLokiFormat, "malformed entry in the answer"};
      }
      auto ns = parse_ns(value[0].get<std::string>());
      if (!ns) return Error{kLokiFormat, "entry time '" + value[0].get<std::string>() + "' is not nanoseconds"};
      entries.push_back({*ns, labels, value[1].get<std::string>()});
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const LokiEntry& a, const LokiEntry& b) { return a.time_ns < b.time_ns; });
  return entries;
}

const OptionTable<LokiOptions>& LokiCollector::option_table() {
  static const OptionTable<LokiOptions> table = {
      option("url", &LokiOptions::url, "http://localhost:3100", "Base URL of Loki, e.g. http://loki:3100.",
             non_empty()),
      option("query", &LokiOptions::query, "'{host=\"{node}\"}'",
             "LogQL log query; {node} is replaced by the Slurm node name (quoted for a LogQL string).", non_empty()),
      option("limit", &LokiOptions::limit, "100", "Entries per query_range page (Loki's default maximum is 5000).",
             between(1, kMaxPage)),
      option("max_lines", &LokiOptions::max_lines, "100000",
             "Most lines read per node; more makes the coverage partial.", at_least(1)),
      option("timeout_ms", &LokiOptions::timeout_ms, "10000",
             "Deadline of each HTTP request (one page), connect included.", at_least(1)),
      option("source_label", &LokiOptions::source_label, "source",
             "Stream label whose value selects the attrib source through source_map.", non_empty()),
      option("source_map", &LokiOptions::source_map,
             "{kernel: kernel, syslog: syslog, fabricmanager: fabricmanager, app: app}",
             "Label value -> source (kernel, syslog, fabricmanager or app). Only kernel is trusted: map to it "
             "only a label your log agent derives from the kernel transport.",
             {},
             [](const std::map<std::string, std::string>& map) -> OptionProblem {
               for (const auto& [label, source] : map)
                 if (!is_source(source))
                   return Error{kConfigValue, "maps '" + label + "' to '" + source +
                                                  "'; sources: kernel, syslog, fabricmanager, app"};
               return std::nullopt;
             }),
      option("default_source", &LokiOptions::default_source, "app",
             "Source of streams whose label is missing or not in source_map (untrusted).", one_of(kSources)),
  };
  return table;
}

Result<std::unique_ptr<Collector>> LokiCollector::create(const YAML::Node& options) {
  auto parsed = read_collector_options(kName, option_table(), options);
  if (!parsed) return parsed.error();
  return std::unique_ptr<Collector>(std::make_unique<LokiCollector>(std::move(*parsed)));
}

LokiCollector::LokiCollector(LokiOptions options) : options_(std::move(options)) {}

std::vector<std::string> LokiCollector::source_names() const {
  std::vector<std::string> names;
  for (const std::string& source : kSources) {
    bool used = source == options_.default_source;
    for (const auto& [value, mapped] : options_.source_map) used = used || mapped == source;
    if (used) names.push_back(source);
  }
  return names;
}

std::vector<Coverage> LokiCollector::collect(const CollectRequest& request, const LineSink& sink) {
  const std::vector<std::string> sources = source_names();
  uint64_t delivered = 0;
  CoverageReport coverage(request, sources);
  RunBuilder runs(coverage, sink);  // consecutive entries of one source: one run
  auto report = [&](std::optional<CoverageStatus> status, const std::string& detail) {
    runs.finish();  // what was read counts, however the read ends
    return coverage.finish(status, detail);
  };

  const std::string endpoint = join_url(options_.url, "/loki/api/v1/query_range");
  const std::string query = substitute_node(options_.query, request.node);
  // The window is inclusive at both ends in microseconds; Loki's end is exclusive
  // and in nanoseconds, so it stops just before the next microsecond.
  const int64_t end_ns = (request.window_end + 1) * 1000;
  int64_t cursor = request.window_start * 1000;
  int64_t page_limit = options_.limit;
  // Entries delivered whose time equals the cursor: the next page starts at the
  // cursor again (Loki's start is inclusive) and repeats them.
  std::map<EntryKey, uint64_t> delivered_at_cursor;
  uint64_t pages = 0;

  while (true) {
    auto response = http_get(endpoint,
                             {{"query", query},
                              {"start", std::to_string(cursor)},
                              {"end", std::to_string(end_ns)},
                              {"limit", std::to_string(page_limit)},
                              {"direction", "forward"}},
                             options_.timeout_ms);
    const std::string progress =
        " (after " + std::to_string(delivered) + " lines in " + std::to_string(pages) + " pages)";
    if (!response) {
      return report(response.error().code == kHttpTimeout ? CoverageStatus::Timeout : CoverageStatus::Failed,
                    response.error().message + progress);
    }
    if (response->status != 200) {
      return report(CoverageStatus::Failed, "Loki answered HTTP " + std::to_string(response->status) + ": " +
                                                body_excerpt(response->body) + progress);
    }
    auto entries = parse_loki_streams(response->body);
    if (!entries) return report(CoverageStatus::Failed, entries.error().message + progress);
    ++pages;

    std::map<EntryKey, uint64_t> seen_at_cursor;
    for (const LokiEntry& entry : *entries) {
      if (entry.time_ns < cursor || entry.time_ns >= end_ns) continue;  // outside what was asked
      if (entry.time_ns == cursor) {
        EntryKey key{entry.time_ns, entry.stream, entry.line};
        const uint64_t occurrence = ++seen_at_cursor[key];
        uint64_t& already = delivered_at_cursor[key];
        if (occurrence <= already) continue;
        already = occurrence;
      }
      if (delivered >= static_cast<uint64_t>(options_.max_lines)) {
        return report(CoverageStatus::Partial,
                      "stopped after max_lines=" + std::to_string(options_.max_lines) + " lines");
      }
      auto label = entry.stream.find(options_.source_label);
      auto mapped = label == entry.stream.end() ? options_.source_map.end() : options_.source_map.find(label->second);
      const std::string& source = mapped == options_.source_map.end() ? options_.default_source : mapped->second;
      // Trusted: see docs/collectors.md, Loki trust.
      runs.add_line(request.node, source, /*trusted=*/source == "kernel", entry.time_ns / 1000, entry.line);
      ++delivered;
    }

    if (static_cast<int64_t>(entries->size()) < page_limit) break;  // the last page
    const int64_t last = entries->back().time_ns;
    if (last >= end_ns - 1) break;  // nothing can follow inside the window
    if (last <= cursor) {
      // A full page of one timestamp: more entries may share it than a page holds.
      // Ask again for the same start with a larger page rather than skip them.
      if (page_limit >= kMaxPage) {
        return report(CoverageStatus::Partial, "more than " + std::to_string(kMaxPage) + " entries share the time " +
                                                   std::to_string(cursor) + " ns");
      }
      page_limit = std::min(page_limit * 2, kMaxPage);
      continue;
    }
    cursor = last;
    page_limit = options_.limit;
    delivered_at_cursor.clear();
    for (const LokiEntry& entry : *entries) {
      if (entry.time_ns == last) ++delivered_at_cursor[EntryKey{entry.time_ns, entry.stream, entry.line}];
    }
  }
  return report(std::nullopt, "");
}

}  // namespace attrib::collectors
