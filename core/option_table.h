// One design for every table of options attrib reads from YAML: the daemon's
// configuration file (common/config.cpp) and each collector's `options` (collectors/).
// Each option has a name, a type, a default, help and a setter into the struct it fills;
// the same table drives validation (unknown keys, wrong types and out-of-range values are
// errors naming the file, line and key), --help and the generated docs/configuration.md.
//
//   struct KmsgOptions { std::string path; ... };
//   const OptionTable<KmsgOptions> table = {
//       option("path", &KmsgOptions::path, "/dev/kmsg", "Where to read kmsg records.",
//              non_empty()),
//   };
//   KmsgOptions parsed;
//   if (Status s = read_options(table, yaml, {"", "collector 'kmsg'"}, parsed); !s) ...
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/result.h"

namespace attrib {

// What a value must satisfy besides its type; checked for given values and defaults alike.
struct OptionLimits {
  std::optional<int64_t> min, max;   // integers
  bool non_empty = false;            // strings
  std::vector<std::string> choices;  // strings: one of these
};

// The limits, by name: option(..., at_least(1)), option(..., one_of({"off", "drain"})).
inline OptionLimits at_least(int64_t min) {
  OptionLimits limits;
  limits.min = min;
  return limits;
}
inline OptionLimits at_most(int64_t max) {
  OptionLimits limits;
  limits.max = max;
  return limits;
}
inline OptionLimits between(int64_t min, int64_t max) {
  OptionLimits limits;
  limits.min = min;
  limits.max = max;
  return limits;
}
inline OptionLimits non_empty() {
  OptionLimits limits;
  limits.non_empty = true;
  return limits;
}
inline OptionLimits one_of(std::vector<std::string> choices) {
  OptionLimits limits;
  limits.choices = std::move(choices);
  return limits;
}

// A problem with one value, said without its location (read_options adds file:line and
// the key): code CONFIG_E_TYPE or CONFIG_E_VALUE.
using OptionProblem = std::optional<Error>;

// What every option says about itself: enough for validation messages, --help and docs.
struct OptionDoc {
  std::string key;            // the name; dotted for nested sections ("head.workers")
  std::string type;           // "string", "integer", "boolean", "list of strings", ...
  std::string default_value;  // as written in YAML; "" when there is none
  std::string help;
  OptionLimits limits;
};

template <typename Target>
struct Option {
  OptionDoc doc;
  // Reads the value into the target (a given one or the default).
  std::function<OptionProblem(Target&, const YAML::Node&)> set;
};

template <typename Target>
using OptionTable = std::vector<Option<Target>>;

// Where the options come from, for error messages: "x.yaml:3: 'head.workers': ..." or
// "line 7: 'path' of collector 'kmsg': ...".
struct OptionScope {
  std::string file;   // the YAML file; "" names lines only
  std::string owner;  // what the options belong to, e.g. "collector 'kmsg'"; "" for a file's top level
};

// ---- values of one C++ type -----------------------------------------------------------

// The type name shown in messages and docs, and the conversion from YAML; false when the
// node is not of that type.
template <typename Field>
struct OptionValue;
template <>
struct OptionValue<std::string> {
  static constexpr const char* kType = "string";
  static bool decode(const YAML::Node& node, std::string& out);
};
template <>
struct OptionValue<bool> {
  static constexpr const char* kType = "boolean";
  static bool decode(const YAML::Node& node, bool& out);
};
template <>
struct OptionValue<int64_t> {
  static constexpr const char* kType = "integer";
  static bool decode(const YAML::Node& node, int64_t& out);
};
template <>
struct OptionValue<std::vector<std::string>> {
  static constexpr const char* kType = "list of strings";
  static bool decode(const YAML::Node& node, std::vector<std::string>& out);
};
template <>
struct OptionValue<std::map<std::string, std::string>> {
  static constexpr const char* kType = "map of strings";
  static bool decode(const YAML::Node& node, std::map<std::string, std::string>& out);
};

// "expected an integer, got 'x'" (CONFIG_E_TYPE) for a node that does not decode.
Error option_type_error(const char* type, const YAML::Node& node);
// The limits a string or integer breaks (CONFIG_E_VALUE), or nullopt.
OptionProblem check_limits(const OptionLimits& limits, const std::string& value);
OptionProblem check_limits(const OptionLimits& limits, int64_t value);

// An option stored in a field. `field` is a member pointer (&Options::path) or a callable
// returning a reference to the field (for nested structs: [](Config& c) -> int& { return
// c.head.workers; }). Any integer field reads as int64_t, range-checked by `limits` and by
// the field's own type. `check`, when given, vets the decoded value further (e.g. a path
// template) and returns its problem.
template <typename Target, typename Access>
Option<Target> option(
    std::string key, Access field, std::string default_value, std::string help, OptionLimits limits = {},
    std::function<OptionProblem(const std::remove_cvref_t<std::invoke_result_t<Access, Target&>>&)> check = {}) {
  using Field = std::remove_cvref_t<std::invoke_result_t<Access, Target&>>;
  using Stored = std::conditional_t<std::is_integral_v<Field> && !std::is_same_v<Field, bool>, int64_t, Field>;
  Option<Target> out;
  out.doc = OptionDoc{std::move(key), OptionValue<Stored>::kType, std::move(default_value), std::move(help), limits};
  out.set = [field, limits, check](Target& target, const YAML::Node& node) -> OptionProblem {
    Stored value{};
    if (!OptionValue<Stored>::decode(node, value)) return option_type_error(OptionValue<Stored>::kType, node);
    if constexpr (std::is_same_v<Stored, int64_t> || std::is_same_v<Stored, std::string>) {
      if (auto problem = check_limits(limits, value)) return problem;
    }
    if constexpr (std::is_same_v<Stored, int64_t> && !std::is_same_v<Field, int64_t>) {
      if (value < static_cast<int64_t>(std::numeric_limits<Field>::min()) ||
          static_cast<uint64_t>(value) > static_cast<uint64_t>(std::numeric_limits<Field>::max()))
        return Error{kConfigValue, "must be between " + std::to_string(std::numeric_limits<Field>::min()) + " and " +
                                       std::to_string(std::numeric_limits<Field>::max()) + ", got " +
                                       std::to_string(value)};
    }
    Field& slot = std::invoke(field, target);
    slot = static_cast<Field>(value);
    if (check) return check(slot);
    return std::nullopt;
  };
  return out;
}

// The same for a direct member, with Target deduced: option("path", &KmsgOptions::path, ...).
template <typename Target, typename Field>
Option<Target> option(std::string key, Field Target::*member, std::string default_value, std::string help,
                      OptionLimits limits = {},
                      std::type_identity_t<std::function<OptionProblem(const Field&)>> check = {}) {
  return option<Target, Field Target::*>(std::move(key), member, std::move(default_value), std::move(help),
                                         std::move(limits), std::move(check));
}

// ---- reading and documenting a table --------------------------------------------------

// Checks `document` against the keys of `docs` (an unknown key or a section that is not
// a mapping: CONFIG_E_UNKNOWN_KEY / CONFIG_E_TYPE), naming file:line and the keys known
// at that level. An undefined or null document holds no keys.
Status check_option_keys(const std::vector<OptionDoc>& docs, const YAML::Node& document, const OptionScope& scope);
// The node at a dotted key; an undefined node when absent or null.
YAML::Node find_option(const YAML::Node& document, const std::string& dotted);
// Parses a table default; CONFIG_E_INTERNAL when it is not YAML.
Result<YAML::Node> option_default(const OptionDoc& doc, const OptionScope& scope);
// "file:line: 'key' of owner: problem".
Error locate_option_problem(const Error& problem, const OptionDoc& doc, const YAML::Node& node,
                            const OptionScope& scope);

template <typename Target>
std::vector<OptionDoc> option_docs(const OptionTable<Target>& table) {
  std::vector<OptionDoc> docs;
  for (const Option<Target>& o : table) docs.push_back(o.doc);
  return docs;
}

// Validates `document` and fills `target`: every option takes its given value or, when
// absent, its default (an option without a default keeps the target's value).
template <typename Target>
Status read_options(const OptionTable<Target>& table, const YAML::Node& document, const OptionScope& scope,
                    Target& target) {
  if (Status s = check_option_keys(option_docs(table), document, scope); !s) return s;
  for (const Option<Target>& o : table) {
    YAML::Node value = find_option(document, o.doc.key);
    if (!value.IsDefined()) {
      if (o.doc.default_value.empty()) continue;
      auto fallback = option_default(o.doc, scope);
      if (!fallback) return fallback.error();
      if (fallback->IsNull()) continue;
      value.reset(*fallback);  // reset: rebind the handle, do not assign through it
    }
    if (OptionProblem problem = o.set(target, value)) return locate_option_problem(*problem, o.doc, value, scope);
  }
  return ok_status();
}

// A Markdown table of the options: key, type, default and meaning (with the limits).
std::string options_markdown(const std::vector<OptionDoc>& docs);

}  // namespace attrib
