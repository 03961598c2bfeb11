#include "attributiond/node/node_collect_service.h"

#include <algorithm>

#include <chrono>

#include <spdlog/spdlog.h>

#include "attributiond/ops/log_context.h"
#include "common/grpc_limits.h"
#include "common/grpc_status.h"
#include "core/clock.h"

namespace attrib::node {
namespace {

std::string status_label(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "ok";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "failed_precondition";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "invalid_argument";
    default:
      return "error";
  }
}

}  // namespace

NodeCollectService::NodeCollectService(std::string node_name, std::shared_ptr<const rules::RulePack> pack,
                                       std::vector<std::unique_ptr<collectors::Collector>> collectors,
                                       std::shared_ptr<const common::Authenticator> auth, ops::NodeMetrics* metrics)
    : node_name_(std::move(node_name)),
      pack_(std::move(pack)),
      collectors_(std::move(collectors)),
      auth_(std::move(auth)),
      metrics_(metrics) {}

grpc::Status NodeCollectService::Collect(grpc::ServerContext* context, const v1::CollectRequest* request,
                                         v1::CollectResponse* response) {
  ops::LogScope log_scope(request->job_id(), node_name_);
  // Before any collector runs: node evidence is for the head daemon (root or SlurmUser) only.
  if (auto denied = auth_->require_cluster_daemon(context, common::kCollect, *request); !denied.ok()) return denied;
  auto started = std::chrono::steady_clock::now();
  grpc::Status status = serve(*request, *response);
  // The head believes only answers signed by the agent's own uid (common/auth.h).
  if (status.ok() && context != nullptr)
    if (auto signed_ = auth_->sign_answer(*context, common::kCollect, *request, *response); !signed_) {
      spdlog::error("job {}: cannot sign the answer: {}", request->job_id(), signed_.error().message);
      response->Clear();
      status = common::to_grpc_status(signed_.error());
    }
  if (metrics_ != nullptr) {
    metrics_->collect_requests.labels({status_label(status.error_code())}).inc();
    metrics_->collect_duration.get().observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (status.ok())
      for (const auto& row : response->coverage())
        metrics_->coverage.labels({ops::coverage_source_label(row.source()), row.status()}).inc();
  }
  return status;
}

grpc::Status NodeCollectService::serve(const v1::CollectRequest& request, v1::CollectResponse& response) {
  // A misrouted request (wrong address in the head's table) must not pass off this
  // node's logs as another node's.
  if (request.node() != node_name_)
    return common::to_grpc_status(
        Error{kCollectWrongNode, "this agent serves node " + node_name_ + ", not " + request.node()});
  if (request.window_end_us() < request.window_start_us())
    return common::to_grpc_status(Error{kRequestInvalid, "window ends before it starts"});
  collectors::CollectRequest collect{.job_id = request.job_id(),
                                     .node = request.node(),
                                     .window_start = request.window_start_us(),
                                     .window_end = request.window_end_us(),
                                     .cluster = request.cluster()};
  if (request.has_owner_uid()) collect.owner_uid = request.owner_uid();
  // The lines read go back too when the head keeps raw evidence, within the gRPC message
  // limit (half of it: the events and coverage travel in the same answer).
  uint64_t raw_budget = std::min<uint64_t>(request.raw_max_bytes(), common::kMaxGrpcMessageBytes / 2);
  pipeline::NodeEvidence evidence =
      pipeline::collect_node(pack_, collectors_, collect, {request.sources().begin(), request.sources().end()},
                             request.raw_max_bytes() > 0 ? &raw_budget : nullptr);
  spdlog::info("job {}: collected {} events on {}", request.job_id(), evidence.events.size(), node_name_);
  response = pipeline::to_proto(evidence, rules::pack_hash(*pack_));
  response.set_ruleset_version(rules::pack_version(*pack_));
  response.set_agent_time_us(wall_clock_us());
  response.set_nvswitch_devices(count_nvswitch_devices("/dev"));
  return grpc::Status::OK;
}

uint32_t count_nvswitch_devices(const std::filesystem::path& dev) {
  std::error_code error;
  uint32_t count = 0;
  for (std::filesystem::directory_iterator it(dev, error), end; !error && it != end; it.increment(error))
    if (it->path().filename().string().starts_with("nvidia-nvswitch") && it->path().filename() != "nvidia-nvswitchctl")
      ++count;
  return count;
}

}  // namespace attrib::node
