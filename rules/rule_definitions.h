// Rule definitions: what the YAML says, validated for shape but not yet compiled
// (no regex objects, no cross-file references resolved). docs/rules.md documents
// the schema these structs mirror.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/load_error.h"
#include "rules/yaml_reader.h"

namespace attrib::rules::detail {

enum class FieldType { Int, String, Hex, Number };  // Number: a decimal such as a metric's 12.5

struct FieldDef {
  std::string name;
  FieldType type = FieldType::String;
};

// Examples name the source whose lines they are (default: the rule's first source), since
// a system source's lines are matched from the start of the emitter's message and an
// application's anywhere (is_application_source).
struct MatchExample {
  std::string line;
  nlohmann::json fields = nlohmann::json::object();  // expected subset of the captured fields
  std::string source;
  SourceLocation where;
};

struct NoMatchExample {
  std::string line;
  std::string source;
  SourceLocation where;
};

// A multi-line block (docs/rules.md, "Multi-line blocks"): `regex` matches its first
// line, `end` its last; the lines between are only counted.
struct BlockDef {
  std::string end;          // RE2, named groups typed under the rule's `fields`
  int64_t max_lines = 100;  // the end must come within this many lines (start included)
  std::string abort;        // optional RE2: a line that ends the block without an event
  std::string key;          // optional field captured by both regexes: tells interleaved blocks apart
  SourceLocation where;
  SourceLocation end_where;
  SourceLocation abort_where;
};

// Turns one line from one source into a typed event.
struct ExtractionRuleDef {
  std::string id;
  std::string kind;
  std::string description;
  std::vector<std::string> sources;                     // kernel syslog fabricmanager slurm app app.rank<N>
  std::vector<std::string> prefilter;                   // literals; a line must contain one before the regex runs
  std::string regex;                                    // RE2 syntax, named groups (?P<name>...); a block's first line
  std::vector<FieldDef> fields;                         // type of every named group
  nlohmann::json constants = nlohmann::json::object();  // `set:` fields added to every event
  std::vector<MatchExample> match_examples;
  std::vector<NoMatchExample> no_match_examples;
  std::optional<BlockDef> block;  // set: a multi-line rule; examples may then span lines
  // A system-log format that embeds user-chosen text (a crashing program's name, a task's
  // comm): a line this rule matches is that message, and no other rule reads it, so the
  // user's text can never pass for another emitter's message (docs/security.md).
  bool claims_line = false;
  // `scope: node_wide` (docs/rules.md, "Evidence that belongs to the job"): the family
  // reports a fault of the whole node (the global OOM killer, a hung kernel task), which
  // counts for every job there whatever process, user or job its line names. Default
  // `scoped`: a line naming another job, user or GPU is a neighbour's.
  bool node_wide = false;
  bool override_shipped = false;
  // Thresholds on captured numbers (a metric line's value or delta, docs/rules.md
  // "Thresholds"): the line is an event only when every named field is at least its
  // bound, and has at least one of its mask's bits set.
  std::map<std::string, double> at_least;
  std::map<std::string, int64_t> any_bits;
  SourceLocation where;
  SourceLocation regex_where;
};

// Relation between a root event and an event it explains.
enum class Scope { Job, SameNode, SameGpu };

struct FieldCondition {
  std::string field;
  std::vector<nlohmann::json> any_of;
};

struct EventPattern {
  std::string kind;
  std::vector<FieldCondition> where;
  std::vector<std::string> present;  // fields that must exist, with any value
  Scope scope = Scope::Job;
  SourceLocation location;
};

// Root condition that takes domain/severity/action from a data table (e.g. the Xid
// catalog), keyed by one event field.
struct CatalogCondition {
  std::string table;
  std::string key_field;
  std::vector<std::string> severities;  // only rows with one of these severities qualify
  std::vector<std::string> actions;     // optional: only rows with one of these actions qualify
};

// A root condition over several events (`root.distinct`, docs/rules.md): the root event
// counts only if the events meeting the rest of the root condition within `scope` of it
// (itself included) carry at least `at_least` distinct values of `field`. Values listed
// in `ignore` (e.g. pid '<unknown>') are not counted.
struct DistinctCondition {
  std::string field;
  int64_t at_least = 2;
  Scope scope = Scope::Job;
  std::vector<std::string> ignore;
  SourceLocation where;
};

struct CorrelationRuleDef {
  std::string id;
  std::string description;
  int precedence = 0;
  std::string domain;  // a verdict domain, or "catalog"
  std::string action;  // a verdict action, or "catalog"
  // How sure a verdict decided by this rule can be (docs/rules.md "Confidence"): high for
  // a trusted report of the cause itself; low for an inference from untrusted or
  // symptom-class evidence (the job's own output, a peer's complaint), which never acts.
  std::string confidence = "high";
  EventPattern root;
  bool root_trusted = false;
  bool root_trusted_given = false;
  std::optional<CatalogCondition> catalog;
  std::optional<DistinctCondition> distinct;
  std::vector<EventPattern> explains;
  std::string summary;
  bool override_shipped = false;
  SourceLocation where;
  SourceLocation summary_where;
};

struct ActionOverride {
  std::string domain;
  std::string severity;
  std::string action;
};

// A decode condition of a catalog (pack.yaml `catalogs[].match`): a row applies to an
// event only when the event's `field` matches one of the row's `columns` (an empty cell
// matches anything). `type`: `bits` (a 32-character 0/1/- mask, most significant bit
// first, against a hex value), `hex` (hex equality; "a/b" lists alternatives) or `name`
// (the row's "A/B" names; only prefers rows when several match, never excludes one).
struct CatalogMatch {
  std::vector<std::string> columns;
  std::string field;
  std::string type;
};

// A decode table's secondary action (pack.yaml `catalogs[].secondary_action`): a row
// whose `column` cell is set replaces its action with that cell (through action_map)
// when the event also matches the row's `when` cells, e.g. NVLink5 RLW_RXPIPE rows
// that need a GPU reset when IntrInfo bit 10 is set.
struct CatalogSecondaryAction {
  std::string column;
  CatalogMatch when;  // type bits or hex
};

// A tab-separated data table loaded as rules (pack.yaml `catalogs:`).
struct CatalogDef {
  std::string name;
  std::string file;  // relative to the pack directory
  std::string key_column;
  std::string name_column;
  std::string domain_column;
  std::string severity_column;
  std::map<std::string, std::string> domain_map;           // domain_hint -> verdict domain
  std::map<std::string, std::string> action_by_severity;   // severity -> verdict action
  std::vector<ActionOverride> action_overrides;            // (domain, severity) -> action
  std::map<std::string, std::string> severity_map;         // severity cell -> severity (empty: cells are severities)
  std::string action_column;                               // optional: the row's action comes from this column
  std::map<std::string, std::string> action_map;           // action_column cell -> verdict action
  std::string name_format;                                 // optional: "{column} ..." builds the row's name
  std::vector<CatalogMatch> match;                         // decode tables: rows sharing a key, told apart by these
  std::optional<CatalogSecondaryAction> secondary_action;  // decode tables: a second action for some rows
  SourceLocation where;
};

struct PackManifest {
  std::string name;
  std::string version;
  int64_t clock_skew_ms = 5000;
  std::vector<std::pair<std::string, SourceLocation>> rule_files;
  std::vector<CatalogDef> catalogs;
};

// An event kind a rule file declares benign (`benign: [kind, ...]`): extracted so that it
// is visible, never a root cause (docs/rules.md "Every kind has a role").
struct BenignKind {
  std::string kind;
  SourceLocation where;
};

struct RuleFileDefs {
  std::vector<ExtractionRuleDef> extraction;
  std::vector<CorrelationRuleDef> correlation;
  std::vector<BenignKind> benign;
};

PackManifest parse_manifest(const YamlFile& file);
RuleFileDefs parse_rule_file(const YamlFile& file);

// YAML scalar -> JSON value: integers become numbers, everything else a string.
nlohmann::json scalar_to_json(const YAML::Node& scalar);

// Verdict vocabularies (ARCHITECTURE.md, verdict-and-bundle.md).
bool is_root_domain(const std::string& domain);  // domains a rule may assign
bool is_action(const std::string& action);
bool is_confidence(const std::string& confidence);  // high | medium | low
// Actions that take a node or GPU out of service: never on low confidence.
bool is_disruptive_action(const std::string& action);
bool is_known_source(const std::string& source);
// Every source name but app.rank<N>: kernel syslog fabricmanager slurm spank prometheus gpus app.
const std::vector<std::string>& fixed_sources();
// app and app.rank<N>: the job's own output. Every other source is a system log whose lines
// a rule matches from the start of the emitter's message, never inside it.
bool is_application_source(const std::string& source);
bool domain_requires_trust(const std::string& domain);

}  // namespace attrib::rules::detail
