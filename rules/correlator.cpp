// correlate(): events + job facts -> verdict. Semantics (docs/rules.md):
//
//  1. Identical events are folded and all events put in the engine's one order
//     (event_order.h); ids e1..eN follow that order. The accounting state becomes a
//     synthetic `slurm.job_state` event when some rule can take it as a root, and so do
//     the head's counts of other jobs' unexplained failures on a node
//     (`node.repeated_failures`, JobFacts::repeated_failures).
//     Whose events they are (rules/ownership.h): one that names another job, another
//     user or a GPU the job did not hold is a neighbour, listed apart and never judged;
//     lines that only tell what the job held complete the allocation and are not listed.
//  2. A job that COMPLETED with exit 0 and no signal is NONE: nothing to attribute.
//  3. Candidates: for each event, the highest-precedence rule (then lowest id) whose
//     root condition it meets, including trust, catalog eligibility and, for
//     `root.distinct`, enough distinct values among the events of its scope.
//  4. Candidates are visited by (precedence desc, event order, rule id). One that an
//     already kept root explains is demoted to a symptom; otherwise it is kept.
//  5. The kept roots of the highest precedence decide the domain: two or more domains
//     there -> AMBIGUOUS with candidates. Otherwise the earliest kept root of that
//     domain is the root cause; later kept roots of the same domain are its fan-out.
//     Locator roots (domain UNATTRIBUTED) never decide; with no other kept root the
//     verdict is UNATTRIBUTED and the earliest locator root names the affected node.
//  6. Every other event explained by a kept root is a symptom; the rest unexplained.
//  7. Coverage (rules.md, "Coverage lowers certainty"): a (node, source) whose coverage
//     is missing is named in missing_sources when an event it could hold would decide or
//     change the verdict; a locator's "first failure" that such a source could move is
//     not claimed (no affected node).
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/comment.h"
#include "core/json_text.h"
#include "rules/event_order.h"
#include "rules/hung_rank.h"
#include "rules/ownership.h"
#include "rules/rule_pack.h"

namespace attrib::rules {

namespace {

using detail::CompiledCorrelationRule;
using detail::EventPattern;
using detail::Scope;
using json = nlohmann::json;

struct Candidate {
  size_t event = 0;  // index into the ordered events
  const CompiledCorrelationRule* rule = nullptr;
  std::string domain;
  std::string action;
  const CatalogEntry* catalog = nullptr;
  const std::vector<std::string>* distinct = nullptr;  // root.distinct: the values counted, in event order
};

// root.distinct, per rule: scope key -> the distinct values of the field, in event order.
using DistinctGroups = std::map<std::string, std::vector<std::string>>;

bool value_matches(const json& actual, const json& expected) {
  if (actual.is_number_integer() && expected.is_number_integer())
    return actual.get<int64_t>() == expected.get<int64_t>();
  return value_text(actual) == value_text(expected);
}

bool fields_match(const Event& e, const EventPattern& pattern) {
  if (e.kind != pattern.kind) return false;
  for (const auto& condition : pattern.where) {
    auto it = e.fields.find(condition.field);
    if (it == e.fields.end()) return false;
    const bool any = std::any_of(condition.any_of.begin(), condition.any_of.end(),
                                 [&](const json& v) { return value_matches(*it, v); });
    if (!any) return false;
  }
  for (const auto& name : pattern.present) {
    if (!e.fields.contains(name)) return false;
  }
  return true;
}

std::optional<std::string> pci_of(const Event& e) {
  auto it = e.fields.find("pci");
  if (it == e.fields.end() || !it->is_string()) return std::nullopt;
  return detail::normalize_pci(it->get<std::string>());
}

const CatalogEntry* catalog_row(const RulePack& pack, const CompiledCorrelationRule& rule, const Event& e) {
  const auto& condition = *rule.def.catalog;
  auto key = e.fields.find(condition.key_field);
  if (key == e.fields.end()) return nullptr;
  return detail::find_catalog_entry(pack.catalogs.at(condition.table), value_text(*key), e.fields);
}

// Everything of the root condition but `distinct`: kind, where, present, trust, catalog.
std::optional<Candidate> single_root_candidate(const RulePack& pack, const CompiledCorrelationRule& rule,
                                               const std::vector<Event>& events, size_t index) {
  const Event& e = events[index];
  if (!fields_match(e, rule.def.root)) return std::nullopt;
  if (rule.requires_trusted && !e.trusted) return std::nullopt;
  Candidate c{index, &rule, rule.def.domain, rule.def.action, nullptr};
  if (rule.def.catalog) {
    const CatalogEntry* row = catalog_row(pack, rule, e);
    if (row == nullptr || !row->root_eligible) return std::nullopt;
    const auto& severities = rule.def.catalog->severities;
    if (std::find(severities.begin(), severities.end(), row->severity) == severities.end()) return std::nullopt;
    const auto& actions = rule.def.catalog->actions;
    if (!actions.empty() && std::find(actions.begin(), actions.end(), row->action) == actions.end())
      return std::nullopt;
    c.catalog = row;
    if (c.domain == "catalog") c.domain = row->domain;
    if (c.action == "catalog") c.action = row->action;
  }
  return c;
}

// The group an event belongs to under a distinct condition's scope; none when the event
// lacks what the scope compares (a node, a PCI bus id).
std::optional<std::string> distinct_group(Scope scope, const Event& e) {
  switch (scope) {
    case Scope::Job:
      return std::string();
    case Scope::SameNode:
      if (e.node.empty()) return std::nullopt;
      return e.node;
    case Scope::SameGpu: {
      const auto pci = pci_of(e);
      if (e.node.empty() || !pci) return std::nullopt;
      return e.node + '\n' + *pci;
    }
  }
  return std::nullopt;
}

// The value an event contributes to a distinct condition; none when the field is absent
// or listed under `ignore` (e.g. pid '<unknown>': not a process that can be told apart).
std::optional<std::string> distinct_value(const detail::DistinctCondition& d, const Event& e) {
  auto it = e.fields.find(d.field);
  if (it == e.fields.end()) return std::nullopt;
  std::string value = value_text(*it);
  if (std::find(d.ignore.begin(), d.ignore.end(), value) != d.ignore.end()) return std::nullopt;
  return value;
}

// The groups of a rule with root.distinct: every event meeting the rest of the root
// condition adds its value to its scope's group. Events are visited in the engine's
// order, so the values (and a summary naming them) do not depend on input order.
DistinctGroups distinct_groups(const RulePack& pack, const CompiledCorrelationRule& rule,
                               const std::vector<Event>& events) {
  DistinctGroups groups;
  std::set<std::pair<std::string, std::string>> seen;  // (group, value): a storm of pids stays n log n
  const auto& d = *rule.def.distinct;
  for (size_t i = 0; i < events.size(); ++i) {
    if (!single_root_candidate(pack, rule, events, i)) continue;
    const auto group = distinct_group(d.scope, events[i]);
    const auto value = distinct_value(d, events[i]);
    if (!group || !value) continue;
    if (seen.emplace(*group, *value).second) groups[*group].push_back(*value);
  }
  return groups;
}

// The full root condition. With root.distinct the event must itself carry a counted
// value and its group must hold at least `at_least` of them.
std::optional<Candidate> root_candidate(const RulePack& pack, const CompiledCorrelationRule& rule,
                                        const DistinctGroups* groups, const std::vector<Event>& events, size_t index) {
  auto c = single_root_candidate(pack, rule, events, index);
  if (!c || !rule.def.distinct) return c;
  const auto& d = *rule.def.distinct;
  const auto group = distinct_group(d.scope, events[index]);
  if (!group || !distinct_value(d, events[index])) return std::nullopt;
  auto it = groups->find(*group);
  if (it == groups->end() || it->second.size() < static_cast<size_t>(d.at_least)) return std::nullopt;
  c->distinct = &it->second;
  return c;
}

// Does root candidate `root` explain event `e` (a symptom of it)?
bool explains(const RulePack& pack, const Candidate& root, const std::vector<Event>& events, size_t index) {
  if (index == root.event) return false;
  const Event& cause = events[root.event];
  const Event& e = events[index];
  // A symptom cannot precede its cause by more than the clock skew tolerance. Events
  // without a time are ordered only within their stream, so no constraint applies.
  if (cause.time && e.time && *e.time < *cause.time - pack.clock_skew_us) return false;
  for (const auto& pattern : root.rule->def.explains) {
    if (!fields_match(e, pattern)) continue;
    switch (pattern.scope) {
      case Scope::Job:
        return true;
      case Scope::SameNode:
        if (!cause.node.empty() && cause.node == e.node) return true;
        break;
      case Scope::SameGpu: {
        const auto a = pci_of(cause), b = pci_of(e);
        if (!cause.node.empty() && cause.node == e.node && a && b && *a == *b) return true;
        break;
      }
    }
  }
  return false;
}

std::string render_summary(const Candidate& c, const Event& e, const JobFacts& job) {
  const std::string& text = c.rule->def.summary;
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find('{', pos);
    if (open == std::string::npos) {
      out += text.substr(pos);
      break;
    }
    out += text.substr(pos, open - pos);
    const size_t close = text.find('}', open);  // balanced: checked at load time
    const std::string name = text.substr(open + 1, close - open - 1);
    std::string value = "?";
    if (name == "node")
      value = e.node.empty() ? "?" : e.node;
    else if (name == "source")
      value = e.source;
    else if (name == "kind")
      value = e.kind;
    else if (name == "job_id")
      value = job.job_id;
    else if (name == "state" && !e.fields.contains("state"))
      value = job.state;
    else if (name.rfind("catalog.", 0) == 0 && c.catalog) {
      const std::string what = name.substr(8);
      if (what == "name")
        value = c.catalog->name;
      else if (what == "severity")
        value = c.catalog->severity;
      else if (what == "domain_hint")
        value = c.catalog->domain_hint;
      else if (what == "key")
        value = c.catalog->key;
    } else if (name == "distinct.count" && c.distinct) {
      value = std::to_string(c.distinct->size());
    } else if (name == "distinct.values" && c.distinct) {
      value.clear();
      for (const auto& v : *c.distinct) value += (value.empty() ? "" : ", ") + v;
    } else if (e.fields.contains(name)) {
      value = value_text(e.fields[name]);
    }
    out += value;
    pos = close + 1;
  }
  return out;
}

// For AMBIGUOUS verdicts with disagreeing candidates: the most protective action wins
// (a node that may be broken is drained rather than handed the next job).
int action_strength(const std::string& action) {
  static const std::vector<std::string> kOrder = {
      "NONE",           "RESUBMIT",  "FIX_APPLICATION", "FIX_CONFIGURATION", "CONTACT_VENDOR", "INSPECT_NETWORK",
      "INSPECT_FABRIC", "RESET_GPU", "REBOOT_NODE",     "DRAIN_NODE"};
  auto it = std::find(kOrder.begin(), kOrder.end(), action);
  return it == kOrder.end() ? 0 : static_cast<int>(it - kOrder.begin());
}

// A locator rule (domain UNATTRIBUTED) points at where a failure showed first without
// naming a cause: it never decides the domain, it only explains later events of its
// kind and, when nothing else decides, names the affected node (docs/rules.md).
// The driver prints "NVRM: GPU at PCI:<bdf>: GPU-<uuid>" before a GPU's first Xid: it
// names the failed GPU, so the root cause gains fields.gpu_uuid (what an admin quotes to
// the vendor). The line itself stays listed as evidence the root explains: verdict v1
// has no other place for it, and a bundle exported from the verdict must hold it.
void name_root_gpu_uuid(RootCause& root, const std::vector<Event>& events) {
  const auto pci = pci_of(root.event);
  if (!pci) return;
  for (const Event& e : events) {
    if (e.kind != "gpu.uuid" || e.node != root.event.node || pci_of(e) != pci) continue;
    auto uuid = e.fields.find("uuid");
    if (uuid == e.fields.end() || !uuid->is_string()) continue;
    root.event.fields["gpu_uuid"] = *uuid;
    return;
  }
}

bool is_locator(const Candidate& c) { return c.domain == detail::kLocatorDomain; }

bool job_succeeded(const JobFacts& job) { return job.state == "COMPLETED" && job.exit_code == 0 && job.signal == 0; }

std::optional<Event> job_state_event(const RulePack& pack, const JobFacts& job) {
  Event e;
  e.kind = detail::kJobStateKind;
  e.rule = "accounting";
  e.source = "slurm";
  e.time = job.end;
  e.trusted = true;  // slurmdbd's record, written by Slurm itself
  e.line = "JobId=" + job.job_id + " State=" + job.state + " ExitCode=" + std::to_string(job.exit_code) + ":" +
           std::to_string(job.signal);
  e.fields = {{"state", job.state}, {"exit_code", job.exit_code}, {"signal", job.signal}};
  for (const auto& rule : pack.correlation) {
    if (fields_match(e, rule.def.root)) return e;
  }
  return std::nullopt;
}

// A node's repeated unexplained failures (JobFacts::repeated_failures, from the head's
// archive), one event per node, when some rule takes them as a root. Untrusted: an
// inference from other verdicts, never a report of the node's fault.
std::vector<Event> repeated_failure_events(const RulePack& pack, const JobFacts& job) {
  std::vector<Event> out;
  for (const NodeFailureHistory& h : job.repeated_failures) {
    Event e;
    e.kind = detail::kRepeatedFailuresKind;
    e.rule = "archive";
    e.source = "archive";
    e.node = h.node;
    e.time = job.end;
    e.trusted = false;
    e.line = h.node + ": " + std::to_string(h.other_jobs) + " other jobs (" + std::to_string(h.other_users) +
             " other users) failed here in " + std::to_string(h.window_s) + " s with no cause found";
    e.fields = {{"host", h.node},
                {"jobs", h.other_jobs},
                {"users", h.other_users},
                {"window_s", h.window_s},
                {"window_h", h.window_s / 3600}};
    if (std::any_of(pack.correlation.begin(), pack.correlation.end(),
                    [&](const auto& rule) { return fields_match(e, rule.def.root); }))
      out.push_back(std::move(e));
  }
  return out;
}

std::vector<Event> fold_and_order(std::vector<Event> input) {
  std::unordered_map<std::string, size_t> index;
  std::vector<Event> folded;
  folded.reserve(input.size());
  for (auto& e : input) {
    e.id.clear();
    std::string key = detail::fold_key(e);
    auto it = index.find(key);
    if (it != index.end()) {
      detail::fold_into(folded[it->second], e);
    } else {
      index.emplace(std::move(key), folded.size());
      folded.push_back(std::move(e));
    }
  }
  std::sort(folded.begin(), folded.end(), detail::event_less);
  for (size_t i = 0; i < folded.size(); ++i) folded[i].id = "e" + std::to_string(i + 1);
  return folded;
}

// The node an event blames: its own, unless it was logged on a host outside the job (the
// head node's slurmctld: "Killing JobId=... on failed node gpu003") and names one of the
// job's nodes in its `host` field.
void add_affected(Verdict& v, const Event& e) {
  if (e.node.empty()) return;
  const auto allocated = [&](const std::string& node) {
    return std::find(v.nodes.begin(), v.nodes.end(), node) != v.nodes.end();
  };
  auto host = e.fields.find("host");
  if (!allocated(e.node) && host != e.fields.end() && host->is_string() && allocated(host->get<std::string>())) {
    v.affected_nodes.push_back(host->get<std::string>());
    return;
  }
  v.affected_nodes.push_back(e.node);
  if (auto pci = pci_of(e)) v.affected_gpus.push_back({e.node, *pci});
}

// Keeps at most kMaxListedEvents of `listed` (already in event order): trusted ones
// first, each group in event order; returns how many were left out.
template <typename T, typename EventOf>
uint64_t cap_listed(std::vector<T>& listed, EventOf event_of) {
  if (listed.size() <= kMaxListedEvents) return 0;
  std::stable_partition(listed.begin(), listed.end(), [&](const T& item) { return event_of(item).trusted; });
  const uint64_t omitted = listed.size() - kMaxListedEvents;
  listed.resize(kMaxListedEvents);
  std::stable_sort(listed.begin(), listed.end(),
                   [&](const T& a, const T& b) { return detail::event_less(event_of(a), event_of(b)); });
  return omitted;
}

void sort_unique(Verdict& v) {
  std::sort(v.affected_nodes.begin(), v.affected_nodes.end());
  v.affected_nodes.erase(std::unique(v.affected_nodes.begin(), v.affected_nodes.end()), v.affected_nodes.end());
  auto gpu_less = [](const AffectedGpu& a, const AffectedGpu& b) {
    return std::tie(a.node, a.pci) < std::tie(b.node, b.pci);
  };
  auto gpu_equal = [](const AffectedGpu& a, const AffectedGpu& b) { return a.node == b.node && a.pci == b.pci; };
  std::sort(v.affected_gpus.begin(), v.affected_gpus.end(), gpu_less);
  v.affected_gpus.erase(std::unique(v.affected_gpus.begin(), v.affected_gpus.end(), gpu_equal), v.affected_gpus.end());
}

// --- Coverage (step 7) ----------------------------------------------------------------

bool is_missing(CoverageStatus status) {
  return status == CoverageStatus::Partial || status == CoverageStatus::Failed || status == CoverageStatus::Timeout ||
         status == CoverageStatus::Unavailable || status == CoverageStatus::Refused;
}

bool is_application_source(const std::string& source) { return source == "app" || source.rfind("app.", 0) == 0; }

// Could a line of `source` yield a root event for `rule`? Some extraction rule producing
// the root kind reads the source, and the source can be trusted when the rule needs it.
bool source_can_root(const RulePack& pack, const CompiledCorrelationRule& rule, const std::string& source) {
  if (rule.requires_trusted && is_application_source(source)) return false;
  return std::any_of(pack.extraction.begin(), pack.extraction.end(), [&](const auto& extraction) {
    return extraction.def.kind == rule.def.root.kind && detail::rule_applies(extraction.def, source);
  });
}

// Could a root of `rule` on `node` explain `e`? (Its time is unknown: no skew check.)
bool could_explain(const CompiledCorrelationRule& rule, const Event& e, const std::string& node) {
  return std::any_of(rule.def.explains.begin(), rule.def.explains.end(), [&](const EventPattern& pattern) {
    return fields_match(e, pattern) && (pattern.scope == Scope::Job || e.node == node);
  });
}

std::string missing_note(const Coverage& c) {
  if (c.status == CoverageStatus::Partial) return c.source + " log from " + c.node + " is partial";
  return "no " + c.source + " log from " + c.node + " (" + to_string(c.status) + ")";
}

// Events on other nodes whose fields name `node` (srun's "task 1 on cpu002", slurmctld's
// failed node, a SPANK record's node): symptoms pointing at a peer whose evidence is missing.
std::vector<std::string> pointers_to(const std::vector<Event>& events, const std::string& node) {
  std::vector<std::string> ids;
  for (const auto& e : events) {
    if (e.node == node) continue;
    for (const char* field : {"host", "node"}) {
      auto it = e.fields.find(field);
      if (it != e.fields.end() && it->is_string() && it->get<std::string>() == node) {
        ids.push_back(e.id);
        break;
      }
    }
  }
  return ids;
}

// What the verdict rests on, for deciding which missing sources matter.
struct Decision {
  enum class Kind { None, Unattributed, Ambiguous, Decided } kind = Kind::None;
  int precedence = -1;                 // of the deciding roots (Ambiguous, Decided)
  std::string domain;                  // Decided
  std::vector<size_t> contested;       // events of the competing candidates / the root
  const Candidate* locator = nullptr;  // Unattributed: the locator naming the node
  std::string confidence = "low";      // of the deciding rule(s), before coverage lowers it
};

// Would an event from (node, source) decide or change this verdict? With nothing decided,
// any root would; with a decision at precedence P, a higher root would win, and an equal
// one that explains a contested event would order it.
bool source_matters(const RulePack& pack, const Decision& d, const std::vector<Event>& events, const std::string& node,
                    const std::string& source) {
  for (const auto& rule : pack.correlation) {
    if (rule.def.domain == detail::kLocatorDomain || !source_can_root(pack, rule, source)) continue;
    switch (d.kind) {
      case Decision::Kind::None:
        return false;
      case Decision::Kind::Unattributed:
        return true;
      case Decision::Kind::Ambiguous:
      case Decision::Kind::Decided: {
        if (rule.def.precedence > d.precedence) return true;
        if (rule.def.precedence < d.precedence) break;
        // A catalog rule's domain depends on the event: it may differ.
        if (d.kind == Decision::Kind::Decided && rule.def.domain == d.domain) break;
        for (const size_t i : d.contested) {
          if (could_explain(rule, events[i], node)) return true;
        }
        break;
      }
    }
  }
  return false;
}

// Could (node, source) hold a root for the locator's rule earlier than the one it found?
bool could_move_locator(const RulePack& pack, const Candidate& locator, const std::vector<Event>& events,
                        const std::string& node, const std::string& source) {
  return node != events[locator.event].node && source_can_root(pack, *locator.rule, source);
}

void add_missing_sources(Verdict& v, const RulePack& pack, const Decision& d, const std::vector<Event>& events) {
  std::set<std::pair<std::string, std::string>> seen;
  bool locator_in_doubt = false;
  for (const auto& c : v.coverage) {  // sorted by (node, source, detail)
    if (!is_missing(c.status) || !seen.insert({c.node, c.source}).second) continue;
    const bool moves_locator = d.locator != nullptr && could_move_locator(pack, *d.locator, events, c.node, c.source);
    locator_in_doubt = locator_in_doubt || moves_locator;
    if (!moves_locator && !source_matters(pack, d, events, c.node, c.source)) continue;
    v.missing_sources.push_back({c.node, c.source, c.status, missing_note(c), pointers_to(events, c.node)});
  }
  // "A verdict that depends on a missing source is not made": the earliest failure is
  // only the earliest among what was read, so the node is not claimed.
  if (locator_in_doubt) {
    v.affected_nodes.clear();
    v.affected_gpus.clear();
  }
}

// --- Confidence -------------------------------------------------------------------------

int confidence_rank(const std::string& c) { return c == "high" ? 2 : c == "medium" ? 1 : 0; }
const char* confidence_name(int rank) { return rank >= 2 ? "high" : rank == 1 ? "medium" : "low"; }

// A low-confidence verdict names what would confirm it: the root-written sources of its
// node that could hold a trusted report of the same domain and were not read at all
// (read but partial or failed ones are listed already).
void add_confirming_sources(Verdict& v, const RulePack& pack, const std::string& node) {
  if (node.empty()) return;
  std::set<std::string> sources;
  for (const auto& rule : pack.correlation) {
    if (!rule.requires_trusted || rule.def.confidence == "low") continue;
    if (rule.def.domain != v.domain && rule.def.domain != "catalog") continue;
    for (const auto& extraction : pack.extraction) {
      if (extraction.def.kind != rule.def.root.kind) continue;
      for (const auto& source : extraction.def.sources)
        if (!is_application_source(source)) sources.insert(source);
    }
  }
  for (const auto& source : sources) {
    const bool read = std::any_of(v.coverage.begin(), v.coverage.end(),
                                  [&](const Coverage& c) { return c.node == node && c.source == source; });
    if (read) continue;
    v.missing_sources.push_back({node, source, CoverageStatus::NotConfigured,
                                 "no " + source + " log from " + node + " (not collected): it could confirm " + v.domain,
                                 {}});
  }
  std::sort(v.missing_sources.begin(), v.missing_sources.end(), [](const MissingSource& a, const MissingSource& b) {
    return std::tie(a.node, a.source) < std::tie(b.node, b.source);
  });
}

// high: a trusted report of the cause with every deciding source read; medium: a deciding
// source is missing or the root's own source was read only in part, or the verdict is
// AMBIGUOUS; low: the deciding rule infers the domain from untrusted or symptom-class
// evidence, or nothing points anywhere (UNATTRIBUTED). A low verdict never recommends a
// drain, reboot or reset, whatever rule decided it.
void decide_confidence(Verdict& v, const RulePack& pack, const Decision& d) {
  int rank = confidence_rank(d.confidence);
  if (d.kind == Decision::Kind::None) rank = 2;
  if (d.kind == Decision::Kind::Ambiguous) rank = std::min(rank, 1);
  if (d.kind == Decision::Kind::Decided && v.root_cause) {
    const Event& root = v.root_cause->event;
    const bool root_partial = std::any_of(v.coverage.begin(), v.coverage.end(), [&](const Coverage& c) {
      return c.node == root.node && c.source == root.source && c.status == CoverageStatus::Partial;
    });
    if (!v.missing_sources.empty() || root_partial) rank = std::min(rank, 1);
  }
  v.confidence = confidence_name(rank);
  if (rank > 0) return;
  if (detail::is_disruptive_action(v.recommended_action)) v.recommended_action = "NONE";
  if (d.kind == Decision::Kind::Decided && v.root_cause) add_confirming_sources(v, pack, v.root_cause->event.node);
}

// --- Neighbours ---------------------------------------------------------------------

// Ids of the extraction rules that declare `scope: node_wide`.
std::set<std::string> node_wide_rules(const RulePack& pack) {
  std::set<std::string> ids;
  for (const auto& rule : pack.extraction)
    if (rule.def.node_wide) ids.insert(rule.def.id);
  return ids;
}

// What happened to the neighbour, in the words of the rule that would have blamed it
// had it been the job's own line; the event's kind when no rule takes it as a root.
Neighbour neighbour_of(const RulePack& pack, Event e, detail::ForeignEvidence foreign) {
  std::string what = e.kind;
  const std::vector<Event> alone{e};
  JobFacts theirs;
  theirs.job_id = foreign.job.empty() ? "?" : foreign.job;
  for (const auto& rule : pack.correlation) {
    if (rule.def.distinct) continue;
    if (auto c = single_root_candidate(pack, rule, alone, 0)) {
      what = render_summary(*c, e, theirs);
      break;
    }
  }
  std::string summary = foreign.shared_node ? (e.node.empty() ? std::string("the job") : e.node) +
                                                 " was shared with " + foreign.whom + ": " + what
                                           : foreign.whom + ", not the job's: " + what;
  if (e.time) summary += " (" + format_time(*e.time) + ")";
  return Neighbour{std::move(e), std::move(foreign.job), std::move(foreign.why), std::move(summary)};
}

// Splits the events into the job's own and its neighbours' (rules/ownership.h). At most
// kMaxListedEvents neighbours are listed, the earliest; the rest are only counted.
std::vector<Event> keep_own_events(Verdict& v, const RulePack& pack, const JobFacts& job, std::vector<Event> events) {
  v.allocation = detail::complete_allocation(job, events);
  v.uid = job.uid;
  const std::set<std::string> node_wide = node_wide_rules(pack);
  std::vector<Event> own;
  own.reserve(events.size());
  for (Event& e : events) {
    if (detail::is_allocation_fact(e)) continue;  // in v.allocation now
    if (detail::is_rank_state(e)) continue;       // read for v.hung_rank
    auto foreign = detail::foreign_evidence(e, node_wide.count(e.rule) > 0, job, v.allocation);
    if (!foreign)
      own.push_back(std::move(e));
    else if (v.neighbours.size() < kMaxListedEvents)
      v.neighbours.push_back(neighbour_of(pack, std::move(e), std::move(*foreign)));
    else
      ++v.neighbours_omitted;
  }
  return own;
}

// --- The verdict, phase by phase -------------------------------------------------------

// The verdict's facts about the job, before any evidence is judged.
Verdict verdict_of_job(const RulePack& pack, const JobFacts& job, std::vector<Coverage> coverage) {
  Verdict v;
  v.job_id = job.job_id;
  v.cluster = job.cluster;
  v.attempt = job.attempt;
  v.terminal_state = job.state;
  v.exit_code = job.exit_code;
  v.signal = job.signal;
  v.ruleset_version = pack.version;
  v.ruleset_hash = pack.hash;
  v.nodes = job.nodes;
  v.components = job.components;
  v.restarts = job.restarts;
  v.scheduler = job.scheduler;
  std::sort(v.nodes.begin(), v.nodes.end());
  v.nodes.erase(std::unique(v.nodes.begin(), v.nodes.end()), v.nodes.end());
  std::sort(coverage.begin(), coverage.end(), [](const Coverage& a, const Coverage& b) {
    return std::tie(a.node, a.source, a.detail) < std::tie(b.node, b.source, b.detail);
  });
  v.coverage = std::move(coverage);
  return v;
}

// The job's own events, folded and in order, with the synthetic ones a failed job adds
// (its end state, its node's repeated failures); the hung rank and the neighbours' lines
// are noted in the verdict on the way.
std::vector<Event> own_events(Verdict& v, const RulePack& pack, const JobFacts& job, std::vector<Event> input,
                              bool succeeded) {
  if (!succeeded) {
    if (auto state = job_state_event(pack, job)) input.push_back(std::move(*state));
    for (auto& e : repeated_failure_events(pack, job)) input.push_back(std::move(e));
  }
  std::vector<Event> folded = fold_and_order(std::move(input));
  if (!succeeded) v.hung_rank = detail::find_hung_rank(folded);
  return keep_own_events(v, pack, job, std::move(folded));
}

// The roots that survive (no kept root explains them) and what each other event is
// explained by. Candidates point into `groups` (root.distinct, per rule), which live here
// as long as the selection.
struct RootSelection {
  std::vector<DistinctGroups> groups;
  std::vector<Candidate> kept;
  std::vector<std::string> explained_by;  // per event: the correlation rule id, "" when none
};

RootSelection select_roots(const RulePack& pack, const std::vector<Event>& events) {
  RootSelection out;
  out.groups.resize(pack.correlation.size());
  out.explained_by.resize(events.size());
  for (size_t r = 0; r < pack.correlation.size(); ++r) {
    if (pack.correlation[r].def.distinct) out.groups[r] = distinct_groups(pack, pack.correlation[r], events);
  }
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < events.size(); ++i) {
    for (size_t r = 0; r < pack.correlation.size(); ++r) {  // already by (precedence desc, id)
      if (auto c = root_candidate(pack, pack.correlation[r], &out.groups[r], events, i)) {
        candidates.push_back(*c);
        break;
      }
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.rule->def.precedence != b.rule->def.precedence) return a.rule->def.precedence > b.rule->def.precedence;
    if (a.event != b.event) return a.event < b.event;
    return a.rule->def.id < b.rule->def.id;
  });
  for (const auto& c : candidates) {
    const bool demoted = std::any_of(out.kept.begin(), out.kept.end(),
                                     [&](const Candidate& k) { return explains(pack, k, events, c.event); });
    if (!demoted) out.kept.push_back(c);
  }
  std::vector<bool> is_root(events.size(), false);
  for (const auto& k : out.kept) is_root[k.event] = true;
  for (size_t i = 0; i < events.size(); ++i) {
    if (is_root[i]) continue;
    for (const auto& k : out.kept) {
      if (explains(pack, k, events, i)) {
        out.explained_by[i] = k.rule->def.id;
        break;
      }
    }
  }
  return out;
}

// No cause, but a place: the earliest locator root (e.g. the first task to die) names the
// node to look at. Its event stays unexplained, as the cause is unknown.
Decision decide_unattributed(Verdict& v, const std::vector<Candidate>& kept, const std::vector<Event>& events) {
  v.domain = "UNATTRIBUTED";
  v.recommended_action = "NONE";
  const Candidate* first = nullptr;
  for (const auto& k : kept) {
    if (first == nullptr || k.event < first->event) first = &k;
  }
  if (first != nullptr) add_affected(v, events[first->event]);
  Decision decision;
  decision.kind = Decision::Kind::Unattributed;
  decision.locator = first;
  return decision;
}

// Two or more domains tie at the top precedence: each is a candidate, the strongest action
// of theirs is recommended, and the weakest confidence of theirs is the verdict's.
Decision decide_ambiguous(Verdict& v, std::vector<Candidate>& kept, int top, const std::vector<Event>& events,
                          const JobFacts& job) {
  v.domain = "AMBIGUOUS";
  Decision decision;
  std::map<std::pair<std::string, std::string>, Candidate*> first_of;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> ids;
  int strongest = -1;
  int weakest = 2;
  for (auto& k : kept) {
    if (is_locator(k) || k.rule->def.precedence != top) continue;
    decision.contested.push_back(k.event);
    const auto key = std::make_pair(k.domain, k.rule->def.id);
    if (!first_of.count(key)) first_of[key] = &k;
    ids[key].push_back(events[k.event].id);
    add_affected(v, events[k.event]);
    if (action_strength(k.action) > strongest) {
      strongest = action_strength(k.action);
      v.recommended_action = k.action;
    }
    weakest = std::min(weakest, confidence_rank(k.rule->def.confidence));
  }
  for (const auto& [key, first] : first_of) {
    v.candidates.push_back({key.first, key.second, render_summary(*first, events[first->event], job), ids[key]});
  }
  decision.kind = Decision::Kind::Ambiguous;
  decision.precedence = top;
  decision.confidence = confidence_name(weakest);
  return decision;
}

// One domain wins: its earliest report is the mechanism (the root cause), and the same
// domain's reports elsewhere are its fan-out. Returns the root's event index in `root`.
Decision decide_domain(Verdict& v, const std::string& domain, int top, RootSelection& roots,
                       const std::vector<Event>& events, const JobFacts& job, size_t& root) {
  const Candidate* primary = nullptr;
  for (const auto& k : roots.kept) {
    if (k.domain != domain) continue;
    if (primary == nullptr || k.event < primary->event ||
        (k.event == primary->event && k.rule->def.precedence > primary->rule->def.precedence)) {
      primary = &k;
    }
  }
  v.domain = domain;
  v.recommended_action = primary->action;
  v.root_cause =
      RootCause{primary->rule->def.id, render_summary(*primary, events[primary->event], job), events[primary->event]};
  root = primary->event;
  name_root_gpu_uuid(*v.root_cause, events);
  add_affected(v, events[primary->event]);
  Decision decision;
  decision.kind = Decision::Kind::Decided;
  decision.precedence = top;
  decision.confidence = primary->rule->def.confidence;
  decision.domain = domain;
  decision.contested.push_back(primary->event);
  for (const auto& k : roots.kept) {
    if (&k == primary || k.domain != domain) continue;
    roots.explained_by[k.event] = primary->rule->def.id;
    add_affected(v, events[k.event]);
  }
  return decision;
}

// The domain from the kept roots: UNATTRIBUTED with only locators, AMBIGUOUS when domains
// tie at the top precedence, else the one domain. `root`: the root cause's event, if any.
Decision decide(Verdict& v, RootSelection& roots, const std::vector<Event>& events, const JobFacts& job,
                std::optional<size_t>& root) {
  if (std::none_of(roots.kept.begin(), roots.kept.end(), [](const Candidate& k) { return !is_locator(k); }))
    return decide_unattributed(v, roots.kept, events);
  int top = -1;
  for (const auto& k : roots.kept) {
    if (!is_locator(k)) top = std::max(top, k.rule->def.precedence);
  }
  std::set<std::string> top_domains;
  for (const auto& k : roots.kept) {
    if (!is_locator(k) && k.rule->def.precedence == top) top_domains.insert(k.domain);
  }
  if (top_domains.size() >= 2) return decide_ambiguous(v, roots.kept, top, events, job);
  size_t index = 0;
  Decision decision = decide_domain(v, *top_domains.begin(), top, roots, events, job, index);
  root = index;
  return decision;
}

// Every event but the root cause's: a symptom of the root that explains it, or unexplained.
void list_the_rest(Verdict& v, const std::vector<Event>& events, const std::vector<std::string>& explained_by,
                   std::optional<size_t> root) {
  for (size_t i = 0; i < events.size(); ++i) {
    if (root && i == *root) continue;
    if (!explained_by[i].empty()) {
      v.symptoms.push_back({events[i], explained_by[i], events[i].count});
    } else {
      v.unexplained.push_back(events[i]);
    }
  }
  v.symptoms_omitted = cap_listed(v.symptoms, [](const Symptom& s) -> const Event& { return s.event; });
  v.unexplained_omitted = cap_listed(v.unexplained, [](const Event& e) -> const Event& { return e; });
}

}  // namespace

Verdict correlate(const RulePack& pack, const JobFacts& job, std::vector<Event> input, std::vector<Coverage> coverage) {
  Verdict v = verdict_of_job(pack, job, std::move(coverage));
  const bool succeeded = job_succeeded(job);
  const std::vector<Event> events = own_events(v, pack, job, std::move(input), succeeded);
  RootSelection roots;
  roots.explained_by.resize(events.size());
  Decision decision;
  std::optional<size_t> root;
  if (succeeded) {
    v.domain = "NONE";
    v.recommended_action = "NONE";
  } else {
    roots = select_roots(pack, events);
    decision = decide(v, roots, events, job, root);
  }
  list_the_rest(v, events, roots.explained_by, root);
  add_missing_sources(v, pack, decision, events);
  decide_confidence(v, pack, decision);
  sort_unique(v);
  v.comment = render_comment(v);
  return v;
}

}  // namespace attrib::rules
