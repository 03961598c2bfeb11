#include "core/option_table.h"

#include <algorithm>

namespace attrib {
namespace {

std::string location(const YAML::Node& node, const OptionScope& scope) {
  const YAML::Mark mark = node.Mark();
  const bool known = !mark.is_null() && mark.line >= 0;
  if (!scope.file.empty()) return known ? scope.file + ":" + std::to_string(mark.line + 1) : scope.file;
  return known ? "line " + std::to_string(mark.line + 1) : "(built-in)";
}

std::string of_owner(const OptionScope& scope) { return scope.owner.empty() ? "" : " of " + scope.owner; }

std::string describe(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

// The keys a section holds directly: "head" for "head.workers", "" for the top level.
std::vector<std::string> keys_in_section(const std::vector<OptionDoc>& docs, const std::string& section) {
  std::vector<std::string> names;
  const std::string prefix = section.empty() ? "" : section + ".";
  for (const OptionDoc& doc : docs) {
    if (doc.key.rfind(prefix, 0) != 0) continue;
    std::string rest = doc.key.substr(prefix.size());
    std::string name = rest.substr(0, rest.find('.'));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

Status check_section(const std::vector<OptionDoc>& docs, const YAML::Node& node, const std::string& section,
                     const OptionScope& scope) {
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    const std::string dotted = section.empty() ? name : section + "." + name;
    const bool is_option = std::any_of(docs.begin(), docs.end(), [&](const OptionDoc& d) { return d.key == dotted; });
    if (is_option) continue;
    const bool is_section =
        std::any_of(docs.begin(), docs.end(), [&](const OptionDoc& d) { return d.key.rfind(dotted + ".", 0) == 0; });
    if (is_section) {
      if (!entry.second.IsMap() && !entry.second.IsNull())
        return Error{kConfigType, location(entry.second, scope) + ": '" + dotted + "'" + of_owner(scope) +
                                      " must be a mapping, got " + describe(entry.second)};
      if (Status s = check_section(docs, entry.second, dotted, scope); !s) return s;
      continue;
    }
    std::string known;
    for (const std::string& key : keys_in_section(docs, section)) known += (known.empty() ? "" : ", ") + key;
    return Error{kConfigUnknownKey, location(entry.first, scope) + ": unknown key '" + dotted + "'" + of_owner(scope) +
                                        "; known keys" + (section.empty() ? "" : " in '" + section + "'") + ": " +
                                        (known.empty() ? "(none)" : known)};
  }
  return ok_status();
}

}  // namespace

bool OptionValue<std::string>::decode(const YAML::Node& node, std::string& out) {
  if (!node.IsScalar()) return false;
  out = node.Scalar();
  return true;
}

bool OptionValue<bool>::decode(const YAML::Node& node, bool& out) {
  return node.IsScalar() && YAML::convert<bool>::decode(node, out);
}

bool OptionValue<int64_t>::decode(const YAML::Node& node, int64_t& out) {
  return node.IsScalar() && YAML::convert<int64_t>::decode(node, out);
}

bool OptionValue<std::vector<std::string>>::decode(const YAML::Node& node, std::vector<std::string>& out) {
  if (!node.IsSequence()) return false;
  out.clear();
  for (const YAML::Node& item : node) {
    if (!item.IsScalar()) return false;
    out.push_back(item.Scalar());
  }
  return true;
}

bool OptionValue<std::map<std::string, std::string>>::decode(const YAML::Node& node,
                                                             std::map<std::string, std::string>& out) {
  if (!node.IsMap()) return false;
  out.clear();
  for (const auto& entry : node) {
    if (!entry.first.IsScalar() || !entry.second.IsScalar()) return false;
    out[entry.first.Scalar()] = entry.second.Scalar();
  }
  return true;
}

Error option_type_error(const char* type, const YAML::Node& node) {
  const std::string article = std::string(type) == "integer" ? "an " : "a ";
  return Error{kConfigType, "expected " + article + type + ", got " + describe(node)};
}

OptionProblem check_limits(const OptionLimits& limits, const std::string& value) {
  if (limits.non_empty && value.empty()) return Error{kConfigValue, "must not be empty"};
  if (!limits.choices.empty() &&
      std::find(limits.choices.begin(), limits.choices.end(), value) == limits.choices.end()) {
    std::string choices;
    for (size_t i = 0; i < limits.choices.size(); ++i)
      choices += (i == 0 ? "" : i + 1 == limits.choices.size() ? " or " : ", ") + limits.choices[i];
    return Error{kConfigValue, "must be " + choices + ", not '" + value + "'"};
  }
  return std::nullopt;
}

OptionProblem check_limits(const OptionLimits& limits, int64_t value) {
  if (limits.min && limits.max && (value < *limits.min || value > *limits.max))
    return Error{kConfigValue, "must be between " + std::to_string(*limits.min) + " and " +
                                   std::to_string(*limits.max) + ", got " + std::to_string(value)};
  if (limits.min && value < *limits.min)
    return Error{kConfigValue, "must be at least " + std::to_string(*limits.min) + ", got " + std::to_string(value)};
  if (limits.max && value > *limits.max)
    return Error{kConfigValue, "must be at most " + std::to_string(*limits.max) + ", got " + std::to_string(value)};
  return std::nullopt;
}

Status check_option_keys(const std::vector<OptionDoc>& docs, const YAML::Node& document, const OptionScope& scope) {
  if (!document.IsDefined() || document.IsNull()) return ok_status();
  if (!document.IsMap())
    return Error{kConfigType, location(document, scope) + ": " + (scope.owner.empty() ? "options" : scope.owner) +
                                  " must be a mapping, got " + describe(document)};
  return check_section(docs, document, "", scope);
}

// Recursive on purpose: assigning yaml-cpp nodes (node = node[part]) rewrites the
// referenced node instead of rebinding the handle.
YAML::Node find_option(const YAML::Node& document, const std::string& dotted) {
  const size_t dot = dotted.find('.');
  const std::string head = dotted.substr(0, dot);
  if (!document.IsMap() || !document[head] || document[head].IsNull()) return YAML::Node(YAML::NodeType::Undefined);
  if (dot == std::string::npos) return document[head];
  return find_option(document[head], dotted.substr(dot + 1));
}

Result<YAML::Node> option_default(const OptionDoc& doc, const OptionScope& scope) {
  try {
    return YAML::Load(doc.default_value);
  } catch (const YAML::Exception& e) {
    return Error{kConfigInternal, "the default of '" + doc.key + "'" + of_owner(scope) + " is not YAML: " + e.what()};
  }
}

Error locate_option_problem(const Error& problem, const OptionDoc& doc, const YAML::Node& node,
                            const OptionScope& scope) {
  return Error{problem.code, location(node, scope) + ": '" + doc.key + "'" + of_owner(scope) + ": " + problem.message};
}

std::string options_markdown(const std::vector<OptionDoc>& docs) {
  // Table cells must not contain raw pipes or line breaks.
  auto cell = [](const std::string& text) {
    std::string out;
    for (char c : text) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
    return out;
  };
  std::string out = "| key | type | default | meaning |\n|---|---|---|---|\n";
  for (const OptionDoc& doc : docs) {
    std::string meaning = doc.help;
    const OptionLimits& l = doc.limits;
    if (l.min && l.max)
      meaning += " Range: " + std::to_string(*l.min) + " to " + std::to_string(*l.max) + ".";
    else if (l.min)
      meaning += " At least " + std::to_string(*l.min) + ".";
    else if (l.max)
      meaning += " At most " + std::to_string(*l.max) + ".";
    if (!l.choices.empty()) {
      meaning += " One of:";
      for (const std::string& choice : l.choices) meaning += " `" + choice + "`";
      meaning += ".";
    }
    out += "| `" + cell(doc.key) + "` | " + cell(doc.type) + " | " +
           (doc.default_value.empty() ? std::string("(none)") : "`" + cell(doc.default_value) + "`") + " | " +
           cell(meaning) + " |\n";
  }
  return out;
}

}  // namespace attrib
