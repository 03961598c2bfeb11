// AttributionService's fleet history RPCs (docs/fleet.md), authorised like GetVerdict:
// GetNodeHistory is for admins (a node's history names every user's jobs); ListVerdicts
// shows non-admins only their own jobs, counts included. All three read on the store's
// read-only connection (JobStore::with_read_db), never under the queue's lock, and in
// bounded pages: any user may list, and none may stall SubmitJobEnded by it.
#include <spdlog/spdlog.h>

#include "attributiond/fleet/fleet_report.h"
#include "attributiond/head/attribution_service.h"
#include "attributiond/store/retention.h"
#include "common/grpc_status.h"
#include "core/clock.h"
#include "core/json_text.h"

namespace attrib::head {
namespace {

std::string peer(const grpc::ServerContext* context) {
  return context != nullptr ? context->peer() : std::string("an in-process caller");
}

// Verdicts per ListVerdicts page when the request names no limit (at most store::kMaxPageRows).
constexpr size_t kDefaultPageRows = 500;

}  // namespace

grpc::Status AttributionService::GetNodeHistory(grpc::ServerContext* context, const v1::NodeHistoryRequest* request,
                                                v1::FleetReport* response) {
  auto caller = auth_->authenticate(context, common::kGetNodeHistory, *request);
  if (!caller) {
    spdlog::warn("GetNodeHistory for node {} from {} rejected: {}", request->node(), peer(context),
                 caller.error().message);
    return common::to_grpc_status(caller.error());
  }
  if (!auth_->is_admin(*caller)) {
    spdlog::info("GetNodeHistory for node {} denied to uid {}", request->node(), caller->uid);
    return common::to_grpc_status(
        Error{kAuthDenied,
              "node history is for admins (root, the SlurmUser, auth.admin_group): it names every "
              "user's jobs; uid " +
                  std::to_string(caller->uid) + " is not one"});
  }
  if (request->node().empty()) return common::to_grpc_status(Error{kRequestInvalid, "no node named"});
  std::string cluster = request->cluster().empty() ? default_cluster_ : request->cluster();
  auto report = store_.with_read_db([&](store::Database& db) {
    return fleet::node_history_report(db, request->node(), request->since_us(), fleet_, wall_clock_us(), cluster);
  });
  if (!report) return common::to_grpc_status(report.error());
  response->set_json(json_text(*report));
  return grpc::Status::OK;
}

grpc::Status AttributionService::ListVerdicts(grpc::ServerContext* context, const v1::VerdictListRequest* request,
                                              v1::FleetReport* response) {
  auto caller = auth_->authenticate(context, common::kListVerdicts, *request);
  if (!caller) {
    spdlog::warn("ListVerdicts from {} rejected: {}", peer(context), caller.error().message);
    return common::to_grpc_status(caller.error());
  }
  store::VerdictQuery query;
  query.since_us = request->since_us();
  query.domain = request->domain();
  query.cluster = request->cluster().empty() ? default_cluster_ : request->cluster();
  if (!auth_->is_admin(*caller)) query.owner = caller->uid;
  query.limit = request->limit() == 0 ? kDefaultPageRows : request->limit();  // the store caps it
  if (request->has_after())
    query.after = store::PageKey{request->after().time_us(), request->after().cluster(), request->after().job_id()};
  std::optional<store::PageKey> next;
  auto report = store_.with_read_db([&](store::Database& db) { return fleet::verdict_list_report(db, query, &next); });
  if (!report) return common::to_grpc_status(report.error());
  response->set_json(json_text(*report));
  if (next) {
    response->mutable_next()->set_time_us(next->time_us);
    response->mutable_next()->set_cluster(next->cluster);
    response->mutable_next()->set_job_id(next->job_id);
  }
  return grpc::Status::OK;
}

grpc::Status AttributionService::ListFailed(grpc::ServerContext* context, const v1::FailedListRequest* request,
                                            v1::FleetReport* response) {
  auto caller = auth_->authenticate(context, common::kListFailed, *request);
  if (!caller) {
    spdlog::warn("ListFailed from {} rejected: {}", peer(context), caller.error().message);
    return common::to_grpc_status(caller.error());
  }
  std::optional<uid_t> owner;
  if (!auth_->is_admin(*caller)) owner = caller->uid;
  std::string cluster = request->cluster().empty() ? default_cluster_ : request->cluster();
  auto failed = store_.failed_jobs(request->limit() == 0 ? 200 : std::min<uint32_t>(request->limit(), 5000));
  if (!failed) return common::to_grpc_status(failed.error());
  response->set_json(json_text(fleet::failed_list_report(*failed, owner, cluster)));
  return grpc::Status::OK;
}

grpc::Status AttributionService::Backfill(grpc::ServerContext* context, const v1::BackfillRequest* request,
                                          v1::BackfillResponse* response) {
  auto caller = auth_->authenticate(context, common::kBackfill, *request);
  if (!caller) {
    spdlog::warn("Backfill from {} rejected: {}", peer(context), caller.error().message);
    return common::to_grpc_status(caller.error());
  }
  if (!auth_->is_admin(*caller)) {
    spdlog::info("Backfill denied to uid {}", caller->uid);
    return common::to_grpc_status(
        Error{kAuthDenied, "queueing jobs from slurmdbd is for admins (root, the SlurmUser, auth.admin_group); uid " +
                               std::to_string(caller->uid) + " is not one"});
  }
  if (!backfill_) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "this daemon has no accounting to read");
  if (request->job_id().empty() && request->since_us() <= 0)
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "name a job, or a time since when");
  const std::string cluster = request->cluster().empty() ? default_cluster_ : request->cluster();
  auto count = backfill_(cluster, request->job_id(), request->since_us());
  if (!count) return common::to_grpc_status(count.error());
  spdlog::info(
      "Backfill by uid {} ({}): {} attempts queued, {} already known", caller->uid,
      request->job_id().empty() ? "since " + std::to_string(request->since_us() / 1000000) : "job " + request->job_id(),
      count->queued, count->known);
  response->set_queued(count->queued);
  response->set_known(count->known);
  if (count->queued > 0) on_enqueued_();
  return grpc::Status::OK;
}

grpc::Status AttributionService::GetArchiveStats(grpc::ServerContext* context, const v1::ArchiveStatsRequest* request,
                                                 v1::FleetReport* response) {
  auto caller = auth_->authenticate(context, common::kGetArchiveStats, *request);
  if (!caller) {
    spdlog::warn("GetArchiveStats from {} rejected: {}", peer(context), caller.error().message);
    return common::to_grpc_status(caller.error());
  }
  if (!auth_->is_admin(*caller)) {
    return common::to_grpc_status(Error{kAuthDenied, "the archive's figures are for admins (root, the SlurmUser, "
                                                     "auth.admin_group); uid " +
                                                         std::to_string(caller->uid) + " is not one"});
  }
  auto stats = store::archive_stats(store_);
  if (!stats) return common::to_grpc_status(stats.error());
  nlohmann::json out = {
      {"file_bytes", stats->file_bytes},
      {"used_bytes", stats->used_bytes},
      {"runs", stats->runs},
      {"queued", stats->queued},
      {"dead_lettered", stats->dead_lettered},
      {"schema_version", stats->schema_version},
      {"last_prune", time_or_null(stats->last_prune)},
      {"oldest_run", time_or_null(stats->oldest_run)},
      {"newest_run", time_or_null(stats->newest_run)},
      {"evidence",
       {{"runs", stats->evidence_runs},
        {"stored_bytes", stats->evidence_stored_bytes},
        {"raw_bytes", stats->evidence_raw_bytes},
        {"pruned_runs", stats->evidence_pruned},
        {"oldest", time_or_null(stats->oldest_evidence)}}},
      {"retention",
       {{"retention_days", retention_.retention_days},
        {"evidence_retention_days", retention_.evidence_retention_days},
        {"max_bytes", retention_.max_bytes},
        {"prune_interval_s", retention_.prune_interval_s}}},
  };
  response->set_json(json_text(out));
  return grpc::Status::OK;
}

}  // namespace attrib::head
