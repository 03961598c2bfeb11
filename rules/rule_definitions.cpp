// YAML -> rule definitions. Only shape and vocabulary are checked here; regexes,
// references and examples are checked by the compiler.
#include "rules/rule_definitions.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <set>

namespace attrib::rules::detail {

namespace {

const std::set<std::string> kRootDomains = {"GPU_HARDWARE",  "GPU_DRIVER",   "NVLINK_FABRIC", "NETWORK",
                                            "HOST_HARDWARE", "HOST_OS",      "STORAGE",       "APPLICATION",
                                            "SCHEDULER",     "CONFIGURATION"};

// Domains whose root cause must come from a root-owned writer (ARCHITECTURE.md, Trust).
const std::set<std::string> kTrustedDomains = {"GPU_HARDWARE",  "GPU_DRIVER", "NVLINK_FABRIC", "NETWORK",
                                               "HOST_HARDWARE", "HOST_OS",    "STORAGE"};

const std::set<std::string> kActions = {
    "NONE",       "RESUBMIT",    "FIX_APPLICATION", "FIX_CONFIGURATION", "RESET_GPU",
    "DRAIN_NODE", "REBOOT_NODE", "INSPECT_FABRIC",  "INSPECT_NETWORK",   "CONTACT_VENDOR"};

FieldType parse_field_type(const MapView& fields, const std::string& name) {
  const auto type = fields.optional_string(name);
  if (type == "int") return FieldType::Int;
  if (type == "string") return FieldType::String;
  if (type == "hex") return FieldType::Hex;
  if (type == "number") return FieldType::Number;
  fail(kRuleField, fields.where(name), fields.field(name), "field type must be int, number, string or hex");
}

std::string context_index(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

std::vector<FieldCondition> parse_conditions(const std::string& file, const YAML::Node& node,
                                             const std::string& context, int fallback_line) {
  std::vector<FieldCondition> out;
  if (!node) return out;
  MapView where(file, node, context, fallback_line);
  for (const auto& entry : node) {
    FieldCondition condition;
    condition.field = entry.first.Scalar();
    const YAML::Node& value = entry.second;
    if (value.IsScalar()) {
      condition.any_of.push_back(scalar_to_json(value));
    } else if (value.IsSequence()) {
      for (const auto& item : flatten_sequence(value)) {
        if (!item.IsScalar())
          fail(kRuleField, where.where(condition.field), where.field(condition.field), "expected scalars");
        condition.any_of.push_back(scalar_to_json(item));
      }
    } else {
      fail(kRuleField, where.where(condition.field), where.field(condition.field),
           "expected a value or a list of values");
    }
    if (condition.any_of.empty())
      fail(kRuleField, where.where(condition.field), where.field(condition.field), "empty list");
    out.push_back(std::move(condition));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.field < b.field; });
  return out;
}

Scope parse_scope(const MapView& map) {
  const auto scope = map.optional_string("scope").value_or("job");
  if (scope == "job") return Scope::Job;
  if (scope == "same_node") return Scope::SameNode;
  if (scope == "same_gpu") return Scope::SameGpu;
  fail(kRuleField, map.where("scope"), map.field("scope"), "scope must be job, same_node or same_gpu");
}

void check_source_list(const MapView& map, const std::vector<std::string>& sources) {
  if (sources.empty()) fail(kRuleField, map.where(), map.field("sources"), "at least one source is required");
  for (const auto& s : sources) {
    if (!is_known_source(s)) {
      fail(kRuleField, map.where("sources"), map.field("sources"),
           "unknown source '" + s +
               "' (kernel, syslog, fabricmanager, slurm, spank, prometheus, gpus, app, app.rank<N>)");
    }
  }
}

// Largest accepted `block.max_lines`: an open block holds two lines whatever its length,
// but a huge window would let one unterminated start swallow a stream's later blocks.
constexpr int64_t kMaxBlockLines = 10000;

BlockDef parse_block(const std::string& file, const MapView& rule) {
  if (!rule.get("block").IsMap())
    fail(kRuleField, rule.where("block"), rule.field("block"), "expected a map {end, max_lines, key}");
  MapView map(file, rule.get("block"), rule.field("block"), rule.where().line);
  map.allow_only({"end", "abort", "max_lines", "key"});
  BlockDef block;
  block.where = rule.where("block");
  block.end = map.required_string("end");
  block.end_where = map.where("end");
  block.abort = map.optional_string("abort").value_or("");
  block.abort_where = map.where("abort");
  block.max_lines = map.optional_int("max_lines").value_or(block.max_lines);
  if (block.max_lines < 2 || block.max_lines > kMaxBlockLines) {
    fail(kRuleField, map.where("max_lines"), map.field("max_lines"), "must be 2.." + std::to_string(kMaxBlockLines));
  }
  block.key = map.optional_string("key").value_or("");
  return block;
}

ExtractionRuleDef parse_extraction_rule(const std::string& file, const YAML::Node& node, const std::string& context) {
  MapView map(file, node, context);
  map.allow_only({"id", "kind", "description", "sources", "prefilter", "regex", "block", "fields", "set", "examples",
                  "override", "claims_line", "scope", "at_least", "any_bits"});
  ExtractionRuleDef rule;
  rule.where = map.where();
  rule.id = map.required_string("id");
  rule.kind = map.required_string("kind");
  rule.description = map.optional_string("description").value_or("");
  rule.sources = map.string_list("sources");
  check_source_list(map, rule.sources);
  rule.prefilter = map.string_list("prefilter");
  for (const auto& literal : rule.prefilter) {
    if (literal.empty()) fail(kRuleField, map.where("prefilter"), map.field("prefilter"), "empty literal");
  }
  rule.regex = map.required_string("regex");
  rule.regex_where = map.where("regex");
  rule.override_shipped = map.optional_bool("override").value_or(false);
  rule.claims_line = map.optional_bool("claims_line").value_or(false);
  const std::string scope = map.optional_string("scope").value_or("scoped");
  if (scope != "scoped" && scope != "node_wide")
    fail(kRuleField, map.where("scope"), map.field("scope"), "scope must be scoped or node_wide");
  rule.node_wide = scope == "node_wide";
  if (map.has("block")) rule.block = parse_block(file, map);

  if (map.has("fields")) {
    MapView fields(file, map.get("fields"), map.field("fields"), rule.where.line);
    for (const auto& entry : map.get("fields")) {
      const std::string name = entry.first.Scalar();
      rule.fields.push_back({name, parse_field_type(fields, name)});
    }
  }
  // at_least: {field: number}, any_bits: {field: mask} (a mask may be written 0xE8).
  for (const char* key : {"at_least", "any_bits"}) {
    if (!map.has(key)) continue;
    MapView bounds(file, map.get(key), map.field(key), rule.where.line);
    for (const auto& entry : map.get(key)) {
      const std::string name = entry.first.Scalar();
      const std::string text = entry.second.IsScalar() ? entry.second.Scalar() : "";
      char* end = nullptr;
      errno = 0;
      if (std::string(key) == "at_least") {
        const double bound = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || errno != 0)
          fail(kRuleField, bounds.where(name), bounds.field(name), "expected a number");
        rule.at_least[name] = bound;
      } else {
        const long long mask = std::strtoll(text.c_str(), &end, 0);
        if (text.empty() || *end != '\0' || errno != 0 || mask <= 0)
          fail(kRuleField, bounds.where(name), bounds.field(name), "expected a positive bit mask such as 0x48");
        rule.any_bits[name] = mask;
      }
    }
  }
  if (map.has("set")) {
    MapView constants(file, map.get("set"), map.field("set"), rule.where.line);
    for (const auto& entry : map.get("set")) {
      if (!entry.second.IsScalar())
        fail(kRuleField, constants.where(entry.first.Scalar()), constants.field(entry.first.Scalar()),
             "expected a scalar");
      rule.constants[entry.first.Scalar()] = scalar_to_json(entry.second);
    }
  }

  if (map.has("examples")) {
    MapView examples(file, map.get("examples"), map.field("examples"), rule.where.line);
    examples.allow_only({"match", "no_match"});
    const YAML::Node match = examples.get("match");
    if (match) {
      if (!match.IsSequence()) fail(kRuleField, examples.where("match"), examples.field("match"), "expected a list");
      size_t i = 0;
      for (const auto& item : match) {
        const std::string item_context = context_index(examples.field("match"), i++);
        MatchExample example;
        example.where = location_of(file, item, examples.where("match").line);
        if (item.IsScalar()) {
          example.line = item.Scalar();
        } else {
          MapView entry(file, item, item_context);
          entry.allow_only({"line", "fields", "source"});
          example.line = entry.required_string("line");
          example.source = entry.optional_string("source").value_or("");
          if (!example.source.empty() &&
              std::find(rule.sources.begin(), rule.sources.end(), example.source) == rule.sources.end())
            fail(kRuleField, entry.where("source"), entry.field("source"),
                 "'" + example.source + "' is not one of the rule's sources");
          if (entry.has("fields")) {
            MapView expected(file, entry.get("fields"), entry.field("fields"), example.where.line);
            for (const auto& f : entry.get("fields")) {
              if (!f.second.IsScalar())
                fail(kRuleField, expected.where(f.first.Scalar()), expected.field(f.first.Scalar()),
                     "expected a scalar");
              example.fields[f.first.Scalar()] = scalar_to_json(f.second);
            }
          }
        }
        rule.match_examples.push_back(std::move(example));
      }
    }
    const YAML::Node no_match = examples.get("no_match");
    if (no_match) {
      if (!no_match.IsSequence())
        fail(kRuleField, examples.where("no_match"), examples.field("no_match"), "expected a list");
      size_t i = 0;
      for (const auto& item : no_match) {
        const SourceLocation where = location_of(file, item, examples.where("no_match").line);
        if (item.IsScalar()) {
          rule.no_match_examples.push_back({item.Scalar(), "", where});
          ++i;
          continue;
        }
        MapView entry(file, item, context_index(examples.field("no_match"), i++));
        entry.allow_only({"line", "source"});
        NoMatchExample example{entry.required_string("line"), entry.optional_string("source").value_or(""), where};
        if (!example.source.empty() &&
            std::find(rule.sources.begin(), rule.sources.end(), example.source) == rule.sources.end())
          fail(kRuleField, entry.where("source"), entry.field("source"),
               "'" + example.source + "' is not one of the rule's sources");
        rule.no_match_examples.push_back(std::move(example));
      }
    }
  }
  return rule;
}

EventPattern parse_pattern(const std::string& file, const YAML::Node& node, const std::string& context,
                           int fallback_line, bool allow_scope) {
  EventPattern pattern;
  pattern.location = location_of(file, node, fallback_line);
  if (node.IsScalar()) {
    pattern.kind = node.Scalar();
    return pattern;
  }
  MapView map(file, node, context, fallback_line);
  if (allow_scope) {
    map.allow_only({"kind", "where", "present", "scope"});
    pattern.scope = parse_scope(map);
  } else {
    map.allow_only({"kind", "where", "present", "trusted", "catalog", "distinct"});
  }
  pattern.kind = map.required_string("kind");
  pattern.where = parse_conditions(file, map.get("where"), map.field("where"), pattern.location.line);
  pattern.present = map.string_list("present");
  return pattern;
}

// Bounds of `root.distinct.at_least`: 1 would be no condition at all, and a count far
// beyond any job's processes or nodes is a typo rather than a rule.
constexpr int64_t kMaxDistinct = 1000;

DistinctCondition parse_distinct(const std::string& file, const MapView& root) {
  if (!root.get("distinct").IsMap()) {
    fail(kRuleField, root.where("distinct"), root.field("distinct"), "expected a map {field, at_least, scope, ignore}");
  }
  MapView map(file, root.get("distinct"), root.field("distinct"), root.where().line);
  map.allow_only({"field", "at_least", "scope", "ignore"});
  DistinctCondition distinct;
  distinct.where = root.where("distinct");
  distinct.field = map.required_string("field");
  distinct.at_least = map.optional_int("at_least").value_or(distinct.at_least);
  if (distinct.at_least < 2 || distinct.at_least > kMaxDistinct) {
    fail(kRuleField, map.where("at_least"), map.field("at_least"), "must be 2.." + std::to_string(kMaxDistinct));
  }
  distinct.scope = parse_scope(map);
  distinct.ignore = map.string_list("ignore");
  return distinct;
}

CorrelationRuleDef parse_correlation_rule(const std::string& file, const YAML::Node& node, const std::string& context) {
  MapView map(file, node, context);
  map.allow_only(
      {"id", "description", "precedence", "domain", "action", "confidence", "root", "explains", "summary", "override"});
  CorrelationRuleDef rule;
  rule.where = map.where();
  rule.id = map.required_string("id");
  rule.description = map.optional_string("description").value_or("");
  const auto precedence = map.optional_int("precedence");
  if (!precedence) fail(kRuleField, map.where(), map.field("precedence"), "missing required key");
  if (*precedence < 0 || *precedence > 1000)
    fail(kRuleField, map.where("precedence"), map.field("precedence"), "must be 0..1000");
  rule.precedence = static_cast<int>(*precedence);
  rule.domain = map.required_string("domain");
  rule.action = map.required_string("action");
  rule.confidence = map.optional_string("confidence").value_or("high");
  if (!is_confidence(rule.confidence))
    fail(kRuleField, map.where("confidence"), map.field("confidence"),
         "unknown confidence '" + rule.confidence + "' (high, medium or low)");
  rule.summary = map.required_string("summary");
  rule.summary_where = map.where("summary");
  rule.override_shipped = map.optional_bool("override").value_or(false);

  if (!map.has("root")) fail(kRuleField, map.where(), map.field("root"), "missing required key");
  rule.root = parse_pattern(file, map.get("root"), map.field("root"), rule.where.line, false);
  if (map.get("root").IsMap()) {
    MapView root(file, map.get("root"), map.field("root"), rule.where.line);
    if (auto trusted = root.optional_bool("trusted")) {
      rule.root_trusted = *trusted;
      rule.root_trusted_given = true;
    }
    if (root.has("catalog")) {
      MapView catalog(file, root.get("catalog"), root.field("catalog"), rule.where.line);
      catalog.allow_only({"table", "key", "severities", "actions"});
      CatalogCondition condition;
      condition.table = catalog.required_string("table");
      condition.key_field = catalog.required_string("key");
      condition.severities = catalog.string_list("severities");
      if (condition.severities.empty())
        fail(kRuleField, catalog.where(), catalog.field("severities"), "at least one severity is required");
      condition.actions = catalog.string_list("actions");
      for (const auto& action : condition.actions) {
        if (!is_action(action))
          fail(kRuleField, catalog.where("actions"), catalog.field("actions"), "unknown action '" + action + "'");
      }
      rule.catalog = std::move(condition);
    }
    if (root.has("distinct")) rule.distinct = parse_distinct(file, root);
  }
  const bool from_catalog = rule.catalog.has_value();
  if (rule.domain == "catalog" || rule.action == "catalog") {
    if (!from_catalog) fail(kRuleField, map.where("domain"), map.field("domain"), "'catalog' needs root.catalog");
  }
  if (rule.domain != "catalog" && rule.domain != "UNATTRIBUTED" && !is_root_domain(rule.domain)) {
    fail(kRuleField, map.where("domain"), map.field("domain"), "unknown domain '" + rule.domain + "'");
  }
  // UNATTRIBUTED makes a locator rule (docs/rules.md): it names where, never a cause,
  // so it recommends nothing.
  if (rule.domain == "UNATTRIBUTED" && rule.action != "NONE") {
    fail(kRuleField, map.where("action"), map.field("action"),
         "a locator rule (domain UNATTRIBUTED) must have action NONE");
  }
  if (rule.action != "catalog" && !is_action(rule.action)) {
    fail(kRuleField, map.where("action"), map.field("action"), "unknown action '" + rule.action + "'");
  }

  if (map.has("explains")) {
    const YAML::Node explains = map.get("explains");
    if (!explains.IsSequence()) fail(kRuleField, map.where("explains"), map.field("explains"), "expected a list");
    size_t i = 0;
    for (const auto& item : flatten_sequence(explains)) {
      rule.explains.push_back(
          parse_pattern(file, item, context_index(map.field("explains"), i++), map.where("explains").line, true));
    }
  }
  return rule;
}

ActionOverride parse_override(const std::string& file, const YAML::Node& node, const std::string& context) {
  MapView map(file, node, context);
  map.allow_only({"domain", "severity", "action"});
  ActionOverride o{map.required_string("domain"), map.required_string("severity"), map.required_string("action")};
  if (!is_action(o.action))
    fail(kRuleField, map.where("action"), map.field("action"), "unknown action '" + o.action + "'");
  return o;
}

std::map<std::string, std::string> parse_string_map(const MapView& parent, const std::string& key) {
  std::map<std::string, std::string> out;
  if (!parent.has(key)) return out;
  MapView map(parent.file(), parent.get(key), parent.field(key), parent.where().line);
  for (const auto& entry : parent.get(key)) {
    const std::string k = entry.first.Scalar();
    auto value = map.optional_string(k);
    out[k] = value.value_or("");
  }
  return out;
}

CatalogMatch parse_catalog_match(const std::string& file, const YAML::Node& node, const std::string& context) {
  MapView m(file, node, context);
  m.allow_only({"columns", "field", "type"});
  CatalogMatch spec;
  spec.columns = m.string_list("columns");
  if (spec.columns.empty()) fail(kRuleField, m.where(), m.field("columns"), "at least one column is required");
  spec.field = m.required_string("field");
  spec.type = m.required_string("type");
  if (spec.type != "bits" && spec.type != "hex" && spec.type != "name") {
    fail(kRuleField, m.where("type"), m.field("type"), "type must be bits, hex or name");
  }
  return spec;
}

CatalogDef parse_catalog(const std::string& file, const YAML::Node& node, const std::string& context) {
  MapView map(file, node, context);
  map.allow_only({"name", "file", "key_column", "name_column", "domain_column", "severity_column", "domain_map",
                  "action_by_severity", "action_overrides", "severity_map", "action_column", "action_map",
                  "name_format", "match", "secondary_action"});
  CatalogDef catalog;
  catalog.where = map.where();
  catalog.name = map.required_string("name");
  catalog.file = map.required_string("file");
  catalog.key_column = map.required_string("key_column");
  catalog.name_column = map.required_string("name_column");
  catalog.domain_column = map.required_string("domain_column");
  catalog.severity_column = map.required_string("severity_column");
  catalog.domain_map = parse_string_map(map, "domain_map");
  for (const auto& [hint, domain] : catalog.domain_map) {
    if (!is_root_domain(domain) && domain != "UNATTRIBUTED") {
      fail(kRuleField, map.where("domain_map"), map.field("domain_map." + hint), "unknown domain '" + domain + "'");
    }
  }
  catalog.action_by_severity = parse_string_map(map, "action_by_severity");
  for (const auto& [severity, action] : catalog.action_by_severity) {
    if (!is_action(action)) {
      fail(kRuleField, map.where("action_by_severity"), map.field("action_by_severity." + severity),
           "unknown action '" + action + "'");
    }
  }
  if (map.has("action_overrides")) {
    size_t i = 0;
    for (const auto& item : flatten_sequence(map.get("action_overrides"))) {
      catalog.action_overrides.push_back(parse_override(file, item, context_index(map.field("action_overrides"), i++)));
    }
  }
  catalog.severity_map = parse_string_map(map, "severity_map");
  for (const auto& [cell, severity] : catalog.severity_map) {
    static const std::set<std::string> kSeverities = {"fatal", "job-fatal", "degraded", "benign"};
    if (!kSeverities.count(severity)) {
      fail(kRuleField, map.where("severity_map"), map.field("severity_map." + cell),
           "unknown severity '" + severity + "'");
    }
  }
  catalog.action_column = map.optional_string("action_column").value_or("");
  catalog.action_map = parse_string_map(map, "action_map");
  for (const auto& [cell, action] : catalog.action_map) {
    if (!is_action(action))
      fail(kRuleField, map.where("action_map"), map.field("action_map." + cell), "unknown action '" + action + "'");
  }
  if (!catalog.action_column.empty() && catalog.action_map.empty()) {
    fail(kRuleField, map.where("action_column"), map.field("action_column"), "action_column needs an action_map");
  }
  catalog.name_format = map.optional_string("name_format").value_or("");
  if (map.has("secondary_action")) {
    if (catalog.match.empty() && !map.has("match")) {
      fail(kRuleField, map.where("secondary_action"), map.field("secondary_action"),
           "only decode tables (with match) have a secondary action");
    }
    if (!map.get("secondary_action").IsMap()) {
      fail(kRuleField, map.where("secondary_action"), map.field("secondary_action"), "expected a map {column, when}");
    }
    MapView secondary(file, map.get("secondary_action"), map.field("secondary_action"), map.where().line);
    secondary.allow_only({"column", "when"});
    CatalogSecondaryAction spec;
    spec.column = secondary.required_string("column");
    if (!secondary.has("when")) fail(kRuleField, secondary.where(), secondary.field("when"), "missing required key");
    spec.when = parse_catalog_match(file, secondary.get("when"), secondary.field("when"));
    if (spec.when.type == "name") {
      fail(kRuleField, secondary.where("when"), secondary.field("when.type"), "type must be bits or hex");
    }
    if (catalog.action_map.empty()) {
      fail(kRuleField, secondary.where("column"), secondary.field("column"), "a secondary action needs an action_map");
    }
    catalog.secondary_action = std::move(spec);
  }
  if (map.has("match")) {
    size_t i = 0;
    for (const auto& item : flatten_sequence(map.get("match"))) {
      catalog.match.push_back(parse_catalog_match(file, item, context_index(map.field("match"), i++)));
    }
  }
  return catalog;
}

}  // namespace

nlohmann::json scalar_to_json(const YAML::Node& scalar) {
  const std::string& text = scalar.Scalar();
  // Quoted scalars ("79") stay strings; plain integers become numbers.
  if (scalar.Tag() != "!" && !text.empty()) {
    int64_t value = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec == std::errc() && ptr == end) return value;
  }
  return text;
}

bool is_root_domain(const std::string& domain) { return kRootDomains.count(domain) > 0; }
bool is_action(const std::string& action) { return kActions.count(action) > 0; }
bool is_confidence(const std::string& confidence) {
  return confidence == "high" || confidence == "medium" || confidence == "low";
}
bool is_disruptive_action(const std::string& action) {
  return action == "DRAIN_NODE" || action == "REBOOT_NODE" || action == "RESET_GPU";
}
bool domain_requires_trust(const std::string& domain) { return kTrustedDomains.count(domain) > 0; }

bool is_application_source(const std::string& source) { return source == "app" || source.rfind("app.", 0) == 0; }

const std::vector<std::string>& fixed_sources() {
  // prometheus: metric samples rendered as lines by the prometheus collector.
  // spank: task records of spank_attrib.so (spank_records collector), apart from
  // "slurm" so their coverage rows stay distinguishable from slurmdbd's.
  // gpus: the driver's GPU minor-number map (gpu_map collector).
  // flight_recorder: the ranks' PyTorch flight-recorder dumps (flight_recorder collector).
  static const std::vector<std::string> kFixed = {"kernel", "syslog", "fabricmanager", "slurm",          "spank",
                                                  "prometheus", "gpus", "app",        "flight_recorder"};
  return kFixed;
}

bool is_known_source(const std::string& source) {
  const auto& fixed = fixed_sources();
  if (std::find(fixed.begin(), fixed.end(), source) != fixed.end()) return true;
  const std::string prefix = "app.rank";
  if (source.rfind(prefix, 0) != 0 || source.size() == prefix.size()) return false;
  return std::all_of(source.begin() + prefix.size(), source.end(), [](char c) { return c >= '0' && c <= '9'; });
}

PackManifest parse_manifest(const YamlFile& file) {
  MapView map(file.display_name, file.root, "");
  map.allow_only({"name", "version", "description", "clock_skew_ms", "rule_files", "catalogs"});
  PackManifest manifest;
  manifest.name = map.required_string("name");
  manifest.version = map.required_string("version");
  manifest.clock_skew_ms = map.optional_int("clock_skew_ms").value_or(5000);
  if (manifest.clock_skew_ms < 0) fail(kRuleField, map.where("clock_skew_ms"), "clock_skew_ms", "must be >= 0");
  if (!map.has("rule_files")) fail(kRuleField, map.where(), "rule_files", "missing required key");
  for (const auto& item : flatten_sequence(map.get("rule_files"))) {
    if (!item.IsScalar()) fail(kRuleField, location_of(file.display_name, item), "rule_files", "expected file names");
    manifest.rule_files.push_back({item.Scalar(), location_of(file.display_name, item)});
  }
  if (map.has("catalogs")) {
    size_t i = 0;
    for (const auto& item : flatten_sequence(map.get("catalogs"))) {
      manifest.catalogs.push_back(parse_catalog(file.display_name, item, context_index("catalogs", i++)));
    }
  }
  return manifest;
}

RuleFileDefs parse_rule_file(const YamlFile& file) {
  MapView map(file.display_name, file.root, "");
  // `definitions` holds YAML anchors shared by several rules; it is not read itself.
  map.allow_only({"description", "definitions", "extract", "correlate", "benign"});
  RuleFileDefs defs;
  for (const auto& kind : map.string_list("benign")) defs.benign.push_back({kind, map.where("benign")});
  if (map.has("extract")) {
    const YAML::Node list = map.get("extract");
    if (!list.IsSequence()) fail(kRuleYaml, map.where("extract"), "extract", "expected a list of rules");
    size_t i = 0;
    for (const auto& item : list) {
      defs.extraction.push_back(parse_extraction_rule(file.display_name, item, context_index("extract", i++)));
    }
  }
  if (map.has("correlate")) {
    const YAML::Node list = map.get("correlate");
    if (!list.IsSequence()) fail(kRuleYaml, map.where("correlate"), "correlate", "expected a list of rules");
    size_t i = 0;
    for (const auto& item : list) {
      defs.correlation.push_back(parse_correlation_rule(file.display_name, item, context_index("correlate", i++)));
    }
  }
  return defs;
}

}  // namespace attrib::rules::detail
