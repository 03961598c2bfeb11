#include "collectors/flight_recorder_dump.h"

#include <map>

#include <nlohmann/json.hpp>

#include "collectors/pickle_reader.h"

namespace attrib::collectors {
namespace {

using json = nlohmann::json;

// Text from a dump is the job's (a group's description, a custom op's name): only the
// characters of PyTorch's own names reach a line, so no value can carry "rank=" along.
std::string name_only(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 64))
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' || c == '_' ||
        c == '.' || c == '-')
      out += c;
  return out;
}

std::string digits_and_commas(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 4096))
    if ((c >= '0' && c <= '9') || c == ',') out += c;
  return out;
}

int64_t int_of(const json& entry, const char* key) {
  auto it = entry.find(key);
  if (it == entry.end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_string()) {  // dump_json() writes pg_status as strings
    try {
      return std::stoll(it->get<std::string>());
    } catch (const std::exception&) {
    }
  }
  return 0;
}

// pg_config is keyed by the group's name; an entry names its group by "process_group":
// [name, desc]. A lone group is the entries' whatever its key (PyTorch 2.14's Gloo
// default group is keyed "" while its entries name it "0").
std::string ranks_of(const json& dump, const json& entry) {
  auto group = entry.find("process_group");
  auto config = dump.find("pg_config");
  if (config == dump.end() || !config->is_object() || config->empty()) return "";
  auto pg = config->size() == 1 ? config->begin() : config->end();
  if (group != entry.end() && group->is_array() && !group->empty() && (*group)[0].is_string() &&
      config->contains((*group)[0].get<std::string>()))
    pg = config->find((*group)[0].get<std::string>());
  if (pg == config->end() || !pg->is_object()) return "";
  auto ranks = pg->find("ranks");
  return ranks != pg->end() && ranks->is_string() ? digits_and_commas(ranks->get<std::string>()) : "";
}

}  // namespace

Result<std::vector<RankCollectives>> read_flight_recorder_dump(std::string_view bytes) {
  json dump;
  if (!bytes.empty() && bytes.front() == '{') {
    dump = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
    if (dump.is_discarded()) return Error{kCollectDump, "not valid JSON"};
  } else {
    auto parsed = read_pickle(bytes);
    if (!parsed) return parsed.error();
    dump = std::move(*parsed);
  }
  if (!dump.is_object() || !dump.contains("version"))
    return Error{kCollectDump, "not a flight-recorder dump (no \"version\")"};
  auto entries = dump.find("entries");
  if (entries == dump.end()) return std::vector<RankCollectives>{};  // dump_json() leaves it out when empty
  if (!entries->is_array()) return Error{kCollectDump, "\"entries\" is not a list"};

  std::map<int64_t, RankCollectives> groups;
  for (const json& entry : *entries) {
    if (!entry.is_object()) return Error{kCollectDump, "an entry is not a dict"};
    // Point-to-point: no collective sequence. (value() would throw on a non-boolean.)
    if (auto p2p = entry.find("is_p2p"); p2p != entry.end() && p2p->is_boolean() && p2p->get<bool>()) continue;
    const int64_t pg = int_of(entry, "pg_id");
    RankCollectives& g = groups[pg];
    g.pg_id = pg;
    ++g.entries;
    const int64_t seq = int_of(entry, "collective_seq_id");
    if (seq < g.last_seq) continue;
    g.last_seq = seq;
    auto op = entry.find("profiling_name");
    g.last_op = op != entry.end() && op->is_string() ? name_only(op->get<std::string>()) : "";
    auto state = entry.find("state");
    g.last_state = state != entry.end() && state->is_string() ? name_only(state->get<std::string>()) : "";
    g.last_time_ns = int_of(entry, "time_created_ns");
    g.ranks = ranks_of(dump, entry);
  }
  std::vector<RankCollectives> out;
  for (auto& [pg, group] : groups) out.push_back(std::move(group));
  return out;
}

std::string flight_recorder_line(int64_t rank, const RankCollectives& group) {
  return "attrib-flight-recorder: rank=" + std::to_string(rank) + " pg=" + std::to_string(group.pg_id) +
         " last_seq=" + std::to_string(group.last_seq) + " last_op=" + (group.last_op.empty() ? "-" : group.last_op) +
         " last_state=" + (group.last_state.empty() ? "-" : group.last_state) +
         " entries=" + std::to_string(group.entries) + (group.ranks.empty() ? "" : " ranks=" + group.ranks);
}

}  // namespace attrib::collectors
