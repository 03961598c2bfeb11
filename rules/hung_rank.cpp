#include "rules/hung_rank.h"

#include <algorithm>
#include <map>

#include "core/json_text.h"
#include "rules/ownership.h"

namespace attrib::rules::detail {
namespace {

// How far one rank got in one process group.
struct Progress {
  int64_t seq = 0;        // the last collective it recorded or enqueued
  std::string op;         // that collective's operation, when known
  std::string state;      // scheduled | started | completed (flight recorder only)
  std::string node;
};
using Group = std::map<int64_t, Progress>;  // rank -> progress

std::optional<int64_t> int_field(const Event& e, const char* key) {
  auto it = e.fields.find(key);
  return it == e.fields.end() ? std::nullopt : number_in(*it);
}

std::string text_field(const Event& e, const char* key) {
  auto it = e.fields.find(key);
  return it == e.fields.end() ? "" : value_text(*it);
}

std::string ranks_text(const std::vector<int64_t>& ranks) {
  std::string out;
  for (int64_t r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return out;
}

const char* evidence_words(const std::string& evidence) {
  if (evidence == "flight_recorder") return "the ranks' flight-recorder dumps";
  if (evidence == "watchdog") return "the watchdog's last enqueued work per rank";
  return "PyTorch's desync report";
}

void summarize(HungRank& h) {
  std::string what = "collective #" + std::to_string(h.seq) + (h.collective.empty() ? "" : " (" + h.collective + ")");
  h.summary = "rank " + std::to_string(h.rank) + (h.node.empty() ? "" : " on " + h.node) + " never joined " + what +
              (h.process_group.empty() ? "" : " of process group " + h.process_group);
  if (!h.waiting_ranks.empty()) h.summary += ", which ranks " + ranks_text(h.waiting_ranks) + " waited in";
  h.summary += std::string(" (") + evidence_words(h.evidence) + ")";
}

// In one group: the rank that got least far while others got further is the one they
// waited on (the lowest rank of those, when several stopped at the same place).
std::optional<HungRank> laggard_of(const std::string& pg, const Group& group, const std::string& evidence) {
  if (group.size() < 2) return std::nullopt;
  auto lowest = group.begin();
  int64_t highest = group.begin()->second.seq;
  for (auto it = group.begin(); it != group.end(); ++it) {
    if (it->second.seq < lowest->second.seq) lowest = it;
    highest = std::max(highest, it->second.seq);
  }
  if (lowest->second.seq == highest) return std::nullopt;  // all got as far: no laggard by progress
  HungRank h;
  h.rank = lowest->first;
  h.node = lowest->second.node;
  h.process_group = pg;
  h.seq = lowest->second.seq + 1;
  h.evidence = evidence;
  for (const auto& [rank, progress] : group) {
    if (progress.seq <= lowest->second.seq) continue;
    h.waiting_ranks.push_back(rank);
    if (progress.seq == h.seq && h.collective.empty()) h.collective = progress.op;
  }
  summarize(h);
  return h;
}

std::optional<HungRank> first_laggard(const std::map<std::string, Group>& groups, const std::string& evidence) {
  for (const auto& [pg, group] : groups)
    if (auto h = laggard_of(pg, group, evidence)) return h;
  return std::nullopt;
}

// "[7] finished collective #182, but didn't join collective #183 (count from 1)".
std::optional<HungRank> from_desync_report(const std::vector<Event>& events,
                                           const std::map<std::string, Group>& known) {
  for (const Event& e : events) {
    if (e.kind != "nccl.desync_lagging") continue;
    const std::string ranks = text_field(e, "ranks");
    const auto next = int_field(e, "next_seq");
    if (ranks.empty() || !next) continue;
    HungRank h;
    try {
      h.rank = std::stoll(ranks.substr(0, ranks.find(',')));
    } catch (const std::exception&) {
      continue;
    }
    h.seq = *next;
    h.process_group = text_field(e, "pg");
    h.evidence = "desync_report";
    for (const auto& [pg, group] : known)
      if (auto it = group.find(h.rank); it != group.end() && h.node.empty()) h.node = it->second.node;
    summarize(h);
    return h;
  }
  return std::nullopt;
}

}  // namespace

std::optional<HungRank> find_hung_rank(const std::vector<Event>& events) {
  std::map<std::string, Group> recorded, enqueued;
  for (const Event& e : events) {
    const auto rank = int_field(e, "rank");
    if (!rank) continue;
    if (is_rank_state(e)) {
      const auto seq = int_field(e, "last_seq");
      if (seq) recorded[text_field(e, "pg")][*rank] = {*seq, text_field(e, "op"), text_field(e, "state"), e.node};
    } else if (e.kind == "nccl.watchdog_exception") {
      const auto seq = int_field(e, "last_enqueued");
      if (seq) enqueued[text_field(e, "pg")][*rank] = {*seq, "", "", e.node};
    }
  }
  if (auto h = first_laggard(recorded, "flight_recorder")) return h;
  if (auto h = first_laggard(enqueued, "watchdog")) return h;
  return from_desync_report(events, recorded.empty() ? enqueued : recorded);
}

}  // namespace attrib::rules::detail
