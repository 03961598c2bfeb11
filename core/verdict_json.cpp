// Verdict v1 <-> JSON (docs/verdict-reference.md).
//
// nlohmann::json objects keep keys sorted, so key order is fixed by construction;
// arrays are sorted here so that a verdict built in any order serialises the same.
// Event arrays sort by the numeric part of their id ("e2" before "e10"), which is the
// engine's deterministic event order.
#include <algorithm>
#include <charconv>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "core/json_text.h"
#include "core/verdict.h"

namespace attrib {

namespace {

using json = nlohmann::json;

constexpr const char* kSchema = "attrib.verdict.v1";


// "e12" -> 12; ids that are not of that shape sort after all numbered ones.
std::pair<uint64_t, std::string> event_id_key(const std::string& id) {
  if (id.size() > 1 && id[0] == 'e') {
    uint64_t n = 0;
    const auto* begin = id.data() + 1;
    const auto* end = id.data() + id.size();
    const auto [ptr, ec] = std::from_chars(begin, end, n);
    if (ec == std::errc() && ptr == end) return {n, id};
  }
  return {UINT64_MAX, id};
}

bool coverage_less(const Coverage& a, const Coverage& b) {
  return std::tie(a.node, a.source, a.detail) < std::tie(b.node, b.source, b.detail);
}

// Small strict reader: every accessor names the JSON path of what was wrong.
class Reader {
 public:
  struct Failure {
    std::string message;
  };

  static const json& member(const json& object, const char* key, const std::string& path) {
    if (!object.is_object()) throw Failure{path + ": expected an object"};
    auto it = object.find(key);
    if (it == object.end()) throw Failure{path + "." + key + ": missing"};
    return *it;
  }
  static std::string string(const json& object, const char* key, const std::string& path) {
    const json& v = member(object, key, path);
    if (!v.is_string()) throw Failure{path + "." + key + ": expected a string"};
    return v.get<std::string>();
  }
  static int64_t integer(const json& object, const char* key, const std::string& path) {
    const json& v = member(object, key, path);
    if (!v.is_number_integer()) throw Failure{path + "." + key + ": expected an integer"};
    return v.get<int64_t>();
  }
  static uint64_t unsigned_integer(const json& object, const char* key, const std::string& path) {
    const json& v = member(object, key, path);
    if (!v.is_number_integer() || v.get<int64_t>() < 0) {
      throw Failure{path + "." + key + ": expected a non-negative integer"};
    }
    return v.get<uint64_t>();
  }
  static bool boolean(const json& object, const char* key, const std::string& path) {
    const json& v = member(object, key, path);
    if (!v.is_boolean()) throw Failure{path + "." + key + ": expected true or false"};
    return v.get<bool>();
  }
  static const json& array(const json& object, const char* key, const std::string& path) {
    const json& v = member(object, key, path);
    if (!v.is_array()) throw Failure{path + "." + key + ": expected an array"};
    return v;
  }
  static std::optional<TimeUs> time(const json& value, const std::string& path) {
    if (value.is_null()) return std::nullopt;
    if (!value.is_string()) throw Failure{path + ": expected a time string or null"};
    auto t = parse_iso_time(value.get<std::string>());
    if (!t) throw Failure{path + ": not an ISO 8601 UTC time: " + value.get<std::string>()};
    return t;
  }
};

Event event_from(const json& j, const std::string& path) {
  Event e;
  e.id = Reader::string(j, "id", path);
  e.kind = Reader::string(j, "kind", path);
  if (j.contains("rule")) e.rule = Reader::string(j, "rule", path);
  e.node = Reader::string(j, "node", path);
  e.source = Reader::string(j, "source", path);
  e.time = Reader::time(Reader::member(j, "time", path), path + ".time");
  e.seq = Reader::unsigned_integer(j, "seq", path);
  e.trusted = Reader::boolean(j, "trusted", path);
  e.line = Reader::string(j, "line", path);
  const json& fields = Reader::member(j, "fields", path);
  if (!fields.is_object()) throw Reader::Failure{path + ".fields: expected an object"};
  e.fields = fields;
  e.count = Reader::unsigned_integer(j, "count", path);
  return e;
}

Coverage coverage_from(const json& j, const std::string& path) {
  Coverage c;
  c.node = Reader::string(j, "node", path);
  c.source = Reader::string(j, "source", path);
  const std::string status = Reader::string(j, "status", path);
  auto parsed = coverage_status_from(status);
  if (!parsed) throw Reader::Failure{path + ".status: unknown coverage status: " + status};
  c.status = *parsed;
  c.lines = Reader::unsigned_integer(j, "lines", path);
  c.events = Reader::unsigned_integer(j, "events", path);
  const json& window = Reader::member(j, "window", path);
  if (!window.is_null()) {
    if (!window.is_array() || window.size() != 2) {
      throw Reader::Failure{path + ".window: expected [start, end] or null"};
    }
    c.window_start = Reader::time(window[0], path + ".window[0]");
    c.window_end = Reader::time(window[1], path + ".window[1]");
  }
  c.detail = Reader::string(j, "detail", path);
  return c;
}

}  // namespace

json components_to_json(const std::vector<JobComponent>& components) {
  json out = json::array();
  for (const JobComponent& c : components)
    out.push_back({{"job_id", c.job_id},
                   {"state", c.state},
                   {"exit_code", c.exit_code},
                   {"signal", c.signal},
                   {"nodes", c.nodes}});
  return out;
}

Result<std::vector<JobComponent>> components_from_json(const json& j, const std::string& path) {
  try {
    if (!j.is_array()) throw Reader::Failure{path + ": expected an array"};
    std::vector<JobComponent> components;
    for (size_t i = 0; i < j.size(); ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      JobComponent c;
      c.job_id = Reader::string(j[i], "job_id", at);
      c.state = Reader::string(j[i], "state", at);
      c.exit_code = static_cast<int>(Reader::integer(j[i], "exit_code", at));
      c.signal = static_cast<int>(Reader::integer(j[i], "signal", at));
      for (const auto& n : Reader::array(j[i], "nodes", at)) {
        if (!n.is_string()) throw Reader::Failure{at + ".nodes: expected strings"};
        c.nodes.push_back(n.get<std::string>());
      }
      components.push_back(std::move(c));
    }
    return components;
  } catch (const Reader::Failure& failure) {
    return Error{kVerdictField, failure.message};
  }
}

json allocation_to_json(const JobAllocation& allocation, std::optional<uint32_t> uid) {
  json j = json::object();
  if (uid) j["uid"] = *uid;
  if (!allocation.slurm_ids.empty()) j["slurm_ids"] = allocation.slurm_ids;
  if (!allocation.nodes.empty()) {
    json nodes = json::object();
    for (const auto& [node, held] : allocation.nodes) {
      json one = json::object();
      if (!held.gpus.empty()) one["gpus"] = held.gpus;
      if (!held.gpu_indices.empty()) one["gpu_indices"] = held.gpu_indices;
      if (!held.pids.empty()) one["pids"] = held.pids;
      if (!held.neighbour_pids.empty()) {
        json pids = json::object();
        for (const auto& [pid, job] : held.neighbour_pids) pids[std::to_string(pid)] = job;
        one["neighbour_pids"] = pids;
      }
      if (!held.neighbour_gpus.empty()) {
        json gpus = json::object();
        for (const auto& [gpu, job] : held.neighbour_gpus) gpus[gpu] = job;
        one["neighbour_gpus"] = gpus;
      }
      nodes[node] = one;
    }
    j["nodes"] = nodes;
  }
  return j;
}

namespace {

// {"<pid>": "<job id>"}: other jobs' tasks on the node.
std::map<int64_t, std::string> jobs_by_pid(const json& object, const char* key, const std::string& path) {
  std::map<int64_t, std::string> out;
  if (!object.contains(key)) return out;
  const json& map = Reader::member(object, key, path);
  if (!map.is_object()) throw Reader::Failure{path + "." + key + ": expected {\"<pid>\": \"<job id>\"}"};
  for (const auto& [number, job] : map.items()) {
    const std::string at = path + "." + key + "." + number;
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end != number.data() + number.size() || value < 0)
      throw Reader::Failure{at + ": not a number"};
    if (!job.is_string()) throw Reader::Failure{at + ": expected a job id"};
    out[value] = job.get<std::string>();
  }
  return out;
}

// {"<GPU index or bus id>": "<job id>"}.
std::map<std::string, std::string> jobs_by_gpu(const json& object, const char* key, const std::string& path) {
  std::map<std::string, std::string> out;
  if (!object.contains(key)) return out;
  const json& map = Reader::member(object, key, path);
  if (!map.is_object()) throw Reader::Failure{path + "." + key + ": expected {\"<GPU>\": \"<job id>\"}"};
  for (const auto& [gpu, job] : map.items()) {
    if (!job.is_string()) throw Reader::Failure{path + "." + key + "." + gpu + ": expected a job id"};
    out[gpu] = job.get<std::string>();
  }
  return out;
}

template <typename T>
std::vector<T> list_of(const json& object, const char* key, const std::string& path) {
  std::vector<T> out;
  if (!object.contains(key)) return out;
  for (const auto& item : Reader::array(object, key, path)) {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!item.is_string()) throw Reader::Failure{path + "." + key + ": expected strings"};
    } else {
      if (!item.is_number_integer()) throw Reader::Failure{path + "." + key + ": expected integers"};
    }
    out.push_back(item.get<T>());
  }
  return out;
}

}  // namespace

Status allocation_from_json(const json& j, const std::string& path, JobAllocation& allocation,
                            std::optional<uint32_t>& uid) {
  try {
    if (!j.is_object()) throw Reader::Failure{path + ": expected an object"};
    if (j.contains("uid")) {
      const uint64_t value = Reader::unsigned_integer(j, "uid", path);
      if (value > UINT32_MAX) throw Reader::Failure{path + ".uid: not a uid"};
      uid = static_cast<uint32_t>(value);
    }
    allocation.slurm_ids = list_of<std::string>(j, "slurm_ids", path);
    if (j.contains("nodes")) {
      const json& nodes = Reader::member(j, "nodes", path);
      if (!nodes.is_object()) throw Reader::Failure{path + ".nodes: expected {\"<node>\": {...}}"};
      for (const auto& [node, held] : nodes.items()) {
        const std::string at = path + ".nodes." + node;
        if (!held.is_object()) throw Reader::Failure{at + ": expected an object"};
        NodeAllocation& one = allocation.nodes[node];
        one.gpus = list_of<std::string>(held, "gpus", at);
        one.gpu_indices = list_of<int>(held, "gpu_indices", at);
        one.pids = list_of<int64_t>(held, "pids", at);
        one.neighbour_pids = jobs_by_pid(held, "neighbour_pids", at);
        one.neighbour_gpus = jobs_by_gpu(held, "neighbour_gpus", at);
      }
    }
    return ok_status();
  } catch (const Reader::Failure& failure) {
    return Error{kVerdictField, failure.message};
  }
}

json repeated_failures_to_json(const std::vector<NodeFailureHistory>& history) {
  json out = json::array();
  for (const NodeFailureHistory& h : history)
    out.push_back({{"node", h.node}, {"other_jobs", h.other_jobs}, {"other_users", h.other_users},
                   {"window_s", h.window_s}});
  return out;
}

Result<std::vector<NodeFailureHistory>> repeated_failures_from_json(const json& j, const std::string& path) {
  try {
    if (!j.is_array()) throw Reader::Failure{path + ": expected an array"};
    std::vector<NodeFailureHistory> out;
    for (size_t i = 0; i < j.size(); ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      NodeFailureHistory h;
      h.node = Reader::string(j[i], "node", at);
      const uint64_t jobs = Reader::unsigned_integer(j[i], "other_jobs", at);
      const uint64_t users = Reader::unsigned_integer(j[i], "other_users", at);
      if (jobs > INT32_MAX || users > INT32_MAX) throw Reader::Failure{at + ": count out of range"};
      h.other_jobs = static_cast<int>(jobs);
      h.other_users = static_cast<int>(users);
      h.window_s = static_cast<int64_t>(Reader::unsigned_integer(j[i], "window_s", at));
      out.push_back(std::move(h));
    }
    return out;
  } catch (const Reader::Failure& failure) {
    return Error{kVerdictField, failure.message};
  }
}

Result<Coverage> coverage_from_json(const json& j, const std::string& path) {
  try {
    return coverage_from(j, path);
  } catch (const Reader::Failure& failure) {
    return Error{kVerdictField, failure.message};
  }
}

json to_json(const Event& event) {
  json j = json::object();
  j["id"] = event.id;
  j["kind"] = event.kind;
  j["rule"] = event.rule;
  j["node"] = event.node;
  j["source"] = event.source;
  j["time"] = time_or_null(event.time);
  j["seq"] = event.seq;
  j["trusted"] = event.trusted;
  j["line"] = event.line;
  j["fields"] = event.fields.is_object() ? event.fields : json::object();
  j["count"] = event.count;
  return j;
}

json to_json(const Coverage& coverage) {
  json j = json::object();
  j["node"] = coverage.node;
  j["source"] = coverage.source;
  j["status"] = to_string(coverage.status);
  j["lines"] = coverage.lines;
  j["events"] = coverage.events;
  if (coverage.window_start || coverage.window_end) {
    j["window"] = json::array({time_or_null(coverage.window_start), time_or_null(coverage.window_end)});
  } else {
    j["window"] = nullptr;
  }
  j["detail"] = coverage.detail;
  return j;
}

json to_json(const Verdict& verdict) {
  json j = json::object();
  j["schema"] = kSchema;
  j["job_id"] = verdict.job_id;
  j["cluster"] = verdict.cluster;
  j["attempt"] = verdict.attempt;
  if (verdict.run) j["run"] = *verdict.run;
  j["terminal_state"] = verdict.terminal_state;
  j["exit_code"] = verdict.exit_code;
  j["signal"] = verdict.signal;
  j["domain"] = verdict.domain;
  if (verdict.root_cause) {
    j["root_cause"] = {{"rule", verdict.root_cause->rule},
                       {"summary", verdict.root_cause->summary},
                       {"event", to_json(verdict.root_cause->event)}};
  } else {
    j["root_cause"] = nullptr;
  }

  std::vector<Candidate> candidates = verdict.candidates;
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.domain, a.rule, a.summary) < std::tie(b.domain, b.rule, b.summary);
  });
  j["candidates"] = json::array();
  for (const auto& c : candidates) {
    std::vector<std::string> ids = c.events;
    std::sort(ids.begin(), ids.end(),
              [](const std::string& a, const std::string& b) { return event_id_key(a) < event_id_key(b); });
    j["candidates"].push_back({{"domain", c.domain}, {"rule", c.rule}, {"summary", c.summary}, {"events", ids}});
  }

  std::vector<Symptom> symptoms = verdict.symptoms;
  std::stable_sort(symptoms.begin(), symptoms.end(), [](const Symptom& a, const Symptom& b) {
    return event_id_key(a.event.id) < event_id_key(b.event.id);
  });
  j["symptoms"] = json::array();
  for (const auto& s : symptoms) {
    j["symptoms"].push_back({{"event", to_json(s.event)}, {"explained_by", s.explained_by}, {"count", s.count}});
  }

  j["symptoms_omitted"] = verdict.symptoms_omitted;

  std::vector<Event> unexplained = verdict.unexplained;
  std::stable_sort(unexplained.begin(), unexplained.end(),
                   [](const Event& a, const Event& b) { return event_id_key(a.id) < event_id_key(b.id); });
  j["unexplained"] = json::array();
  for (const auto& e : unexplained) j["unexplained"].push_back(to_json(e));
  j["unexplained_omitted"] = verdict.unexplained_omitted;

  std::vector<std::string> nodes = verdict.nodes;
  std::sort(nodes.begin(), nodes.end());
  j["nodes"] = nodes;
  // A heterogeneous job's components (added in v1; only for het jobs).
  if (!verdict.components.empty()) j["components"] = components_to_json(verdict.components);
  // Restarts inside the allocation (added in v1; only when there were some).
  if (verdict.restarts > 0) j["restarts"] = verdict.restarts;
  if (!verdict.scheduler.empty()) j["scheduler"] = verdict.scheduler;
  std::vector<std::string> affected_nodes = verdict.affected_nodes;
  std::sort(affected_nodes.begin(), affected_nodes.end());
  j["affected_nodes"] = affected_nodes;

  std::vector<AffectedGpu> gpus = verdict.affected_gpus;
  std::sort(gpus.begin(), gpus.end(), [](const AffectedGpu& a, const AffectedGpu& b) {
    return std::tie(a.node, a.pci) < std::tie(b.node, b.pci);
  });
  j["affected_gpus"] = json::array();
  for (const auto& g : gpus) j["affected_gpus"].push_back({{"node", g.node}, {"pci", g.pci}});

  j["recommended_action"] = verdict.recommended_action;
  // Added in v1: absent only in a verdict archived before it existed.
  if (!verdict.confidence.empty()) j["confidence"] = verdict.confidence;

  std::vector<Coverage> coverage = verdict.coverage;
  std::stable_sort(coverage.begin(), coverage.end(), coverage_less);
  j["coverage"] = json::array();
  for (const auto& c : coverage) j["coverage"].push_back(to_json(c));

  std::vector<MissingSource> missing = verdict.missing_sources;
  std::stable_sort(missing.begin(), missing.end(), [](const MissingSource& a, const MissingSource& b) {
    return std::tie(a.node, a.source) < std::tie(b.node, b.source);
  });
  j["missing_sources"] = json::array();
  for (const auto& m : missing) {
    std::vector<std::string> ids = m.named_by;
    std::sort(ids.begin(), ids.end(),
              [](const std::string& a, const std::string& b) { return event_id_key(a) < event_id_key(b); });
    j["missing_sources"].push_back(
        {{"node", m.node}, {"source", m.source}, {"status", to_string(m.status)}, {"note", m.note}, {"named_by", ids}});
  }

  // Neighbours and the allocation (added in v1; only when there is something to say).
  if (!verdict.neighbours.empty()) {
    std::vector<Neighbour> neighbours = verdict.neighbours;
    std::stable_sort(neighbours.begin(), neighbours.end(), [](const Neighbour& a, const Neighbour& b) {
      return event_id_key(a.event.id) < event_id_key(b.event.id);
    });
    j["neighbours"] = json::array();
    for (const auto& n : neighbours)
      j["neighbours"].push_back({{"event", to_json(n.event)}, {"job", n.job}, {"why", n.why}, {"summary", n.summary}});
  }
  if (verdict.neighbours_omitted > 0) j["neighbours_omitted"] = verdict.neighbours_omitted;
  if (!verdict.allocation.empty() || verdict.uid) j["allocation"] = allocation_to_json(verdict.allocation, verdict.uid);
  if (const auto& h = verdict.hung_rank) {
    j["hung_rank"] = {{"rank", h->rank},
                      {"node", h->node},
                      {"process_group", h->process_group},
                      {"seq", h->seq},
                      {"collective", h->collective},
                      {"waiting_ranks", h->waiting_ranks},
                      {"evidence", h->evidence},
                      {"summary", h->summary}};
  }

  j["ruleset"] = {{"version", verdict.ruleset_version}, {"hash", verdict.ruleset_hash}};
  j["comment"] = verdict.comment;
  return j;
}

Result<Verdict> verdict_from_json(const json& j) {
  try {
    const std::string root = "verdict";
    if (!j.is_object()) return Error{kVerdictJson, "verdict: expected an object"};
    const std::string schema = Reader::string(j, "schema", root);
    if (schema != kSchema) {
      return Error{kVerdictSchema, "verdict.schema: unsupported schema: " + schema};
    }
    Verdict v;
    v.job_id = Reader::string(j, "job_id", root);
    v.cluster = Reader::string(j, "cluster", root);
    v.attempt = static_cast<int>(Reader::integer(j, "attempt", root));
    if (j.contains("run")) v.run = Reader::integer(j, "run", root);
    v.terminal_state = Reader::string(j, "terminal_state", root);
    v.exit_code = static_cast<int>(Reader::integer(j, "exit_code", root));
    v.signal = static_cast<int>(Reader::integer(j, "signal", root));
    v.domain = Reader::string(j, "domain", root);

    const json& rc = Reader::member(j, "root_cause", root);
    if (!rc.is_null()) {
      RootCause cause;
      cause.rule = Reader::string(rc, "rule", root + ".root_cause");
      cause.summary = Reader::string(rc, "summary", root + ".root_cause");
      cause.event = event_from(Reader::member(rc, "event", root + ".root_cause"), root + ".root_cause.event");
      v.root_cause = std::move(cause);
    }

    const json& candidates = Reader::array(j, "candidates", root);
    for (size_t i = 0; i < candidates.size(); ++i) {
      const std::string path = root + ".candidates[" + std::to_string(i) + "]";
      Candidate c;
      c.domain = Reader::string(candidates[i], "domain", path);
      c.rule = Reader::string(candidates[i], "rule", path);
      c.summary = Reader::string(candidates[i], "summary", path);
      const json& ids = Reader::array(candidates[i], "events", path);
      for (const auto& id : ids) {
        if (!id.is_string()) throw Reader::Failure{path + ".events: expected strings"};
        c.events.push_back(id.get<std::string>());
      }
      v.candidates.push_back(std::move(c));
    }

    const json& symptoms = Reader::array(j, "symptoms", root);
    for (size_t i = 0; i < symptoms.size(); ++i) {
      const std::string path = root + ".symptoms[" + std::to_string(i) + "]";
      Symptom s;
      s.event = event_from(Reader::member(symptoms[i], "event", path), path + ".event");
      s.explained_by = Reader::string(symptoms[i], "explained_by", path);
      s.count = Reader::unsigned_integer(symptoms[i], "count", path);
      v.symptoms.push_back(std::move(s));
    }

    const json& unexplained = Reader::array(j, "unexplained", root);
    for (size_t i = 0; i < unexplained.size(); ++i) {
      v.unexplained.push_back(event_from(unexplained[i], root + ".unexplained[" + std::to_string(i) + "]"));
    }

    // The omitted counts were added after the first v1 writers: optional on input.
    if (j.contains("symptoms_omitted")) v.symptoms_omitted = Reader::unsigned_integer(j, "symptoms_omitted", root);
    if (j.contains("unexplained_omitted"))
      v.unexplained_omitted = Reader::unsigned_integer(j, "unexplained_omitted", root);

    // "nodes" was added after the first v1 writers: optional on input.
    if (j.contains("nodes")) {
      for (const auto& n : Reader::array(j, "nodes", root)) {
        if (!n.is_string()) throw Reader::Failure{root + ".nodes: expected strings"};
        v.nodes.push_back(n.get<std::string>());
      }
    }
    if (j.contains("restarts")) v.restarts = static_cast<int>(Reader::unsigned_integer(j, "restarts", root));
    if (j.contains("scheduler")) v.scheduler = Reader::string(j, "scheduler", root);
    if (j.contains("components")) {
      auto components = components_from_json(j["components"], root + ".components");
      if (!components) return components.error();
      v.components = std::move(*components);
    }
    for (const auto& n : Reader::array(j, "affected_nodes", root)) {
      if (!n.is_string()) throw Reader::Failure{root + ".affected_nodes: expected strings"};
      v.affected_nodes.push_back(n.get<std::string>());
    }
    const json& gpus = Reader::array(j, "affected_gpus", root);
    for (size_t i = 0; i < gpus.size(); ++i) {
      const std::string path = root + ".affected_gpus[" + std::to_string(i) + "]";
      v.affected_gpus.push_back({Reader::string(gpus[i], "node", path), Reader::string(gpus[i], "pci", path)});
    }
    v.recommended_action = Reader::string(j, "recommended_action", root);
    if (j.contains("confidence")) {
      v.confidence = Reader::string(j, "confidence", root);
      if (v.confidence != "high" && v.confidence != "medium" && v.confidence != "low")
        throw Reader::Failure{root + ".confidence: expected high, medium or low, got '" + v.confidence + "'"};
    }
    const json& coverage = Reader::array(j, "coverage", root);
    for (size_t i = 0; i < coverage.size(); ++i) {
      v.coverage.push_back(coverage_from(coverage[i], root + ".coverage[" + std::to_string(i) + "]"));
    }
    // "missing_sources" was added after the first v1 writers: optional on input.
    if (j.contains("missing_sources")) {
      const json& missing = Reader::array(j, "missing_sources", root);
      for (size_t i = 0; i < missing.size(); ++i) {
        const std::string path = root + ".missing_sources[" + std::to_string(i) + "]";
        MissingSource m;
        m.node = Reader::string(missing[i], "node", path);
        m.source = Reader::string(missing[i], "source", path);
        const std::string status = Reader::string(missing[i], "status", path);
        auto parsed = coverage_status_from(status);
        if (!parsed) throw Reader::Failure{path + ".status: unknown coverage status: " + status};
        m.status = *parsed;
        m.note = Reader::string(missing[i], "note", path);
        for (const auto& id : Reader::array(missing[i], "named_by", path)) {
          if (!id.is_string()) throw Reader::Failure{path + ".named_by: expected strings"};
          m.named_by.push_back(id.get<std::string>());
        }
        v.missing_sources.push_back(std::move(m));
      }
    }
    if (j.contains("neighbours")) {
      const json& neighbours = Reader::array(j, "neighbours", root);
      for (size_t i = 0; i < neighbours.size(); ++i) {
        const std::string path = root + ".neighbours[" + std::to_string(i) + "]";
        Neighbour n;
        n.event = event_from(Reader::member(neighbours[i], "event", path), path + ".event");
        n.job = Reader::string(neighbours[i], "job", path);
        n.why = Reader::string(neighbours[i], "why", path);
        n.summary = Reader::string(neighbours[i], "summary", path);
        v.neighbours.push_back(std::move(n));
      }
    }
    if (j.contains("neighbours_omitted"))
      v.neighbours_omitted = Reader::unsigned_integer(j, "neighbours_omitted", root);
    if (j.contains("allocation")) {
      if (Status s = allocation_from_json(j["allocation"], root + ".allocation", v.allocation, v.uid); !s)
        return s.error();
    }
    if (j.contains("hung_rank")) {
      const json& h = Reader::member(j, "hung_rank", root);
      const std::string path = root + ".hung_rank";
      HungRank hung;
      hung.rank = Reader::integer(h, "rank", path);
      hung.node = Reader::string(h, "node", path);
      hung.process_group = Reader::string(h, "process_group", path);
      hung.seq = Reader::integer(h, "seq", path);
      hung.collective = Reader::string(h, "collective", path);
      for (const auto& rank : Reader::array(h, "waiting_ranks", path)) {
        if (!rank.is_number_integer()) throw Reader::Failure{path + ".waiting_ranks: expected integers"};
        hung.waiting_ranks.push_back(rank.get<int64_t>());
      }
      hung.evidence = Reader::string(h, "evidence", path);
      hung.summary = Reader::string(h, "summary", path);
      v.hung_rank = std::move(hung);
    }
    const json& ruleset = Reader::member(j, "ruleset", root);
    v.ruleset_version = Reader::string(ruleset, "version", root + ".ruleset");
    v.ruleset_hash = Reader::string(ruleset, "hash", root + ".ruleset");
    v.comment = Reader::string(j, "comment", root);
    return v;
  } catch (const Reader::Failure& failure) {
    return Error{kVerdictField, failure.message};
  } catch (const json::exception& e) {
    return Error{kVerdictJson, std::string("verdict: ") + e.what()};
  }
}

}  // namespace attrib
