// The Loki collector: a LogQL query_range per node, read in forward pages.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"

namespace attrib::collectors {

struct LokiOptions {
  std::string url;                                // e.g. http://loki:3100
  std::string query;                              // LogQL, may contain {node}
  int64_t limit = 100;                            // entries per page
  int64_t max_lines = 100000;                     // per node; more makes coverage partial
  int64_t timeout_ms = 10000;                     // per HTTP request
  std::string source_label = "source";            // stream label that selects the attrib source
  std::map<std::string, std::string> source_map;  // label value -> kernel|syslog|fabricmanager|app
  std::string default_source = "app";             // streams without a mapped label value
};

// One log entry of a query_range answer.
struct LokiEntry {
  int64_t time_ns = 0;
  std::map<std::string, std::string> stream;  // the stream's labels
  std::string line;
};

// Error codes of parse_loki_streams().

// Parses a /loki/api/v1/query_range body into entries, ordered by time (stable:
// entries of equal time keep the answer's order).
Result<std::vector<LokiEntry>> parse_loki_streams(const std::string& body);

class LokiCollector final : public Collector {
 public:
  static constexpr const char* kName = "loki";

  static const OptionTable<LokiOptions>& option_table();
  // Reads `options` with option_table() and builds the collector.
  static Result<std::unique_ptr<Collector>> create(const YAML::Node& options);

  explicit LokiCollector(LokiOptions options);

  std::string name() const override { return kName; }
  std::vector<Coverage> collect(const CollectRequest& request, const LineSink& sink) override;

  // The attrib sources this configuration can produce, in report order.
  std::vector<std::string> source_names() const;
  const LokiOptions& options() const { return options_; }

 private:
  LokiOptions options_;
};

}  // namespace attrib::collectors
