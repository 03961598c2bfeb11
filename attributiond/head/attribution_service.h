// The head's gRPC API: accept JobEnded (durably, before answering) and serve verdicts.
#pragma once

#include <functional>
#include <string>

#include "attrib/v1/attrib.grpc.pb.h"
#include "attributiond/api/attributor.h"
#include "attributiond/fleet/offender_policy.h"
#include "attributiond/head/sweep.h"
#include "attributiond/ops/daemon_metrics.h"
#include "attributiond/store/job_store.h"
#include "common/auth.h"
#include "common/config.h"

namespace attrib::head {

class AttributionService final : public v1::Attribution::Service {
 public:
  // on_enqueued wakes the workers; it must not block.
  // auth: checks every call's credential (auth.h); required.
  // metrics: counted when given (the head daemon's); may be null.
  // fleet: the repeat-offender policy GetNodeHistory reports with (config fleet.*).
  AttributionService(store::JobStore& store, std::string default_cluster, std::function<void()> on_enqueued,
                     std::shared_ptr<const common::Authenticator> auth, ops::HeadMetrics* metrics = nullptr,
                     fleet::FleetPolicy fleet = fleet::FleetPolicy{});

  grpc::Status SubmitJobEnded(grpc::ServerContext* context, const v1::JobEnded* request,
                              v1::SubmitResponse* response) override;
  grpc::Status GetVerdict(grpc::ServerContext* context, const v1::GetVerdictRequest* request,
                          v1::GetVerdictResponse* response) override;
  // Fleet history (docs/fleet.md), implemented in fleet_rpcs.cpp.
  grpc::Status GetNodeHistory(grpc::ServerContext* context, const v1::NodeHistoryRequest* request,
                              v1::FleetReport* response) override;
  grpc::Status ListVerdicts(grpc::ServerContext* context, const v1::VerdictListRequest* request,
                            v1::FleetReport* response) override;
  grpc::Status ListFailed(grpc::ServerContext* context, const v1::FailedListRequest* request,
                          v1::FleetReport* response) override;
  // Admins only (fleet_rpcs.cpp); answered by the backfill function (set_backfill).
  grpc::Status Backfill(grpc::ServerContext* context, const v1::BackfillRequest* request,
                        v1::BackfillResponse* response) override;
  // Admins only (fleet_rpcs.cpp): store::archive_stats with the retention settings.
  grpc::Status GetArchiveStats(grpc::ServerContext* context, const v1::ArchiveStatsRequest* request,
                               v1::FleetReport* response) override;
  // The attribution API over gRPC (docs/api.md): anyone with a MUNGE credential; only an
  // admin's trust assertions count. Answered by the attributor (set_attributor).
  grpc::Status Attribute(grpc::ServerContext* context, const v1::AttributeRequest* request,
                         v1::AttributeResponse* response) override;

  // Queues from slurmdbd the attempts the archive lacks: one job's (job_id), or those that
  // ended since `since` (job_id empty). Set by the head daemon, which owns accounting.
  using BackfillFn =
      std::function<Result<SweepCount>(const std::string& cluster, const std::string& job_id, TimeUs since)>;
  void set_backfill(BackfillFn backfill) { backfill_ = std::move(backfill); }
  // The retention GetArchiveStats reports next to the figures.
  void set_retention(common::ArchiveConfig retention) { retention_ = retention; }
  // The head daemon's attributor (attributiond/api), which outlives the service.
  void set_attributor(api::Attributor* attributor) { attributor_ = attributor; }

 private:
  store::JobStore& store_;
  std::string default_cluster_;
  std::function<void()> on_enqueued_;
  std::shared_ptr<const common::Authenticator> auth_;
  ops::HeadMetrics* metrics_;
  fleet::FleetPolicy fleet_;
  BackfillFn backfill_;
  api::Attributor* attributor_ = nullptr;
  common::ArchiveConfig retention_;
};

// The report as the queue takes it (valid UTF-8, times that are times, the cluster set);
// kSubmitInvalid: it can never be queued (no id, not a hostlist).
Result<v1::JobEnded> checked_job(v1::JobEnded request, const std::string& default_cluster);
// checked_job for what comes from outside the head (the RPC, a spool file): the sweep's
// kind is the head's own, since a sweep report always opens a new run.
Result<v1::JobEnded> checked_hook_report(const v1::JobEnded& request, const std::string& default_cluster);

// Shared by the RPC and the sweep: check and queue one job; returns whether it was new.
Result<bool> accept_job(store::JobStore& store, const v1::JobEnded& request, const std::string& default_cluster,
                        TimeUs now);
Result<bool> accept_hook_report(store::JobStore& store, const v1::JobEnded& request,
                                const std::string& default_cluster, TimeUs now);

}  // namespace attrib::head
