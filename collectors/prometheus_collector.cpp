#include "collectors/prometheus_collector.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "collectors/coverage_report.h"
#include "collectors/http_client.h"
#include "core/json_text.h"

namespace attrib::collectors {
namespace {

using json = nlohmann::json;

constexpr int64_t kUsPerSecond = 1000000;
// Prometheus refuses range queries of more than 11,000 points per series; longer
// windows are read in chunks of this many evaluation steps.
constexpr int64_t kMaxStepsPerRequest = 10000;

// Prometheus accepts float seconds: "1704067200.250000".
std::string seconds_text(TimeUs t) {
  const bool negative = t < 0;
  const int64_t magnitude = negative ? -t : t;
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%s%lld.%06lld", negative ? "-" : "",
                static_cast<long long>(magnitude / kUsPerSecond), static_cast<long long>(magnitude % kUsPerSecond));
  return buffer;
}

// Two range queries per node (one per exporter, names matched by regex) instead of one per
// metric: the series each rule of rules/pack/dcgm.yaml, node_metrics.yaml and
// network.yaml (InfiniBand port counters) reads.
constexpr const char* kDefaultQueries =
    "[{name: dcgm, promql: '{__name__=~\"DCGM_FI_DEV_(XID_ERRORS|ECC_(SBE|DBE)_VOL_TOTAL|UNCORRECTABLE_REMAPPED_ROWS|"
    "ROW_REMAP_(FAILURE|PENDING)|NVLINK_(CRC_FLIT|CRC_DATA|REPLAY|RECOVERY)_ERROR_COUNT_TOTAL|(THERMAL|POWER)_VIOLATION|"
    "CLOCK_THROTTLE_REASONS|CLOCKS_EVENT_REASONS)\",Hostname=\"{node}\"}'}, "
    "{name: node, promql: '{__name__=~\"node_edac_(csrow_)?(un)?correctable_errors_total|"
    "node_hwmon_(temp|fan|in|curr|power)_(.+_)?alarm(_.+)?|"
    "node_infiniband_(link_downed_total|state_id|link_error_recovery_total|symbol_error_total)\","
    "instance=~\"{node}([.:].*)?\"}'}]";

// `queries` is a list of {name, promql} mappings: its own option, not a field type.
Option<PrometheusOptions> queries_option() {
  Option<PrometheusOptions> out;
  out.doc = OptionDoc{"queries", "list of {name, promql}", kDefaultQueries,
                      "List of {name, promql}. {node} in promql is replaced by the Slurm node name (quoted for a "
                      "PromQL string). The default reads every series a rule of the shipped pack knows: the DCGM "
                      "exporter's (Xid, ECC, row remapping, NVLink errors, clock throttling; label Hostname) and the "
                      "node exporter's EDAC counters, hwmon alarms and InfiniBand port errors (label instance, \"<node>:<port>\" or "
                      "\"<node>.<domain>:<port>\"). A series an exporter does not export is simply absent.",
                      {}};
  out.set = [](PrometheusOptions& options, const YAML::Node& node) -> OptionProblem {
    if (!node.IsSequence() || node.size() == 0) return Error{kConfigType, "must be a non-empty list of {name, promql}"};
    options.queries.clear();
    for (const YAML::Node& item : node) {
      const std::string at = "item at line " + std::to_string(item.Mark().line + 1);
      if (!item.IsMap()) return Error{kConfigType, at + " must be a mapping {name, promql}"};
      PrometheusQuery query;
      for (const auto& entry : item) {
        const std::string key = entry.first.Scalar();
        if (key != "name" && key != "promql")
          return Error{kConfigUnknownKey, at + ": unknown key '" + key + "'; known keys: name, promql"};
        if (!entry.second.IsScalar() || entry.second.Scalar().empty())
          return Error{kConfigType, at + ": key '" + key + "' must be a non-empty string"};
        (key == "name" ? query.name : query.promql) = entry.second.Scalar();
      }
      if (query.name.empty() || query.promql.empty()) return Error{kConfigType, at + " needs both name and promql"};
      options.queries.push_back(std::move(query));
    }
    return std::nullopt;
  };
  return out;
}

// One synthetic line waiting to be put in time order.
struct Pending {
  TimeUs time;
  size_t query;
  std::string text;
};

// How one query (all its chunks) went.
struct QueryOutcome {
  std::optional<CoverageStatus> failure;  // Failed or Timeout
  std::string detail;
  bool transport = false;  // the server itself is unreachable or too slow
};

}  // namespace

Result<PromRangeAnswer> parse_prometheus_range(const std::string& body) {
  json doc;
  try {
    doc = json::parse(body);
  } catch (const json::exception&) {
    return Error{kPromFormat, "answer is not JSON: " + body_excerpt(body)};
  }
  if (!doc.is_object()) return Error{kPromFormat, "answer is not a JSON object"};
  const std::string status = json_string_or(doc, "status");
  if (status != "success") {
    const std::string type =
        doc.contains("errorType") && doc["errorType"].is_string() ? doc["errorType"].get<std::string>() : "";
    const std::string error =
        doc.contains("error") && doc["error"].is_string() ? doc["error"].get<std::string>() : body_excerpt(body);
    return Error{type == "timeout" ? kPromTimeout : kPromError, (type.empty() ? "" : type + ": ") + error};
  }
  PromRangeAnswer answer;
  if (doc.contains("warnings") && doc["warnings"].is_array()) {
    for (const json& w : doc["warnings"])
      answer.warnings.push_back(value_text(w));
  }
  const json* data = doc.contains("data") ? &doc["data"] : nullptr;
  if (data == nullptr || !data->is_object() || json_string_or(*data, "resultType") != "matrix" ||
      !data->contains("result") || !(*data)["result"].is_array()) {
    return Error{kPromFormat, "answer is not a range-query matrix"};
  }
  for (const json& item : (*data)["result"]) {
    if (!item.is_object() || !item.contains("metric") || !item["metric"].is_object() || !item.contains("values") ||
        !item["values"].is_array()) {
      return Error{kPromFormat, "malformed series in the answer"};
    }
    PromSeries series;
    for (const auto& [key, value] : item["metric"].items()) {
      if (!value.is_string()) return Error{kPromFormat, "label '" + key + "' is not a string"};
      series.labels[key] = value.get<std::string>();
    }
    for (const json& sample : item["values"]) {
      if (!sample.is_array() || sample.size() != 2 || !sample[0].is_number() || !sample[1].is_string()) {
        return Error{kPromFormat, "malformed sample in the answer"};
      }
      const auto time = static_cast<TimeUs>(std::llround(sample[0].get<double>() * kUsPerSecond));
      series.samples.emplace_back(time, sample[1].get<std::string>());
    }
    answer.series.push_back(std::move(series));
  }
  return answer;
}

std::string format_delta(double delta) {
  char out[64];
  if (std::fabs(delta) < 1e15 && delta == std::floor(delta))
    std::snprintf(out, sizeof out, "%+lld", static_cast<long long>(delta));
  else
    std::snprintf(out, sizeof out, "%+.6g", delta);
  return out;
}

std::string prometheus_line(const PromSeries& series, const std::string& fallback, const std::string& value) {
  auto name = series.labels.find("__name__");
  std::string line = name != series.labels.end() ? name->second : fallback;
  std::string labels;
  for (const auto& [key, label_value] : series.labels) {  // std::map: sorted by name
    if (key == "__name__") continue;
    labels += (labels.empty() ? "" : ",") + key + "=\"";
    for (char c : label_value) {
      if (c == '\\')
        labels += "\\\\";
      else if (c == '"')
        labels += "\\\"";
      else if (c == '\n')
        labels += "\\n";
      else
        labels += c;
    }
    labels += '"';
  }
  return line + "{" + labels + "} " + value;
}

const OptionTable<PrometheusOptions>& PrometheusCollector::option_table() {
  static const OptionTable<PrometheusOptions> table = {
      option("url", &PrometheusOptions::url, "http://localhost:9090",
             "Base URL of the Prometheus server, e.g. http://prometheus:9090.", non_empty()),
      queries_option(),
      option("step_s", &PrometheusOptions::step_s, "15",
             "Range-query resolution in seconds. A change is seen at the first evaluation step at or after it.",
             at_least(1)),
      option("timeout_ms", &PrometheusOptions::timeout_ms, "10000",
             "Deadline of each HTTP request (connect included), also sent to Prometheus as timeout.", at_least(1)),
  };
  return table;
}

Result<std::unique_ptr<Collector>> PrometheusCollector::create(const YAML::Node& options) {
  auto parsed = read_collector_options(kName, option_table(), options);
  if (!parsed) return parsed.error();
  return std::unique_ptr<Collector>(std::make_unique<PrometheusCollector>(std::move(*parsed)));
}

PrometheusCollector::PrometheusCollector(PrometheusOptions options) : options_(std::move(options)) {}

std::vector<Coverage> PrometheusCollector::collect(const CollectRequest& request, const LineSink& sink) {
  const int64_t step = options_.step_s * kUsPerSecond;
  // Evaluations fall on window_end - k*step, so the window's last moment is always
  // evaluated; the first evaluation lies before the window start and only supplies
  // the baseline each series is compared with (a fault that was already showing
  // before the window is not news inside it).
  const int64_t span = std::max<int64_t>(0, request.window_end - request.window_start);
  const TimeUs first_eval = request.window_end - (span / step + 1) * step;
  const std::string endpoint = join_url(options_.url, "/api/v1/query_range");

  std::vector<Pending> pending;
  std::vector<std::string> warnings;
  std::vector<QueryOutcome> outcomes;
  bool server_down = false;
  for (size_t q = 0; q < options_.queries.size(); ++q) {
    const PrometheusQuery& query = options_.queries[q];
    QueryOutcome outcome;
    if (server_down) {
      outcome.failure = CoverageStatus::Failed;
      outcome.detail = "query " + query.name + ": not attempted after the previous error";
      outcomes.push_back(std::move(outcome));
      continue;
    }
    const std::string promql = substitute_node(query.promql, request.node);
    std::map<std::map<std::string, std::string>, double> last_value;  // per series
    for (TimeUs chunk_start = first_eval; chunk_start <= request.window_end;
         chunk_start += kMaxStepsPerRequest * step) {
      const TimeUs chunk_end = std::min<TimeUs>(chunk_start + (kMaxStepsPerRequest - 1) * step, request.window_end);
      auto response = http_get(endpoint,
                               {{"query", promql},
                                {"start", seconds_text(chunk_start)},
                                {"end", seconds_text(chunk_end)},
                                {"step", std::to_string(options_.step_s)},
                                {"timeout", std::to_string(options_.timeout_ms) + "ms"}},
                               options_.timeout_ms);
      if (!response) {
        outcome.failure = response.error().code == kHttpTimeout ? CoverageStatus::Timeout : CoverageStatus::Failed;
        outcome.detail = "query " + query.name + ": " + response.error().message;
        outcome.transport = true;
        break;
      }
      auto answer = parse_prometheus_range(response->body);
      if (!answer) {
        outcome.failure = answer.error().code == kPromTimeout ? CoverageStatus::Timeout : CoverageStatus::Failed;
        outcome.detail =
            "query " + query.name + ": HTTP " + std::to_string(response->status) + ": " + answer.error().message;
        break;
      }
      for (const std::string& w : answer->warnings) warnings.push_back("query " + query.name + ": " + w);
      for (const PromSeries& series : answer->series) {
        for (const auto& [time, text] : series.samples) {
          const double value = std::strtod(text.c_str(), nullptr);
          if (std::isnan(value)) continue;
          auto [it, first] = last_value.try_emplace(series.labels, value);
          const bool changed = first || it->second != value;
          // A series that appears counts from 0: a counter's first total is all new.
          const double delta = value - (first ? 0 : it->second);
          it->second = value;
          if (!changed || value == 0 || time < request.window_start || time > request.window_end) continue;
          pending.push_back({time, q, prometheus_line(series, query.name, text) + " (" + format_delta(delta) + ")"});
        }
      }
    }
    server_down = outcome.transport;
    outcomes.push_back(std::move(outcome));
  }

  // One stream per node: time order, then query order, then the line.
  std::sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.time, a.query, a.text) < std::tie(b.time, b.query, b.text);
  });
  CoverageReport coverage(request, {kSource});
  for (Pending& p : pending) {
    LogLine line;
    line.node = request.node;
    line.source = kSource;
    line.time = p.time;
    line.seq = coverage.next_seq(kSource);
    line.trusted = true;  // metrics come from root-run exporters (DCGM), not from the job
    line.text = std::move(p.text);
    sink(line);
  }

  size_t failed = 0;
  bool any_timeout = false;
  std::vector<std::string> notes;
  for (const QueryOutcome& o : outcomes) {
    if (!o.failure) continue;
    ++failed;
    any_timeout = any_timeout || *o.failure == CoverageStatus::Timeout;
    notes.push_back(o.detail);
  }
  for (const std::string& w : warnings) notes.push_back("warning: " + w);
  std::optional<CoverageStatus> status;
  if (failed == outcomes.size()) {
    status = any_timeout ? CoverageStatus::Timeout : CoverageStatus::Failed;
  } else if (failed > 0 || !warnings.empty()) {
    status = CoverageStatus::Partial;
  }
  return coverage.finish(status, join_notes(notes));
}

}  // namespace attrib::collectors
