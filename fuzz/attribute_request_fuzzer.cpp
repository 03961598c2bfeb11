// The attribution API's request (attributiond/api/attribute_request.h): the body of
// POST /v1/attribute and of the gRPC Attribute call, from any caller, then the bundle v1
// files the head judges it from (rules/bundle_export.h raw_bundle_files), where a node
// name that is no host name must be refused, never become a path. Property: a request
// that parses keeps within its limits and names only job nodes.
#include <set>

#include "attributiond/api/attribute_request.h"
#include "fuzz/fuzz_support.h"
#include "rules/evidence/bundle_export.h"

namespace attrib::fuzz {

int attribute_request(const uint8_t* data, size_t size) {
  constexpr size_t kMaxObservations = 64;
  auto request = api::parse_attribute_request(as_text(data, size), {kMaxObservations, 300, 60});
  if (!request) return 0;
  require(request->observations.size() <= kMaxObservations, "more observations than the limit");
  require(!request->job.scheduler.empty() && request->job.scheduler != "slurm", "a request without another scheduler");
  const std::set<std::string> nodes(request->job.nodes.begin(), request->job.nodes.end());
  for (const LogLine& line : request->observations) require(nodes.contains(line.node), "a line of no job node");
  rules::RawEvidence raw{rules::raw_lines_of(request->observations),
                         request->coverage.value_or(std::vector<Coverage>{}), request->window_start,
                         request->window_end};
  auto files = rules::raw_bundle_files(request->job, raw);
  if (files)
    for (const auto& [path, content] : *files)
      require(path.find("..") == std::string::npos && path.front() != '/', "a bundle file outside the bundle");
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(attribute_request)
