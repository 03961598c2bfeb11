// The explicit list of collector kinds (no static-initialisation self-registration:
// what is linked in is exactly what this list names, in a fixed order).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"

namespace attrib::collectors {

using CollectorFactory = std::function<Result<std::unique_ptr<Collector>>(const YAML::Node& options)>;

struct CollectorKind {
  std::string name;                // the key used in the configuration, e.g. "journald"
  std::string summary;             // one sentence for --help and the reference
  std::vector<OptionDoc> options;  // every accepted key, documented (the collector's option table)
  // Validates `options` against the table (unknown key: CONFIG_E_UNKNOWN_KEY, wrong
  // type: CONFIG_E_TYPE, both naming the key and its YAML line) and builds the collector.
  CollectorFactory create;
};

// All known collector kinds, in a stable order.
const std::vector<CollectorKind>& collector_kinds();

// The kind called `name`, or nullptr.
const CollectorKind* find_collector_kind(std::string_view name);

// Looks up `name` (unknown: CONFIG_E_UNKNOWN_COLLECTOR) and creates it from `options`.
Result<std::unique_ptr<Collector>> create_collector(std::string_view name, const YAML::Node& options);

// The option tables as Markdown: one "### <name>" section per kind with its summary and
// key | type | default | meaning table (used for the generated configuration reference).
std::string options_reference_markdown();

}  // namespace attrib::collectors
