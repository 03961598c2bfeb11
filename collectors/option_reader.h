// Typed access to one collector's YAML options, checked against its OptionSpec table.
//
// The table is the single source of truth: a key missing from it is rejected, and a
// key the user left out takes the table's default (parsed as YAML), so the defaults
// shown in the generated configuration reference are exactly the ones in effect.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectors/collector.h"
#include "core/result.h"

namespace attrib::collectors {

// Stable error codes of option validation.

class OptionReader {
 public:
  // `options` may be undefined or null (no options given: every default applies).
  OptionReader(std::string collector, const std::vector<OptionSpec>& specs, YAML::Node options);

  // Fails when `options` is not a mapping or holds a key that is not in the table.
  Status check_keys() const;

  // Each reads the given value or, when absent or null, the table's default.
  // A key that is not in the table is a programming error and is reported as such.
  Result<std::string> string(const std::string& key) const;
  Result<bool> boolean(const std::string& key) const;
  Result<int64_t> integer(const std::string& key) const;
  Result<std::vector<std::string>> string_list(const std::string& key) const;

 private:
  struct Value {
    YAML::Node node;
    bool from_default = false;
  };
  Result<Value> value_of(const std::string& key) const;
  Error type_error(const std::string& key, const Value& value, const std::string& expected) const;

  std::string collector_;
  std::vector<OptionSpec> specs_;
  YAML::Node options_;
};

// " (line N)" for a node parsed from text, "" for one built in code.
std::string yaml_line_suffix(const YAML::Node& node);

}  // namespace attrib::collectors
