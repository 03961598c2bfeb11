#include "attributiond/head/attribution_service.h"

#include <chrono>

#include <spdlog/spdlog.h>

#include "attributiond/fleet/array_report.h"
#include "attributiond/store/fleet_queries.h"
#include "common/evidence_archive.h"
#include "common/grpc_status.h"
#include "common/proto_text.h"
#include "core/clock.h"
#include "core/failpoint.h"
#include "rules/evidence/bundle_export.h"
#include "slurm/slurmdbd_client.h"

namespace attrib::head {

Result<v1::JobEnded> checked_job(v1::JobEnded request, const std::string& default_cluster) {
  if (request.job_id().empty()) return Error{kSubmitInvalid, "JobEnded without job_id"};
  common::make_text_valid_utf8(request);  // from a hook or a spool file: any bytes
  // A time that is not one is unknown (0), so the worker's window arithmetic cannot
  // overflow (fuzz/regressions/job_ended).
  request.set_start_time_us(checked_time_us(request.start_time_us()).value_or(0));
  request.set_end_time_us(checked_time_us(request.end_time_us()).value_or(0));
  request.set_hook_time_us(checked_time_us(request.hook_time_us()).value_or(0));
  if (!slurm::is_hostlist(request.node_list()))
    return Error{kSubmitInvalid, "JobEnded.node_list is not a Slurm hostlist: '" + request.node_list() + "'"};
  if (request.cluster().empty()) request.set_cluster(default_cluster);
  return request;
}

Result<v1::JobEnded> checked_hook_report(const v1::JobEnded& request, const std::string& default_cluster) {
  if (request.hook() == v1::HOOK_KIND_SWEEP)
    return Error{kSubmitInvalid, "JobEnded.hook is HOOK_KIND_SWEEP, which only the head's own sweep reports"};
  return checked_job(request, default_cluster);
}

// The archived evidence as GetVerdict promises it, packed bundle v1 files: the streams the
// archive keeps as compact records (rules/raw_lines.h) written out as .jsonl again.
static Result<std::string> bundle_v1_blob(const std::string& archived) {
  auto files = common::unpack_evidence(archived);
  if (!files) return files.error();
  auto bundle = rules::archived_bundle_files(std::move(*files));
  if (!bundle) return bundle.error();
  std::string blob = common::pack_evidence(*bundle);
  if (blob.empty()) return Error{kEvidenceUnpack, "zstd could not compress the evidence again"};
  return blob;
}

static Result<bool> enqueue_checked(store::JobStore& store, const Result<v1::JobEnded>& checked, TimeUs now) {
  if (!checked) return checked.error();
  return store.enqueue(*checked, checked->cluster(), now);
}

Result<bool> accept_job(store::JobStore& store, const v1::JobEnded& request, const std::string& default_cluster,
                        TimeUs now) {
  return enqueue_checked(store, checked_job(request, default_cluster), now);
}

Result<bool> accept_hook_report(store::JobStore& store, const v1::JobEnded& request,
                                const std::string& default_cluster, TimeUs now) {
  return enqueue_checked(store, checked_hook_report(request, default_cluster), now);
}

AttributionService::AttributionService(store::JobStore& store, std::string default_cluster,
                                       std::function<void()> on_enqueued,
                                       std::shared_ptr<const common::Authenticator> auth, ops::HeadMetrics* metrics,
                                       fleet::FleetPolicy fleet)
    : store_(store),
      default_cluster_(std::move(default_cluster)),
      on_enqueued_(std::move(on_enqueued)),
      auth_(std::move(auth)),
      metrics_(metrics),
      fleet_(std::move(fleet)) {}

grpc::Status AttributionService::SubmitJobEnded(grpc::ServerContext* context, const v1::JobEnded* request,
                                                v1::SubmitResponse* response) {
  // Before anything is written: only the hooks (root, SlurmUser) may queue a job.
  if (auto denied = auth_->require_cluster_daemon(context, common::kSubmitJobEnded, *request); !denied.ok())
    return denied;
  auto queued = accept_hook_report(store_, *request, default_cluster_, wall_clock_us());
  if (!queued) {
    spdlog::error("job {}: cannot queue: {}", request->job_id(), queued.error().message);
    return common::to_grpc_status(Error{queued.error().code, "cannot queue job: " + queued.error().message});
  }
  failpoint("queue.committed");  // queued, the hook not answered: it spools the job too
  response->set_accepted(true);
  response->set_duplicate(!*queued);
  if (metrics_ != nullptr)
    (*queued ? metrics_->jobs_accepted : metrics_->jobs_duplicate)
        .labels({ops::hook_label(request->hook()), "rpc"})
        .inc();
  spdlog::info("job {}: {} (hook {}, nodes {})", request->job_id(), *queued ? "queued" : "already queued",
               v1::HookKind_Name(request->hook()), request->node_list());
  if (*queued) on_enqueued_();
  return grpc::Status::OK;
}

grpc::Status AttributionService::GetVerdict(grpc::ServerContext* context, const v1::GetVerdictRequest* request,
                                            v1::GetVerdictResponse* response) {
  auto caller = auth_->authenticate(context, common::kGetVerdict, *request);
  if (!caller) {
    spdlog::warn("GetVerdict for job {} from {} rejected: {}", request->job_id(),
                 context != nullptr ? context->peer() : std::string("an in-process caller"), caller.error().message);
    return common::to_grpc_status(caller.error());
  }
  std::string cluster = request->cluster().empty() ? default_cluster_ : request->cluster();
  const std::optional<int64_t> run = request->has_run() ? std::optional<int64_t>(request->run()) : std::nullopt;
  auto record = store_.lookup(cluster, request->job_id(), run);
  if (!record) return common::to_grpc_status(record.error());
  // A het job is judged once, as "H": its component "H+O" answers with that verdict.
  if (const size_t plus = request->job_id().find('+');
      !record->has_value() && plus != std::string::npos && plus > 0 &&
      request->job_id().find_first_not_of("0123456789+") == std::string::npos) {
    record = store_.lookup(cluster, request->job_id().substr(0, plus), run);
    if (!record) return common::to_grpc_status(record.error());
  }
  if (!record->has_value() && !request->has_run() && !request->job_id().empty() &&
      request->job_id().find_first_not_of("0123456789") == std::string::npos) {
    // No job with this plain id: an array job, whose tasks are archived as "<id>_<task>".
    // Others see only their own tasks.
    const std::optional<uint32_t> owner =
        auth_->is_admin(*caller) ? std::nullopt : std::optional<uint32_t>(caller->uid);
    auto tasks = store_.with_read_db(
        [&](store::Database& db) { return store::array_tasks(db, cluster, request->job_id(), owner); });
    if (!tasks) return common::to_grpc_status(tasks.error());
    if (!tasks->judged.empty() || tasks->waiting > 0) {
      response->set_status("array");
      response->set_array_json(fleet::array_rollup_report(cluster, request->job_id(), *tasks).dump());
      return grpc::Status::OK;
    }
  }
  if (!record->has_value())
    return common::to_grpc_status(
        Error{kVerdictNotFound, "no job " + request->job_id() +
                                    (request->has_run() ? " run " + std::to_string(request->run()) : std::string()) +
                                    " on cluster " + cluster + " in the attrib archive"});
  const store::JobRecord& job = **record;
  // Verdicts name nodes, hardware and other users' evidence: ordinary users see their own.
  // A job whose owner is unknown (no uid from the hook) is for admins only.
  if (auto owner = common::job_owner_uid(job.uid, job.user);
      !auth_->is_admin(*caller) && (!owner || caller->uid != *owner)) {
    spdlog::info("GetVerdict for job {} denied to uid {} (job uid {})", request->job_id(), caller->uid,
                 owner ? std::to_string(*owner) : std::string("unknown"));
    return common::to_grpc_status(
        Error{kVerdictForbidden,
              "job " + request->job_id() + " is not yours: uid " + std::to_string(caller->uid) +
                  " may read only its own jobs' verdicts (admins: root, the SlurmUser, auth.admin_group)"});
  }
  response->set_status(job.status);
  response->set_last_error(job.last_error);
  response->set_run(job.key.run);
  response->set_runs(job.runs);
  if (job.verdict_json) response->set_verdict_json(*job.verdict_json);
  auto versions = store_.versions(job.key);
  if (!versions) return common::to_grpc_status(versions.error());
  for (const store::VerdictVersion& v : *versions) {
    v1::VerdictVersion* out = response->add_versions();
    out->set_version(v.version);
    out->set_time_us(v.time);
    out->set_ruleset_version(v.ruleset_version);
    out->set_ruleset_hash(v.ruleset_hash);
    out->set_domain(v.domain);
    out->set_rule(v.rule);
    out->set_confidence(v.confidence);
    out->set_why(v.why);
  }
  if (request->include_evidence() && !auth_->is_admin(*caller)) {
    // Every line read on the job's nodes in its window, other users' jobs included.
    response->set_evidence_note("the raw evidence is for admins (root, the SlurmUser, auth.admin_group)");
  } else if (request->include_evidence()) {
    auto evidence = store_.evidence(job.key);
    if (!evidence) return common::to_grpc_status(evidence.error());
    if (evidence->has_value()) {
      auto bundle = bundle_v1_blob((*evidence)->blob);
      if (!bundle) return common::to_grpc_status(bundle.error());
      response->set_evidence_bundle(std::move(*bundle));
      response->set_evidence_complete((*evidence)->complete);
      response->set_evidence_note((*evidence)->note);
    } else {
      response->set_evidence_note("the archive kept no raw evidence for this run");
    }
  }
  return grpc::Status::OK;
}

grpc::Status AttributionService::Attribute(grpc::ServerContext* context, const v1::AttributeRequest* request,
                                           v1::AttributeResponse* response) {
  if (attributor_ == nullptr)
    return common::to_grpc_status(Error{kApiRequest, "this daemon serves no attribution API"});
  auto caller = auth_->authenticate(context, common::kAttribute, *request);
  if (!caller) {
    spdlog::warn("Attribute from {} rejected: {}",
                 context != nullptr ? context->peer() : std::string("an in-process caller"), caller.error().message);
    attributor_->count_unauthenticated("grpc");
    return common::to_grpc_status(caller.error());
  }
  const api::ApiCaller api_caller =
      caller->verified ? api::ApiCaller{"uid:" + std::to_string(caller->uid), caller->uid, auth_->is_admin(*caller)}
                       : api::ApiCaller{"anonymous", std::nullopt, true};
  auto outcome = attributor_->attribute(request->request_json(), api_caller, wall_clock_us());
  attributor_->count("grpc", outcome);
  if (!outcome) return common::to_grpc_status(outcome.error());
  response->set_verdict_json(outcome->verdict_json);
  response->set_cluster(outcome->key.cluster);
  response->set_job_id(outcome->key.job_id);
  response->set_run(outcome->key.run);
  response->set_duplicate(!outcome->created);
  return grpc::Status::OK;
}

}  // namespace attrib::head
