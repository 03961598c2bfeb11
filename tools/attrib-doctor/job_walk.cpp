#include "tools/attrib-doctor/job_walk.h"

#include <chrono>
#include <filesystem>

#include "attrib/v1/attrib.grpc.pb.h"
#include "common/auth.h"
#include "common/grpc_limits.h"
#include "core/comment.h"
#include "core/verdict.h"
#include "slurm/accounting.h"
#include "slurm/slurmdbd_client.h"
#include "tools/attrib-doctor/spool_checks.h"

namespace attrib::doctor {
namespace {

namespace fs = std::filesystem;

// The job's hook reports still in the spool, or set aside in its bad/ folder
// (<cluster>_<job>_<time>_<pid>.jobended, common/spool_file.cpp).
void spooled_reports(const common::Config& config, const std::string& job_id, const std::string& area, Findings& out) {
  const std::string prefix = config.cluster + "_" + job_id + "_";
  for (const fs::path& dir : {fs::path(config.head.spool_dir), fs::path(config.head.spool_dir) / "bad"}) {
    std::error_code error;
    for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
      if (!it->path().filename().string().starts_with(prefix)) continue;
      if (dir.filename() == "bad")
        out.fail(area, "hook report",
                 it->path().string() +
                     " was quarantined: not owned by root or the SlurmUser, "
                     "or not a job end",
                 "read attributiond's log for 'quarantined'; move the fixed file back into " + config.head.spool_dir);
      else
        out.warn(area, "hook report", it->path().string() + " waits in the spool: the head has not taken it",
                 "start attributiond-head with head.spool_dir " + config.head.spool_dir);
    }
  }
}

void check_comment(const common::Config& config, const std::string& job_id, const Verdict& verdict,
                   const std::string& area, Findings& out) {
  if (!config.head.write_comment) return;
  auto connection = slurm::SlurmdbdConnection::open();
  if (!connection) {
    out.fail(area, "comment", connection.error().message, "start slurmdbd");
    return;
  }
  auto record = (*connection)->read_job(config.cluster, job_id);
  if (!record) {
    out.fail(area, "comment", record.error().message, "check the job id and cluster " + config.cluster);
    return;
  }
  const auto field = slurm::comment_field_named(config.head.comment_field).value_or(slurm::CommentField::kComment);
  const std::string kept = comment_segment(record->comment_in(field));
  if (kept.empty())
    out.fail(area, "comment", config.head.comment_field + " in slurmdbd holds no attrib segment",
             "see the slurm checks above (AccountingStoreFlags, the dry-run write)");
  else if (kept != render_comment(verdict))
    out.warn(area, "comment",
             config.head.comment_field + " holds '" + kept + "', another run's verdict or an older one",
             "`attrib-show --all " + job_id + "` lists every run");
  else
    out.ok(area, "comment", config.head.comment_field + " in slurmdbd: " + kept);
}

}  // namespace

void walk_job(const common::Config& config, const std::string& job_id, Findings& out) {
  const std::string area = "job " + job_id;
  spooled_reports(config, job_id, area, out);
  auto stub = v1::Attribution::NewStub(common::make_channel(config.epilog.server));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::GetVerdictRequest request;
  request.set_job_id(job_id);
  request.set_cluster(config.cluster);
  v1::GetVerdictResponse response;
  if (auto signed_ = common::attach_credential(context, config.auth, common::kGetVerdict, request); !signed_) {
    out.fail(area, "head", signed_.error().message, "start munged");
    return;
  }
  const grpc::Status status = stub->GetVerdict(&context, request, &response);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    out.fail(area, "received", "the head has no report of job " + job_id,
             "check the slurm checks above (the hook); then `attrib-show --attribute " + job_id +
                 "` queues it from slurmdbd");
    return;
  }
  if (!status.ok()) {
    out.fail(area, "head", common::describe_grpc_failure(status), "start attributiond-head");
    return;
  }
  out.ok(area, "received",
         "run " + std::to_string(response.run()) + " of " + std::to_string(response.runs()) + " in the archive");
  const std::string& state = response.status();
  if (state == "queued" || state == "attributing") {
    out.warn(area, "attributed", state + (response.last_error().empty() ? "" : ": " + response.last_error()),
             "wait for the queue; if it stays, read attributiond's log for job " + job_id);
    return;
  }
  if (state == "failed") {
    out.fail(area, "attributed", "given up after repeated failures: " + response.last_error(),
             "fix the cause above, then `attrib-show --attribute " + job_id + "`");
    return;
  }
  if (state == "array") {
    out.ok(area, "attributed",
           "an array: `attrib-show " + job_id + "` rolls up its tasks; walk one task (" + job_id + "_N)");
    return;
  }
  auto verdict = verdict_from_json(nlohmann::json::parse(response.verdict_json(), nullptr, false));
  if (!verdict) {
    out.fail(area, "verdict", verdict.error().message, "report this as a bug");
    return;
  }
  for (const Coverage& row : verdict->coverage) {
    if (row.status == CoverageStatus::Ok || row.status == CoverageStatus::Empty) continue;
    out.warn(area, "collected " + row.node + " " + row.source,
             std::string(to_string(row.status)) + (row.detail.empty() ? "" : ": " + row.detail),
             "docs/admin-guide.md, 'Troubleshooting: what coverage says'");
  }
  out.ok(area, "verdict", verdict->domain + " (" + verdict->confidence + ")");
  check_comment(config, job_id, *verdict, area, out);
}

}  // namespace attrib::doctor
