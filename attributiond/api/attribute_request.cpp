#include "attributiond/api/attribute_request.h"

#include <map>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "rules/evidence/bundle.h"
#include "rules/rule_definitions.h"

namespace attrib::api {
namespace {

using json = nlohmann::json;

Error request_error(const std::string& field, const std::string& message) {
  return Error{kApiRequest, field + ": " + message};
}

constexpr TimeUs kSecondUs = 1000000;

Result<LogLine> observation_from(const json& item, const std::string& at, const std::set<std::string>& nodes) {
  if (!item.is_object()) return request_error(at, "expected {\"node\", \"source\", \"time\", \"text\", \"trusted\"}");
  for (const auto& [key, value] : item.items())
    if (key != "node" && key != "source" && key != "time" && key != "text" && key != "trusted")
      return request_error(at + "." + key, "unknown field (node, source, time, text, trusted)");
  LogLine line;
  auto node = item.find("node");
  if (node == item.end() || !node->is_string() || node->get<std::string>().empty())
    return request_error(at + ".node", "required: one of job.nodes");
  line.node = node->get<std::string>();
  if (!nodes.contains(line.node)) return request_error(at + ".node", "'" + line.node + "' is not one of job.nodes");
  auto source = item.find("source");
  if (source == item.end() || !source->is_string()) return request_error(at + ".source", "required");
  line.source = source->get<std::string>();
  if (!rules::detail::is_known_source(line.source))
    return request_error(at + ".source",
                         "'" + line.source +
                             "' is not a source: kernel, syslog, fabricmanager, slurm, spank, prometheus, gpus, app or "
                             "app.rank<N>");
  auto text = item.find("text");
  if (text == item.end() || !text->is_string()) return request_error(at + ".text", "required: the line as logged");
  line.text = text->get<std::string>();
  if (line.text.find('\n') != std::string::npos)
    return request_error(at + ".text", "one line per observation (it holds a newline)");
  if (auto time = item.find("time"); time != item.end() && !time->is_null()) {
    if (!time->is_string()) return request_error(at + ".time", "expected an ISO 8601 string or null");
    auto parsed = parse_iso_time(time->get<std::string>());
    if (!parsed) return request_error(at + ".time", "'" + time->get<std::string>() + "' is not an ISO 8601 time");
    line.time = *parsed;
  }
  if (auto trusted = item.find("trusted"); trusted != item.end() && !trusted->is_null()) {
    if (!trusted->is_boolean()) return request_error(at + ".trusted", "expected true or false");
    line.trusted = trusted->get<bool>();
  }
  return line;
}

// A coverage row: what the caller could read of one node's source ("status": ok, empty,
// partial, failed, timeout, unavailable, not_configured, refused; "detail": why).
Result<Coverage> coverage_from(const json& item, const std::string& at, const std::set<std::string>& nodes) {
  if (!item.is_object()) return request_error(at, "expected {\"node\", \"source\", \"status\", \"detail\"}");
  for (const auto& [key, value] : item.items())
    if (key != "node" && key != "source" && key != "status" && key != "detail")
      return request_error(at + "." + key, "unknown field (node, source, status, detail)");
  Coverage row;
  auto text_of = [&](const char* name, std::string& to) -> Status {
    auto it = item.find(name);
    if (it == item.end() || !it->is_string()) return request_error(at + "." + name, "required: a string");
    to = it->get<std::string>();
    return ok_status();
  };
  if (auto s = text_of("node", row.node); !s) return s.error();
  if (!nodes.contains(row.node)) return request_error(at + ".node", "'" + row.node + "' is not one of job.nodes");
  if (auto s = text_of("source", row.source); !s) return s.error();
  if (!rules::detail::is_known_source(row.source))
    return request_error(at + ".source", "'" + row.source + "' is not a source");
  std::string status;
  if (auto s = text_of("status", status); !s) return s.error();
  auto parsed = coverage_status_from(status);
  if (!parsed)
    return request_error(at + ".status", "'" + status +
                                             "' is not one of ok, empty, partial, failed, timeout, unavailable, "
                                             "not_configured, refused");
  row.status = *parsed;
  if (item.contains("detail"))
    if (auto s = text_of("detail", row.detail); !s) return s.error();
  return row;
}

}  // namespace

Result<AttributeRequest> parse_attribute_request(std::string_view body, const RequestLimits& limits) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e400
    return Error{kApiRequest, "request: not JSON: " + std::string(e.what())};
  }
  if (!j.is_object()) return request_error("request", "expected a JSON object");
  for (const auto& [key, value] : j.items())
    if (key != "schema" && key != "job" && key != "observations" && key != "coverage")
      return request_error(key, "unknown field (schema, job, observations, coverage)");
  if (auto schema = j.find("schema"); schema == j.end() || *schema != kRequestSchema)
    return request_error("schema", std::string("required: \"") + kRequestSchema + "\"");

  AttributeRequest out;
  auto job = j.find("job");
  if (job == j.end()) return request_error("job", "required: the attempt (job.json of evidence bundle v1)");
  rules::Bundle bundle;
  if (auto s = rules::job_from_json(*job, bundle); !s) return Error{kApiRequest, s.error().message};
  out.job = std::move(bundle.job);
  if (out.job.scheduler.empty())
    return request_error("job.scheduler", "required: who ran the attempt (kubernetes, static, ...)");
  if (out.job.scheduler == "slurm")
    return request_error("job.scheduler",
                         "Slurm jobs are attributed from their hooks (attrib-show --attribute queues one)");
  if (out.job.cluster.empty()) return request_error("job.cluster", "required: the scheduler's cluster name");
  if (out.job.nodes.empty()) return request_error("job.nodes", "at least one node");
  if (auto user = job->find("user"); user != job->end() && !user->is_null()) {
    if (!user->is_string()) return request_error("job.user", "expected a string");
    out.user = user->get<std::string>();
  }
  if (auto uid = job->find("uid"); uid != job->end() && !uid->is_null()) {
    if (!uid->is_number_unsigned() || uid->get<uint64_t>() > UINT32_MAX)
      return request_error("job.uid", "expected a Unix uid");
    out.uid = uid->get<uint32_t>();
  }
  if (bundle.explicit_window) {
    out.window_start = bundle.window_start;
    out.window_end = bundle.window_end;
  } else if (out.job.start && out.job.end) {
    out.window_start = *out.job.start - limits.window_lead_s * kSecondUs;
    out.window_end = *out.job.end + limits.window_grace_s * kSecondUs;
  }

  const std::set<std::string> nodes(out.job.nodes.begin(), out.job.nodes.end());
  if (auto observations = j.find("observations"); observations != j.end() && !observations->is_null()) {
    if (!observations->is_array()) return request_error("observations", "expected a list of lines");
    if (observations->size() > limits.max_observations)
      return Error{kApiTooLarge, "observations: " + std::to_string(observations->size()) + " lines, over " +
                                     std::to_string(limits.max_observations) + " (api.max_observations)"};
    // Each line's position in its (node, source) stream: the order the caller sent them.
    std::map<std::pair<std::string, std::string>, uint64_t> next_seq;
    out.observations.reserve(observations->size());
    for (size_t i = 0; i < observations->size(); ++i) {
      auto line = observation_from((*observations)[i], "observations[" + std::to_string(i) + "]", nodes);
      if (!line) return line.error();
      line->seq = next_seq[{line->node, line->source}]++;
      out.observations.push_back(std::move(*line));
    }
  }
  if (auto coverage = j.find("coverage"); coverage != j.end() && !coverage->is_null()) {
    if (!coverage->is_array()) return request_error("coverage", "expected a list of coverage rows");
    std::vector<Coverage> rows;
    for (size_t i = 0; i < coverage->size(); ++i) {
      const std::string at = "coverage[" + std::to_string(i) + "]";
      auto row = coverage_from((*coverage)[i], at, nodes);
      if (!row) return row.error();
      row->window_start = out.window_start;
      row->window_end = out.window_end;
      rows.push_back(std::move(*row));
    }
    // A stream's lines are the ones handed in, whatever the row says.
    for (Coverage& row : rows) {
      row.lines = 0;
      for (const LogLine& line : out.observations)
        if (line.node == row.node && line.source == row.source) ++row.lines;
    }
    out.coverage = std::move(rows);
  }
  return out;
}

}  // namespace attrib::api
