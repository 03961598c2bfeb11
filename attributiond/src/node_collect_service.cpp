#include "node_collect_service.h"

#include <spdlog/spdlog.h>

namespace attrib::head {

NodeCollectService::NodeCollectService(std::string node_name, std::shared_ptr<const rules::RulePack> pack,
                                       std::vector<std::unique_ptr<collectors::Collector>> collectors)
    : node_name_(std::move(node_name)), pack_(std::move(pack)), collectors_(std::move(collectors)) {}

grpc::Status NodeCollectService::Collect(grpc::ServerContext*, const v1::CollectRequest* request,
                                         v1::CollectResponse* response) {
  // A misrouted request (wrong address in the head's table) must not pass off this
  // node's logs as another node's.
  if (request->node() != node_name_)
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "this agent serves node " + node_name_ + ", not " + request->node());
  if (request->window_end_us() < request->window_start_us())
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "window ends before it starts");
  collectors::CollectRequest collect{.job_id = request->job_id(),
                                     .node = request->node(),
                                     .window_start = request->window_start_us(),
                                     .window_end = request->window_end_us(),
                                     .cluster = request->cluster()};
  NodeEvidence evidence = collect_node(pack_, collectors_, collect, {request->sources().begin(), request->sources().end()});
  spdlog::info("job {}: collected {} events on {}", request->job_id(), evidence.events.size(), node_name_);
  *response = to_proto(evidence, rules::pack_hash(*pack_));
  return grpc::Status::OK;
}

}  // namespace attrib::head
