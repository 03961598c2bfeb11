#include "attributiond/api/attributor.h"

#include <spdlog/spdlog.h>

#include "attributiond/api/attribute_request.h"
#include "common/evidence_archive.h"
#include "rules/evidence/bundle.h"
#include "rules/evidence/bundle_export.h"

namespace attrib::api {
namespace {

// What the archive's row holds of the attempt: the fields a hook's report would carry.
v1::JobEnded row_request(const AttributeRequest& request, const ApiCaller& caller, TimeUs now) {
  v1::JobEnded row;
  row.set_job_id(request.job.job_id);
  row.set_cluster(request.job.cluster);
  std::string nodes;
  for (const std::string& node : request.job.nodes) nodes += (nodes.empty() ? "" : ",") + node;
  row.set_node_list(nodes);
  row.set_state(request.job.state);
  row.set_exit_code(request.job.exit_code);
  row.set_signal(request.job.signal);
  row.set_start_time_us(request.job.start.value_or(0));
  row.set_end_time_us(request.job.end.value_or(0));
  row.set_hook_time_us(now);
  // Who may read it (attrib-show, the dashboard): the owner a trusted caller names, else
  // the MUNGE caller itself; with neither, admins only.
  if (caller.trusted) {
    row.set_user(request.user);
    row.set_uid(request.uid.value_or(0));
  } else if (caller.uid) {
    row.set_uid(*caller.uid);
  }
  return row;
}

// The request's bundle judged in memory, by the path attrib-replay takes for a directory.
Result<Verdict> judge(rules::BundleFiles files, const std::shared_ptr<const rules::RulePack>& pack) {
  auto bundle = rules::open_bundle(std::move(files));
  if (!bundle) return bundle.error();
  return rules::replay_bundle(*bundle, pack);
}

const char* result_label(const Error& error) {
  const std::string& code = error.code;
  if (code == kApiRate) return "rate_limited";
  if (code == kApiTooLarge) return "too_large";
  if (error_kind(code) == ErrorKind::Unauthenticated) return "unauthenticated";
  if (error_kind(code) == ErrorKind::InvalidArgument) return "invalid";
  return "failed";
}

}  // namespace

Attributor::Attributor(const common::Config& config, std::shared_ptr<const rules::RulePack> pack,
                       store::JobStore& store, const std::vector<std::unique_ptr<sinks::VerdictSink>>* sinks,
                       ops::HeadMetrics* metrics)
    : config_(config),
      pack_(std::move(pack)),
      store_(store),
      sinks_(sinks),
      metrics_(metrics),
      rate_(config.api.rate_per_minute) {}

Result<store::ExternalArchived> Attributor::attribute(std::string_view body, const ApiCaller& caller, TimeUs now,
                                                      int64_t* retry_after_s) {
  if (const int64_t wait = rate_.take(caller.name, now); wait > 0) {
    if (retry_after_s != nullptr) *retry_after_s = wait;
    return Error{kApiRate, caller.name + " is over api.rate_per_minute (" + std::to_string(config_.api.rate_per_minute) +
                               "); retry in " + std::to_string(wait) + " s"};
  }
  if (static_cast<int64_t>(body.size()) > config_.api.max_request_bytes)
    return Error{kApiTooLarge, "request: " + std::to_string(body.size()) + " bytes, over " +
                                   std::to_string(config_.api.max_request_bytes) + " (api.max_request_bytes)"};
  const RequestLimits limits{static_cast<size_t>(config_.api.max_observations), config_.head.window_lead_s,
                             config_.head.window_grace_s};
  auto request = parse_attribute_request(body, limits);
  if (!request) return request.error();
  if (request->job.cluster == config_.cluster)
    return Error{kApiCluster, "job.cluster: '" + request->job.cluster +
                                  "' is this daemon's Slurm cluster, whose jobs only its hooks report; name the "
                                  "other scheduler's cluster"};
  // The same attempt handed in again (a client retrying after a lost answer) is answered
  // from the archive, not judged a second time.
  const std::optional<uint32_t> only_owner = caller.trusted ? std::nullopt : caller.uid;
  auto known = store_.find_external(request->job.cluster, request->job.job_id, request->job.scheduler,
                                    request->job.attempt, only_owner);
  if (!known) return known.error();
  if (*known) return std::move(**known);
  // Trust by structure: a line is trusted only when an admin or a service vouches for it.
  if (!caller.trusted)
    for (LogLine& line : request->observations) line.trusted = false;

  rules::RawEvidence raw{rules::raw_lines_of(request->observations),
                         request->coverage.value_or(std::vector<Coverage>{}), request->window_start,
                         request->window_end};
  auto files = rules::raw_bundle_files(request->job, raw);
  if (!files) return Error{kApiRequest, "observations: " + files.error().message};
  // No coverage handed in: the reader derives it from the lines, and names job nodes that
  // sent none unavailable, as it does for any bundle without coverage.json.
  if (!request->coverage) files->erase(rules::kCoverageFile);
  store::ArchivedEvidence evidence;
  for (const auto& [path, content] : *files) evidence.raw_bytes += content.size();
  evidence.blob = common::pack_evidence(*files);
  evidence.lines = raw.lines.size();
  evidence.complete = !evidence.blob.empty();
  // Packed first: the bundle takes the files' contents over.
  auto verdict = judge(std::move(*files), pack_);
  if (!verdict) return verdict.error();

  auto archived = store_.archive_external(row_request(*request, caller, now), request->job.scheduler, *verdict,
                                          rules::events_of_verdict(*verdict),
                                          evidence.blob.empty() ? nullptr : &evidence, now, only_owner);
  if (!archived) return archived.error();
  spdlog::info("api: {} {}/{} run {} from {}: {}{}", request->job.scheduler, archived->key.cluster,
               archived->key.job_id, archived->key.run, caller.name, verdict->domain,
               archived->created ? "" : " (judged before)");
  // Sinks take it like a hooked job's verdict. The caller already holds it, so a sink that
  // cannot take it is logged, not a failed request.
  if (archived->created && sinks_ != nullptr)
    for (const auto& sink : *sinks_)
      if (auto s = sink->deliver(archived->key, archived->verdict_json); !s)
        spdlog::error("api: {}/{} run {}: sink {}: {}", archived->key.cluster, archived->key.job_id,
                      archived->key.run, sink->name(), s.error().message);
  return archived;
}

void Attributor::count(const char* transport, const Result<store::ExternalArchived>& outcome) const {
  if (metrics_ == nullptr) return;
  const char* result = !outcome ? result_label(outcome.error()) : outcome->created ? "attributed" : "duplicate";
  metrics_->api_requests.labels({transport, result}).inc();
}

void Attributor::count_unauthenticated(const char* transport) const {
  if (metrics_ != nullptr) metrics_->api_requests.labels({transport, "unauthenticated"}).inc();
}

}  // namespace attrib::api
