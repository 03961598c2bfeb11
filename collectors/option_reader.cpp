#include "collectors/option_reader.h"

#include <algorithm>

namespace attrib::collectors {

std::string yaml_line_suffix(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null() || mark.line < 0) return "";
  return " (line " + std::to_string(mark.line + 1) + ")";
}

OptionReader::OptionReader(std::string collector, const std::vector<OptionSpec>& specs,
                           YAML::Node options)
    : collector_(std::move(collector)), specs_(specs), options_(std::move(options)) {}

Status OptionReader::check_keys() const {
  if (!options_.IsDefined() || options_.IsNull()) return ok_status();
  if (!options_.IsMap()) {
    return Error{kConfigType, "options of collector '" + collector_ + "'" +
                                  yaml_line_suffix(options_) + " must be a mapping"};
  }
  for (const auto& entry : options_) {
    const std::string key = entry.first.Scalar();
    const bool known = std::any_of(specs_.begin(), specs_.end(),
                                   [&](const OptionSpec& spec) { return spec.key == key; });
    if (known) continue;
    std::string known_keys;
    for (const OptionSpec& spec : specs_) {
      known_keys += (known_keys.empty() ? "" : ", ") + spec.key;
    }
    return Error{kConfigUnknownKey, "unknown key '" + key + "' for collector '" + collector_ + "'" +
                                        yaml_line_suffix(entry.first) + "; known keys: " +
                                        (known_keys.empty() ? "(none)" : known_keys)};
  }
  return ok_status();
}

Result<OptionReader::Value> OptionReader::value_of(const std::string& key) const {
  auto spec = std::find_if(specs_.begin(), specs_.end(),
                           [&](const OptionSpec& s) { return s.key == key; });
  if (spec == specs_.end()) {
    return Error{kConfigInternal,
                 "collector '" + collector_ + "' reads option '" + key + "' missing from its table"};
  }
  if (options_.IsMap()) {
    YAML::Node given = options_[key];
    if (given.IsDefined() && !given.IsNull()) return Value{given, false};
  }
  try {
    return Value{YAML::Load(spec->default_value), true};
  } catch (const YAML::Exception& e) {
    return Error{kConfigInternal, "default of option '" + key + "' of collector '" +
                                          collector_ + "' is not valid YAML: " + e.what()};
  }
}

Error OptionReader::type_error(const std::string& key, const Value& value,
                               const std::string& expected) const {
  std::string got;
  if (value.node.IsScalar()) {
    got = "'" + value.node.Scalar() + "'";
  } else if (value.node.IsSequence()) {
    got = "a list";
  } else if (value.node.IsMap()) {
    got = "a mapping";
  } else {
    got = "nothing";
  }
  return Error{kConfigType, "option '" + key + "' of collector '" + collector_ + "'" +
                                yaml_line_suffix(value.node) + " must be " + expected +
                                ", got " + got + (value.from_default ? " (table default)" : "")};
}

Result<std::string> OptionReader::string(const std::string& key) const {
  auto value = value_of(key);
  if (!value) return value.error();
  if (value->from_default && value->node.IsNull()) return std::string();
  if (!value->node.IsScalar()) return type_error(key, *value, "a string");
  return value->node.Scalar();
}

Result<bool> OptionReader::boolean(const std::string& key) const {
  auto value = value_of(key);
  if (!value) return value.error();
  bool result = false;
  if (!value->node.IsScalar() || !YAML::convert<bool>::decode(value->node, result)) {
    return type_error(key, *value, "true or false");
  }
  return result;
}

Result<int64_t> OptionReader::integer(const std::string& key) const {
  auto value = value_of(key);
  if (!value) return value.error();
  int64_t result = 0;
  if (!value->node.IsScalar() || !YAML::convert<int64_t>::decode(value->node, result)) {
    return type_error(key, *value, "an integer");
  }
  return result;
}

Result<std::vector<std::string>> OptionReader::string_list(const std::string& key) const {
  auto value = value_of(key);
  if (!value) return value.error();
  std::vector<std::string> result;
  if (value->from_default && value->node.IsNull()) return result;
  if (!value->node.IsSequence()) return type_error(key, *value, "a list of strings");
  for (const YAML::Node& item : value->node) {
    if (!item.IsScalar()) return type_error(key, Value{item, value->from_default}, "a string");
    result.push_back(item.Scalar());
  }
  return result;
}

}  // namespace attrib::collectors
