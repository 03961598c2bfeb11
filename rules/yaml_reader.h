// Reading YAML rule files with positions: every accessor knows the file and line of
// the node it reads, and rejects unknown keys so that typos are load errors.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "rules/load_error.h"

namespace attrib::rules::detail {

struct YamlFile {
  std::string display_name;  // as it appears in error messages
  std::string text;          // raw bytes (hashed into the pack fingerprint)
  YAML::Node root;
};

// Reads and parses one file. Throws LoadFailure (RULE_E_IO / RULE_E_YAML).
YamlFile read_yaml_file(const std::filesystem::path& path, const std::string& display_name);

// Reads a whole file as bytes. Throws LoadFailure (RULE_E_IO).
std::string read_text_file(const std::filesystem::path& path, const std::string& display_name);

SourceLocation location_of(const std::string& file, const YAML::Node& node, int fallback_line = 0);

// A YAML mapping being read field by field. `context` prefixes field names in errors
// (e.g. "extract[3].regex").
class MapView {
 public:
  MapView(std::string file, YAML::Node node, std::string context, int fallback_line = 0);

  bool has(const std::string& key) const;
  YAML::Node get(const std::string& key) const;  // undefined node when absent
  SourceLocation where() const { return location_of(file_, node_, fallback_line_); }
  SourceLocation where(const std::string& key) const;
  std::string field(const std::string& key) const;  // "context.key"
  const std::string& file() const { return file_; }

  std::string required_string(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;
  std::optional<int64_t> optional_int(const std::string& key) const;
  std::optional<bool> optional_bool(const std::string& key) const;
  // A scalar or a sequence of scalars (nested sequences, e.g. from anchors, are flattened).
  std::vector<std::string> string_list(const std::string& key) const;

  // Fails with RULE_E_FIELD naming the first key not in `allowed`.
  void allow_only(const std::vector<std::string>& allowed) const;

 private:
  std::string file_;
  YAML::Node node_;
  std::string context_;
  int fallback_line_;
};

// Flattens nested sequences (YAML anchors let rule files share lists of entries).
std::vector<YAML::Node> flatten_sequence(const YAML::Node& node);

}  // namespace attrib::rules::detail
