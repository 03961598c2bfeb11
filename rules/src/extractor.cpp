// Extractor: lines -> folded events. Rules are selected per source once (cached),
// each rule's literal prefilter runs before its regex, and identical events fold
// into one entry with a count.
#include <algorithm>
#include <unordered_map>

#include "event_order.h"
#include "rule_pack.h"

namespace attrib::rules {

namespace {

bool is_application_source(const std::string& source) { return source == "app" || source.rfind("app.", 0) == 0; }

bool rule_applies(const detail::ExtractionRuleDef& rule, const std::string& source) {
  for (const auto& s : rule.sources) {
    if (s == source) return true;
    if (s == "app" && source.rfind("app.rank", 0) == 0) return true;  // "app" covers every rank's stream
  }
  return false;
}

}  // namespace

struct Extractor::State {
  std::shared_ptr<const RulePack> pack;
  size_t max_distinct = kDefaultMaxDistinctEvents;
  std::unordered_map<std::string, std::vector<const detail::CompiledExtractionRule*>> rules_by_source;
  std::unordered_map<std::string, Event> folded;
  uint64_t dropped = 0;

  const std::vector<const detail::CompiledExtractionRule*>& rules_for(const std::string& source) {
    auto it = rules_by_source.find(source);
    if (it != rules_by_source.end()) return it->second;
    std::vector<const detail::CompiledExtractionRule*> rules;
    if (detail::is_known_source(source)) {
      for (const auto& rule : pack->extraction) {
        if (rule_applies(rule.def, source)) rules.push_back(&rule);
      }
    }
    return rules_by_source.emplace(source, std::move(rules)).first->second;
  }
};

Extractor::Extractor(std::shared_ptr<const RulePack> pack) : Extractor(std::move(pack), kDefaultMaxDistinctEvents) {}

Extractor::Extractor(std::shared_ptr<const RulePack> pack, size_t max_distinct_events)
    : state_(std::make_unique<State>()) {
  state_->pack = std::move(pack);
  state_->max_distinct = max_distinct_events;
}

Extractor::~Extractor() = default;

void Extractor::feed(const LogLine& line) {
  for (const auto* rule : state_->rules_for(line.source)) {
    auto fields = detail::match_line(*rule, line.text);
    if (!fields) continue;
    Event event;
    event.kind = rule->def.kind;
    event.rule = rule->def.id;
    event.node = line.node;
    event.source = line.source;
    event.time = line.time;
    event.seq = line.seq;
    // A user's own output is never trusted, whatever the collector claims (Trust).
    event.trusted = line.trusted && !is_application_source(line.source);
    event.line = line.text;
    event.fields = std::move(*fields);
    std::string key = detail::fold_key(event);
    auto it = state_->folded.find(key);
    if (it != state_->folded.end()) {
      detail::fold_into(it->second, event);
    } else if (state_->folded.size() < state_->max_distinct) {
      state_->folded.emplace(std::move(key), std::move(event));
    } else {
      ++state_->dropped;
    }
  }
}

std::vector<Event> Extractor::finish() {
  std::vector<Event> events;
  events.reserve(state_->folded.size());
  for (auto& [key, event] : state_->folded) events.push_back(std::move(event));
  state_->folded.clear();
  std::sort(events.begin(), events.end(), detail::event_less);
  return events;
}

uint64_t Extractor::dropped_events() const { return state_->dropped; }

}  // namespace attrib::rules
