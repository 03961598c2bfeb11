// The attribution API's request, attrib.attribute_request.v1 (docs/api.md, the schema in
// docs/schemas/attribute-request.v1.schema.json): one document for HTTP and gRPC.
//
//   { "schema": "attrib.attribute_request.v1",
//     "job": { job.json of evidence bundle v1, plus "scheduler" (required), "user", "uid" },
//     "observations": [ { "node", "source", "time", "text", "trusted" }, ... ],
//     "coverage": [ verdict v1 coverage rows ]   (optional: else derived from the lines) }
//
// It is an evidence bundle in one JSON document, so the head judges it exactly as
// attrib-replay judges a bundle, and archives it as one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/types.h"

namespace attrib::api {

inline constexpr const char* kRequestSchema = "attrib.attribute_request.v1";

struct RequestLimits {
  size_t max_observations = 200000;
  int64_t window_lead_s = 300;  // head.window_lead_s: a window from the job's start and end
  int64_t window_grace_s = 60;
};

struct AttributeRequest {
  JobFacts job;  // job.scheduler is never empty, never "slurm"
  std::optional<TimeUs> window_start;  // job.window, else [start - lead, end + grace] when both are known
  std::optional<TimeUs> window_end;
  std::vector<LogLine> observations;  // trusted as the caller asserts it (the API decides whether it counts)
  std::optional<std::vector<Coverage>> coverage;
  std::string user;             // job.user: who ran the attempt, as the caller names them
  std::optional<uint32_t> uid;  // job.uid
};

// Parses and checks a request. Errors name the field: API_E_REQUEST ("observations[3].
// source: ..."; the job object's fields as "job.json: <field>: ..."), API_E_TOO_LARGE
// (more than limits.max_observations).
Result<AttributeRequest> parse_attribute_request(std::string_view body, const RequestLimits& limits);

}  // namespace attrib::api
