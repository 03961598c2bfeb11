// The compiled, immutable rule pack (engine.h forward-declares RulePack).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

#include "attrib/rules/engine.h"
#include "catalog_loader.h"
#include "rule_definitions.h"

namespace attrib::rules {

namespace detail {

struct CompiledField {
  std::string name;
  FieldType type = FieldType::String;
  int group = 0;  // RE2 capture group index
};

struct CompiledExtractionRule {
  ExtractionRuleDef def;
  std::unique_ptr<re2::RE2> regex;
  std::vector<CompiledField> fields;
};

struct CompiledCorrelationRule {
  CorrelationRuleDef def;
  bool requires_trusted = false;
};

// The event kind the correlator synthesises from the accounting record.
inline constexpr const char* kJobStateKind = "slurm.job_state";
// The domain of a locator rule: it points where a failure showed first, not why.
inline constexpr const char* kLocatorDomain = "UNATTRIBUTED";

// Applies one extraction rule to a payload: literal prefilter, then the regex, then
// typed conversion of captures. nullopt when the line does not match (or a typed
// capture does not convert, e.g. an int group that captured "abc").
std::optional<nlohmann::json> match_line(const CompiledExtractionRule& rule, std::string_view text);

}  // namespace detail

class RulePack {
 public:
  std::string name;
  std::string version;
  std::string hash;  // "sha256:<hex>"
  int64_t clock_skew_us = 0;
  std::vector<std::string> files;
  size_t examples = 0;
  std::vector<detail::CompiledExtractionRule> extraction;    // in load order
  std::vector<detail::CompiledCorrelationRule> correlation;  // by (precedence desc, id)
  std::map<std::string, detail::CatalogTable> catalogs;
};

}  // namespace attrib::rules
