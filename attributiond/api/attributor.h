// The attribution API's one path, for HTTP (api_http_server.h) and gRPC (the head's
// Attribute RPC): limits, trust, judging, archiving, sinks (docs/api.md).
//
// A request is an evidence bundle in one document (attribute_request.h). It is written as
// bundle v1 files, judged by the same engine path attrib-replay takes, archived as a
// finished run of (job.cluster, job.job_id) with its scheduler and those files as its raw
// evidence (so attrib-show --export-bundle replays it), and delivered to the sinks. It
// never acts: no Slurm field, no drain.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attributiond/api/rate_limiter.h"
#include "attributiond/ops/daemon_metrics.h"
#include "attributiond/sinks/verdict_sink.h"
#include "attributiond/store/job_store.h"
#include "common/config.h"
#include "core/result.h"
#include "rules/engine.h"

namespace attrib::api {

struct ApiCaller {
  std::string name;             // for the rate limit and the log: "token:<name>", "uid:<uid>", "anonymous"
  std::optional<uint32_t> uid;  // a MUNGE caller's uid
  bool trusted = false;         // an admin or a service token: its lines' trust assertions count
};

class Attributor {
 public:
  // `sinks` and `metrics` may be null.
  Attributor(const common::Config& config, std::shared_ptr<const rules::RulePack> pack, store::JobStore& store,
             const std::vector<std::unique_ptr<sinks::VerdictSink>>* sinks, ops::HeadMetrics* metrics);

  // Errors: API_E_RATE (retry_after_s says when), API_E_TOO_LARGE, API_E_REQUEST,
  // API_E_CLUSTER, and the archive's (DB_E_*). `retry_after_s` may be null.
  Result<store::ExternalArchived> attribute(std::string_view body, const ApiCaller& caller, TimeUs now,
                                            int64_t* retry_after_s = nullptr);

  // Counts one request's outcome in attrib_api_requests_total (transport: http | grpc).
  void count(const char* transport, const Result<store::ExternalArchived>& outcome) const;
  void count_unauthenticated(const char* transport) const;

 private:
  const common::Config& config_;
  std::shared_ptr<const rules::RulePack> pack_;
  store::JobStore& store_;
  const std::vector<std::unique_ptr<sinks::VerdictSink>>* sinks_;
  ops::HeadMetrics* metrics_;
  RateLimiter rate_;
};

}  // namespace attrib::api
