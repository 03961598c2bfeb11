#include "rules/yaml_reader.h"

#include <algorithm>

#include "core/whole_file.h"

namespace attrib::rules::detail {

std::string read_text_file(const std::filesystem::path& path, const std::string& display_name) {
  auto text = read_whole_file(path);
  if (!text) fail(kRuleIo, {display_name, 0}, "", "cannot open or read file");
  return std::move(*text);
}

YamlFile read_yaml_file(const std::filesystem::path& path, const std::string& display_name) {
  YamlFile file;
  file.display_name = display_name;
  file.text = read_text_file(path, display_name);
  try {
    file.root = YAML::Load(file.text);
  } catch (const YAML::ParserException& e) {
    fail(kRuleYaml, {display_name, e.mark.line + 1}, "", e.msg);
  }
  if (!file.root.IsMap()) fail(kRuleYaml, {display_name, 1}, "", "expected a mapping at the top level");
  return file;
}

SourceLocation location_of(const std::string& file, const YAML::Node& node, int fallback_line) {
  if (node.IsDefined()) {
    const YAML::Mark mark = node.Mark();
    if (mark.line >= 0) return {file, mark.line + 1};
  }
  return {file, fallback_line};
}

MapView::MapView(std::string file, YAML::Node node, std::string context, int fallback_line)
    : file_(std::move(file)), node_(std::move(node)), context_(std::move(context)), fallback_line_(fallback_line) {
  if (!node_.IsMap()) fail(kRuleYaml, where(), context_, "expected a mapping");
}

bool MapView::has(const std::string& key) const { return static_cast<bool>(node_[key]); }

YAML::Node MapView::get(const std::string& key) const { return node_[key]; }

SourceLocation MapView::where(const std::string& key) const {
  const YAML::Node value = node_[key];
  return value ? location_of(file_, value, where().line) : where();
}

std::string MapView::field(const std::string& key) const { return context_.empty() ? key : context_ + "." + key; }

std::string MapView::required_string(const std::string& key) const {
  auto value = optional_string(key);
  if (!value) fail(kRuleField, where(), field(key), "missing required key");
  if (value->empty()) fail(kRuleField, where(key), field(key), "must not be empty");
  return *value;
}

std::optional<std::string> MapView::optional_string(const std::string& key) const {
  const YAML::Node value = node_[key];
  if (!value) return std::nullopt;
  if (!value.IsScalar()) fail(kRuleField, where(key), field(key), "expected a string");
  return value.Scalar();
}

std::optional<int64_t> MapView::optional_int(const std::string& key) const {
  const YAML::Node value = node_[key];
  if (!value) return std::nullopt;
  try {
    if (value.IsScalar()) return value.as<int64_t>();
  } catch (const YAML::Exception&) {
  }
  fail(kRuleField, where(key), field(key), "expected an integer");
}

std::optional<bool> MapView::optional_bool(const std::string& key) const {
  const YAML::Node value = node_[key];
  if (!value) return std::nullopt;
  try {
    if (value.IsScalar()) return value.as<bool>();
  } catch (const YAML::Exception&) {
  }
  fail(kRuleField, where(key), field(key), "expected true or false");
}

std::vector<std::string> MapView::string_list(const std::string& key) const {
  const YAML::Node value = node_[key];
  std::vector<std::string> out;
  if (!value) return out;
  if (value.IsScalar()) {
    out.push_back(value.Scalar());
    return out;
  }
  if (!value.IsSequence()) fail(kRuleField, where(key), field(key), "expected a string or a list of strings");
  for (const auto& item : flatten_sequence(value)) {
    if (!item.IsScalar()) fail(kRuleField, location_of(file_, item, where(key).line), field(key), "expected strings");
    out.push_back(item.Scalar());
  }
  return out;
}

void MapView::allow_only(const std::vector<std::string>& allowed) const {
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(kRuleField, location_of(file_, entry.first, where().line), field(key),
           "unknown key (allowed: " + list + ")");
    }
  }
}

std::vector<YAML::Node> flatten_sequence(const YAML::Node& node) {
  std::vector<YAML::Node> out;
  if (!node.IsSequence()) {
    out.push_back(node);
    return out;
  }
  for (const auto& item : node) {
    if (item.IsSequence()) {
      auto inner = flatten_sequence(item);
      out.insert(out.end(), inner.begin(), inner.end());
    } else {
      out.push_back(item);
    }
  }
  return out;
}

}  // namespace attrib::rules::detail
