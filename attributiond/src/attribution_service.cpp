#include "attribution_service.h"

#include <chrono>

#include <spdlog/spdlog.h>

namespace attrib::head {

TimeUs wall_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

Result<bool> accept_job(JobStore& store, v1::JobEnded request, const std::string& default_cluster, TimeUs now) {
  if (request.job_id().empty()) return Error{"SUBMIT_E_INVALID", "JobEnded without job_id"};
  if (request.cluster().empty()) request.set_cluster(default_cluster);
  std::string cluster = request.cluster();
  return store.enqueue(request, cluster, now);
}

AttributionService::AttributionService(JobStore& store, std::string default_cluster,
                                       std::function<void()> on_enqueued)
    : store_(store), default_cluster_(std::move(default_cluster)), on_enqueued_(std::move(on_enqueued)) {}

grpc::Status AttributionService::SubmitJobEnded(grpc::ServerContext*, const v1::JobEnded* request,
                                                v1::SubmitResponse* response) {
  auto queued = accept_job(store_, *request, default_cluster_, wall_clock_us());
  if (!queued) {
    if (queued.error().code == "SUBMIT_E_INVALID")
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, queued.error().message);
    spdlog::error("job {}: cannot queue: {}", request->job_id(), queued.error().message);
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "cannot queue job: " + queued.error().message);
  }
  response->set_accepted(true);
  response->set_duplicate(!*queued);
  spdlog::info("job {}: {} (hook {}, nodes {})", request->job_id(), *queued ? "queued" : "already queued",
               v1::HookKind_Name(request->hook()), request->node_list());
  if (*queued) on_enqueued_();
  return grpc::Status::OK;
}

grpc::Status AttributionService::GetVerdict(grpc::ServerContext*, const v1::GetVerdictRequest* request,
                                            v1::GetVerdictResponse* response) {
  std::string cluster = request->cluster().empty() ? default_cluster_ : request->cluster();
  auto record = store_.lookup({cluster, request->job_id()});
  if (!record) return grpc::Status(grpc::StatusCode::INTERNAL, record.error().message);
  if (!record->has_value())
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        "no job " + request->job_id() + " on cluster " + cluster + " in the attrib archive");
  const JobRecord& job = **record;
  response->set_status(job.status);
  response->set_last_error(job.last_error);
  if (job.verdict_json) response->set_verdict_json(*job.verdict_json);
  return grpc::Status::OK;
}

}  // namespace attrib::head
