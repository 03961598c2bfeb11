#include "rules/compiler.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/json_text.h"
#include "rules/candidate_scan.h"
#include "rules/catalog_loader.h"

namespace attrib::rules::detail {

namespace {

bool json_values_equal(const nlohmann::json& actual, const nlohmann::json& expected) {
  if (actual.is_number() && expected.is_number()) return actual == expected;
  if (actual.is_string() && expected.is_string()) return actual == expected;
  return value_text(actual) == value_text(expected);
}

// Merges shipped and site rules by id. Shipped ids must be unique; a site rule with a
// shipped id must say `override: true`, and `override: true` must override something.
template <typename Def>
std::vector<Def> merge_by_id(const std::vector<std::vector<Def>>& shipped, const std::vector<std::vector<Def>>& site,
                             const char* section) {
  std::vector<Def> merged;
  std::map<std::string, size_t> index;
  for (const auto& file : shipped) {
    for (const auto& def : file) {
      if (index.count(def.id)) {
        fail(kRuleDuplicate, def.where, std::string(section) + "." + def.id,
             "duplicate rule id (first defined at " + merged[index[def.id]].where.file + ":" +
                 std::to_string(merged[index[def.id]].where.line) + ")");
      }
      index[def.id] = merged.size();
      merged.push_back(def);
    }
  }
  std::set<std::string> site_ids;
  for (const auto& file : site) {
    for (const auto& def : file) {
      if (!site_ids.insert(def.id).second)
        fail(kRuleDuplicate, def.where, std::string(section) + "." + def.id, "duplicate rule id in site rules");
      auto it = index.find(def.id);
      if (it != index.end()) {
        if (!def.override_shipped) {
          fail(kRuleOverride, def.where, std::string(section) + "." + def.id,
               "site rule has the id of a shipped rule; set `override: true` to replace it");
        }
        merged[it->second] = def;
      } else {
        if (def.override_shipped)
          fail(kRuleOverride, def.where, std::string(section) + "." + def.id,
               "`override: true` but no shipped rule has this id");
        index[def.id] = merged.size();
        merged.push_back(def);
      }
    }
  }
  return merged;
}

std::unique_ptr<re2::RE2> compile_regex(const std::string& pattern, const SourceLocation& where,
                                        const std::string& field) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  auto regex = std::make_unique<re2::RE2>(pattern, options);
  if (!regex->ok()) fail(kRuleRegex, where, field, regex->error());
  return regex;
}

// Named groups of `regex` -> typed fields, in group order. Every group needs a type.
std::vector<CompiledField> typed_groups(const re2::RE2& regex, const std::map<std::string, FieldType>& declared,
                                        const SourceLocation& where, const std::string& field) {
  std::vector<CompiledField> out;
  for (const auto& [name, group] : regex.NamedCapturingGroups()) {
    auto it = declared.find(name);
    if (it == declared.end()) fail(kRuleRegex, where, field, "named group '" + name + "' has no type under fields");
    out.push_back({name, it->second, group});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.group < b.group; });
  return out;
}

bool has_field(const std::vector<CompiledField>& fields, const std::string& name) {
  return std::any_of(fields.begin(), fields.end(), [&](const CompiledField& f) { return f.name == name; });
}

CompiledExtractionRule compile_extraction(const ExtractionRuleDef& def) {
  CompiledExtractionRule rule;
  rule.def = def;
  const std::string where = "extract." + def.id;
  rule.regex = compile_regex(def.regex, def.regex_where, where + ".regex");

  std::map<std::string, FieldType> declared;
  for (const auto& f : def.fields) declared[f.name] = f.type;
  rule.fields = typed_groups(*rule.regex, declared, def.regex_where, where + ".regex");
  if (def.block) {
    CompiledBlock block;
    block.end = compile_regex(def.block->end, def.block->end_where, where + ".block.end");
    block.end_fields = typed_groups(*block.end, declared, def.block->end_where, where + ".block.end");
    if (!def.block->abort.empty()) {
      block.abort = compile_regex(def.block->abort, def.block->abort_where, where + ".block.abort");
      block.abort_fields = typed_groups(*block.abort, declared, def.block->abort_where, where + ".block.abort");
    }
    if (!def.block->key.empty()) {
      const std::string& key = def.block->key;
      if (!has_field(rule.fields, key) || !has_field(block.end_fields, key)) {
        fail(kRuleField, def.block->where, where + ".block.key",
             "'" + key + "' must be a named group of both regex and block.end");
      }
    }
    rule.block = std::move(block);
  }
  for (const auto& f : def.fields) {
    const bool captured = has_field(rule.fields, f.name) || (rule.block && has_field(rule.block->end_fields, f.name));
    if (!captured) {
      fail(kRuleField, def.where, where + ".fields." + f.name,
           std::string("no named group (?P<") + f.name + ">...) in regex" + (def.block ? " or block.end" : ""));
    }
    if (def.constants.contains(f.name)) fail(kRuleField, def.where, where + ".set." + f.name, "also a captured field");
  }
  // A threshold names a captured number; a bit mask an integer.
  const auto numeric = [&](const std::string& name, bool integer_only) {
    auto it = declared.find(name);
    return it != declared.end() && (it->second == FieldType::Int || (!integer_only && it->second == FieldType::Number));
  };
  for (const auto& [name, bound] : def.at_least)
    if (!numeric(name, false)) fail(kRuleField, def.where, where + ".at_least." + name, "not a field of type int or number");
  for (const auto& [name, mask] : def.any_bits)
    if (!numeric(name, true)) fail(kRuleField, def.where, where + ".any_bits." + name, "not a field of type int");
  return rule;
}

// Runs a block rule over one example's lines exactly as the extractor does for one stream.
std::vector<CompletedBlock> run_block_example(const CompiledExtractionRule& rule, const std::string& text,
                                              bool from_start) {
  std::vector<CompletedBlock> out;
  BlockTracker tracker;
  uint64_t index = 0;
  for (const auto line : split_lines(text)) {
    ++index;
    if (!tracker.empty()) {
      if (auto done = tracker.close(rule, index, line, from_start)) {
        out.push_back(std::move(*done));
        continue;
      }
    }
    if (auto fields = match_line(rule, line, from_start))
      tracker.open(rule, index, line, std::nullopt, index, true, std::move(*fields));
  }
  return out;
}

// An example is matched as a line of its source is in production: from the message start
// for a system log, anywhere for application output. No source given: the rule's first.
std::optional<nlohmann::json> example_fields(const CompiledExtractionRule& rule, const std::string& text,
                                             const std::string& source) {
  const std::string& as = source.empty() ? rule.def.sources.front() : source;
  const bool from_start = !is_application_source(as);
  if (!rule.block) return match_line(rule, text, from_start);
  auto blocks = run_block_example(rule, text, from_start);
  if (blocks.empty()) return std::nullopt;
  return std::move(blocks.front().fields);
}

void check_examples(const CompiledExtractionRule& rule) {
  const std::string where = "extract." + rule.def.id + ".examples";
  if (rule.def.match_examples.empty()) {
    fail(kRuleExample, rule.def.where, where + ".match", "every extraction rule needs at least one matching example");
  }
  const char* what = rule.block ? "lines do not make a block: " : "line does not match: ";
  for (const auto& example : rule.def.match_examples) {
    auto fields = example_fields(rule, example.line, example.source);
    if (!fields) fail(kRuleExample, example.where, where + ".match", what + example.line);
    for (const auto& [name, expected] : example.fields.items()) {
      if (!fields->contains(name)) {
        fail(kRuleExample, example.where, where + ".match",
             "field '" + name + "' was not captured from: " + example.line);
      }
      if (!json_values_equal((*fields)[name], expected)) {
        fail(kRuleExample, example.where, where + ".match",
             "field '" + name + "' is " + json_text((*fields)[name]) + ", expected " + json_text(expected));
      }
    }
  }
  for (const auto& example : rule.def.no_match_examples) {
    if (example_fields(rule, example.line, example.source)) {
      fail(
          kRuleExample, example.where, where + ".no_match",
          std::string(rule.block ? "lines make a block but must not: " : "line matches but must not: ") + example.line);
    }
  }
}

// Fields each event kind may carry: the union over the extraction rules producing it.
using KindFields = std::map<std::string, std::set<std::string>>;

KindFields collect_kind_fields(const std::vector<CompiledExtractionRule>& rules) {
  KindFields kinds;
  kinds[kJobStateKind] = {"state", "exit_code", "signal"};
  kinds[kRepeatedFailuresKind] = {"host", "jobs", "users", "window_s", "window_h"};
  for (const auto& rule : rules) {
    auto& fields = kinds[rule.def.kind];
    for (const auto& f : rule.fields) fields.insert(f.name);
    if (rule.block) {
      for (const auto& f : rule.block->end_fields) fields.insert(f.name);
    }
    for (const auto& [name, value] : rule.def.constants.items()) fields.insert(name);
  }
  return kinds;
}

void check_pattern(const EventPattern& pattern, const KindFields& kinds, const std::string& field) {
  auto it = kinds.find(pattern.kind);
  if (it == kinds.end())
    fail(kRuleRef, pattern.location, field, "no extraction rule produces kind '" + pattern.kind + "'");
  for (const auto& condition : pattern.where) {
    if (!it->second.count(condition.field)) {
      fail(kRuleRef, pattern.location, field + ".where." + condition.field,
           "kind '" + pattern.kind + "' has no field '" + condition.field + "'");
    }
  }
  for (const auto& name : pattern.present) {
    if (!it->second.count(name)) {
      fail(kRuleRef, pattern.location, field + ".present", "kind '" + pattern.kind + "' has no field '" + name + "'");
    }
  }
}

CompiledCorrelationRule compile_correlation(const CorrelationRuleDef& def, const KindFields& kinds,
                                            const std::map<std::string, CatalogTable>& catalogs) {
  const std::string where = "correlate." + def.id;
  check_pattern(def.root, kinds, where + ".root");
  for (size_t i = 0; i < def.explains.size(); ++i) {
    check_pattern(def.explains[i], kinds, where + ".explains[" + std::to_string(i) + "]");
  }
  if (def.catalog) {
    if (!catalogs.count(def.catalog->table))
      fail(kRuleRef, def.root.location, where + ".root.catalog.table", "no catalog named '" + def.catalog->table + "'");
    if (!kinds.at(def.root.kind).count(def.catalog->key_field)) {
      fail(kRuleRef, def.root.location, where + ".root.catalog.key",
           "kind '" + def.root.kind + "' has no field '" + def.catalog->key_field + "'");
    }
    for (const auto& s : def.catalog->severities) {
      if (!is_severity(s))
        fail(kRuleField, def.root.location, where + ".root.catalog.severities", "unknown severity '" + s + "'");
      if (s == "benign")
        fail(kRuleField, def.root.location, where + ".root.catalog.severities", "benign reports are never root causes");
    }
  }

  if (def.distinct) {
    const auto& fields = kinds.at(def.root.kind);
    if (!fields.count(def.distinct->field)) {
      fail(kRuleRef, def.distinct->where, where + ".root.distinct.field",
           "kind '" + def.root.kind + "' has no field '" + def.distinct->field + "'");
    }
    // same_gpu groups events by their PCI bus id: a kind without one could never qualify.
    if (def.distinct->scope == Scope::SameGpu && !fields.count("pci")) {
      fail(kRuleRef, def.distinct->where, where + ".root.distinct.scope",
           "scope same_gpu needs a 'pci' field, which kind '" + def.root.kind + "' does not have");
    }
  }

  CompiledCorrelationRule rule;
  rule.def = def;
  const bool needs_trust = def.catalog.has_value() || domain_requires_trust(def.domain);
  // An untrusted report may point at the hardware (CUDA's "uncorrectable ECC error" in the
  // job's output) only as a low-confidence inference, which names the domain and acts on
  // nothing: a user must not be able to drain a node by printing a line.
  const bool low_inference = def.confidence == "low" && !def.catalog;
  if (needs_trust && def.root_trusted_given && !def.root_trusted && !low_inference) {
    fail(kRuleTrust, def.root.location, where + ".root.trusted",
         "a " + (def.catalog ? std::string("catalog-driven") : def.domain) +
             " root cause needs evidence from a trusted source (or confidence: low)");
  }
  if (def.confidence == "low" && (def.action == "catalog" || is_disruptive_action(def.action))) {
    fail(kRuleTrust, def.where, where + ".action",
         "a low-confidence rule never drains, reboots or resets (action '" + def.action + "')");
  }
  rule.requires_trusted = def.root_trusted_given ? def.root_trusted : needs_trust;

  std::set<std::string> allowed = {"node", "source", "kind", "job_id", "state"};
  for (const auto& f : kinds.at(def.root.kind)) allowed.insert(f);
  if (def.catalog) {
    for (const char* c : {"catalog.name", "catalog.severity", "catalog.domain_hint", "catalog.key"}) allowed.insert(c);
  }
  if (def.distinct) {
    for (const char* c : {"distinct.count", "distinct.values"}) allowed.insert(c);
  }
  for (const auto& name : template_placeholders(def.summary, def.summary_where, where + ".summary")) {
    if (!allowed.count(name))
      fail(kRuleTemplate, def.summary_where, where + ".summary", "unknown placeholder {" + name + "}");
  }
  return rule;
}

}  // namespace

std::vector<std::string> template_placeholders(const std::string& text, const SourceLocation& where,
                                               const std::string& field) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find_first_of("{}", pos);
    if (open == std::string::npos) break;
    if (text[open] == '}') fail(kRuleTemplate, where, field, "unbalanced '}'");
    const size_t close = text.find('}', open);
    if (close == std::string::npos) fail(kRuleTemplate, where, field, "unbalanced '{'");
    const std::string name = text.substr(open + 1, close - open - 1);
    if (name.empty() || name.find('{') != std::string::npos) fail(kRuleTemplate, where, field, "bad placeholder");
    out.push_back(name);
    pos = close + 1;
  }
  return out;
}

std::unique_ptr<RulePack> compile_pack(DefinitionSet definitions, bool candidate_scan) {
  auto pack = std::make_unique<RulePack>();
  pack->name = definitions.manifest.name;
  pack->version = definitions.manifest.version;
  pack->clock_skew_us = definitions.manifest.clock_skew_ms * 1000;
  pack->catalogs = std::move(definitions.catalogs);

  std::vector<std::vector<ExtractionRuleDef>> shipped_extract, site_extract;
  std::vector<std::vector<CorrelationRuleDef>> shipped_correlate, site_correlate;
  for (auto& f : definitions.shipped) {
    shipped_extract.push_back(f.extraction);
    shipped_correlate.push_back(f.correlation);
  }
  for (auto& f : definitions.site) {
    site_extract.push_back(f.extraction);
    site_correlate.push_back(f.correlation);
  }

  for (const auto& def : merge_by_id(shipped_extract, site_extract, "extract")) {
    pack->extraction.push_back(compile_extraction(def));
    check_examples(pack->extraction.back());
    pack->examples += def.match_examples.size() + def.no_match_examples.size();
  }
  if (candidate_scan) {
    plan_candidate_scan(pack->extraction);
    pack->scanner = CandidateScanner::build(pack->extraction);
  }
  const KindFields kinds = collect_kind_fields(pack->extraction);
  for (const auto& def : merge_by_id(shipped_correlate, site_correlate, "correlate")) {
    pack->correlation.push_back(compile_correlation(def, kinds, pack->catalogs));
  }
  std::sort(pack->correlation.begin(), pack->correlation.end(), [](const auto& a, const auto& b) {
    if (a.def.precedence != b.def.precedence) return a.def.precedence > b.def.precedence;
    return a.def.id < b.def.id;
  });
  // A kind declared benign is extracted by some rule and is the root of none.
  for (const auto* files : {&definitions.shipped, &definitions.site}) {
    for (const auto& file : *files) {
      for (const auto& benign : file.benign) {
        if (!kinds.count(benign.kind))
          fail(kRuleRef, benign.where, "benign", "no extraction rule produces kind '" + benign.kind + "'");
        for (const auto& rule : pack->correlation) {
          if (rule.def.root.kind == benign.kind)
            fail(kRuleRef, benign.where, "benign",
                 "kind '" + benign.kind + "' is declared benign but is the root of " + rule.def.id);
        }
        pack->benign_kinds.insert(benign.kind);
      }
    }
  }
  return pack;
}

}  // namespace attrib::rules::detail
