// The Prometheus collector: per-node PromQL range queries (e.g. DCGM exporter series)
// turned into trusted synthetic lines for the extraction rules.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"

namespace attrib::collectors {

struct PrometheusQuery {
  std::string name;    // label for the query; names the line when the series has no __name__
  std::string promql;  // may contain {node}
};

struct PrometheusOptions {
  std::string url;  // e.g. http://prometheus:9090
  std::vector<PrometheusQuery> queries;
  int64_t step_s = 15;
  int64_t timeout_ms = 10000;
};

// One series of a range-query answer.
struct PromSeries {
  std::map<std::string, std::string> labels;            // __name__ included when present
  std::vector<std::pair<TimeUs, std::string>> samples;  // (time, value as Prometheus printed it)
};

struct PromRangeAnswer {
  std::vector<PromSeries> series;
  std::vector<std::string> warnings;
};

// Error codes of parse_prometheus_range().

// Parses an /api/v1/query_range body (any HTTP status: error answers carry JSON too).
Result<PromRangeAnswer> parse_prometheus_range(const std::string& body);

// `name{k="v",...} value`, labels sorted, __name__ left out, values escaped as in the
// Prometheus text format. `name` is the series' __name__, or `fallback` without one.
std::string prometheus_line(const PromSeries& series, const std::string& fallback, const std::string& value);
// The change a line reports, as the collector appends it: "(+2)", "(-0.5)", "(+1.5e+06)".
// The rules' thresholds read it (a counter's increase; docs/rules.md "Thresholds").
std::string format_delta(double delta);

class PrometheusCollector final : public Collector {
 public:
  static constexpr const char* kName = "prometheus";
  static constexpr const char* kSource = "prometheus";

  static const OptionTable<PrometheusOptions>& option_table();
  // Reads `options` with option_table() and builds the collector.
  static Result<std::unique_ptr<Collector>> create(const YAML::Node& options);

  explicit PrometheusCollector(PrometheusOptions options);

  std::string name() const override { return kName; }
  std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) override;

  const PrometheusOptions& options() const { return options_; }

 private:
  PrometheusOptions options_;
};

}  // namespace attrib::collectors
