// attrib-epilog-send: attrib-epilog's gRPC half, for epilog.delivery rpc (a host whose
// spool no head reads: compute nodes running the slurmd Epilog, a backup slurmctld).
// attrib-epilog has already spooled the job (--spooled FILE) and becomes this program
// (exec); so it is still the hook Slurm waits for. It must never hurt the cluster: it
// always exits 0, bounds its RPC with epilog.deadline_ms, and removes the spool file only
// once the daemon has the job; a report the daemon refuses goes to the spool's bad/.
// Once the daemon takes this run's report, it re-sends what earlier runs left spooled
// (resend_spool). Without --spooled (the hook could not write the file) it sends the job
// the environment describes, with --hook-time-us the hook's time.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "attrib/v1/attrib.grpc.pb.h"
#include "common/auth.h"
#include "common/command_line.h"
#include "common/config.h"
#include "common/grpc_limits.h"
#include "common/spool.h"
#include "core/clock.h"
#include "epilog/hook_env.h"
#include "epilog/hook_main.h"

namespace {

enum class Sent { accepted, refused, failed };  // refused: the daemon will never take it

Sent submit(const attrib::common::EpilogConfig& config, const attrib::common::AuthConfig& auth,
            const attrib::v1::JobEnded& message, std::string& why) {
  auto channel = attrib::common::make_channel(config.server);
  auto stub = attrib::v1::Attribution::NewStub(channel);
  grpc::ClientContext context;
  const auto deadline = std::chrono::milliseconds(config.deadline_ms);
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  // The daemon accepts JobEnded only from root or the SlurmUser, proven by MUNGE. Without
  // a credential (munged down: libmunge alone would retry for 2.25 s) the job is spooled
  // within the deadline: the daemon drains the spool itself.
  if (auto signed_ = attrib::common::attach_credential(context, auth, attrib::common::kSubmitJobEnded, message,
                                                       std::chrono::steady_clock::now() + deadline);
      !signed_) {
    why = signed_.error().message;
    return Sent::failed;
  }
  attrib::v1::SubmitResponse response;
  grpc::Status status = stub->SubmitJobEnded(&context, message, &response);
  if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
    why = "daemon at " + config.server + " refused it: " + status.error_message();
    return Sent::refused;
  }
  if (!status.ok()) {
    why = "daemon at " + config.server + " unreachable (" + status.error_message() + ")";
    return Sent::failed;
  }
  if (!response.accepted()) {
    why = "daemon at " + config.server + " did not accept the job";
    return Sent::failed;
  }
  return Sent::accepted;
}

// Reports that earlier runs spooled (the daemon was down, or no head drains this host's
// spool: a backup slurmctld's host) go after this run's own, oldest first, while the
// daemon takes them, within one RPC deadline in all and at most kResendPerRun of them, so
// the hook stays short. A report the daemon refuses goes to bad/; the first failure ends
// the round (the daemon is still away). A spool the head drains too is harmless: the same
// report twice is one attempt.
constexpr size_t kResendPerRun = 16;

void resend_spool(const attrib::common::EpilogConfig& config, const attrib::common::AuthConfig& auth,
                  const std::string& own) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(config.deadline_ms);
  size_t sent = 0;
  for (const auto& file : attrib::common::list_spool_files(config.spool_dir)) {
    if (sent == kResendPerRun || std::chrono::steady_clock::now() >= until) return;
    if (file == own) continue;  // this run's, sent already
    auto message = attrib::common::read_spool_file(file);
    std::string why;
    const Sent result = message ? submit(config, auth, *message, why) : Sent::refused;
    if (result == Sent::failed) return;
    if (result == Sent::refused) {
      std::fprintf(stderr, "attrib-epilog-send: spooled %s moved to bad/: %s\n", file.c_str(),
                   message ? why.c_str() : message.error().message.c_str());
      (void)attrib::common::quarantine_spool_file(file);
      continue;
    }
    std::error_code ec;
    std::filesystem::remove(file, ec);  // the head may have drained it meanwhile
    ++sent;
  }
}

int run(int argc, char** argv) {
  CLI::App app{"attrib-epilog-send: send a job attrib-epilog spooled to attributiond (always exits 0)"};
  std::string config_path = "/etc/attrib/attrib.yaml";
  std::string spooled;
  int64_t hook_time_us = 0;
  app.add_option("-c,--config", config_path, "configuration file")->capture_default_str();
  app.add_option("--spooled", spooled, "the spool file attrib-epilog wrote for this job");
  app.add_option("--hook-time-us", hook_time_us,
                 "without --spooled: when the hook ran (the job is read from the "
                 "environment)");
  if (attrib::common::parse_command_line(app, argc, argv)) return 0;  // always 0, as promised

  // An unreadable config must not lose the job: fall back to the documented defaults.
  attrib::common::EpilogConfig epilog_config;
  attrib::common::AuthConfig auth_config;
  std::string cluster;
  if (auto config = attrib::common::load_config(config_path)) {
    epilog_config = config->epilog;
    auth_config = config->auth;
    cluster = config->cluster;
  } else {
    std::fprintf(stderr, "attrib-epilog-send: %s (using defaults)\n", config.error().message.c_str());
  }
  auto message = spooled.empty()
                     ? attrib::epilog::job_ended_from_env(attrib::epilog::current_environment(),
                                                          hook_time_us > 0 ? hook_time_us : attrib::wall_clock_us())
                     : attrib::common::read_spool_file(spooled);
  if (!message) {
    std::fprintf(stderr, "attrib-epilog-send: %s\n", message.error().message.c_str());
    if (!spooled.empty()) (void)attrib::common::quarantine_spool_file(spooled);
    return 0;
  }
  if (message->cluster().empty()) message->set_cluster(cluster);
  std::string why;
  switch (submit(epilog_config, auth_config, *message, why)) {
    case Sent::accepted:
      if (!spooled.empty()) {
        std::error_code ec;
        std::filesystem::remove(spooled, ec);  // the head may have drained it meanwhile
      }
      resend_spool(epilog_config, auth_config, spooled);
      break;
    case Sent::refused:
      std::fprintf(stderr, "attrib-epilog-send: job %s: %s\n", message->job_id().c_str(), why.c_str());
      if (!spooled.empty()) (void)attrib::common::quarantine_spool_file(spooled);
      break;
    case Sent::failed:
      if (!spooled.empty())
        std::fprintf(stderr, "attrib-epilog-send: job %s stays spooled in %s: %s\n", message->job_id().c_str(),
                     spooled.c_str(), why.c_str());
      else
        std::fprintf(stderr, "attrib-epilog-send: job %s LOST: %s, and it could not be spooled\n",
                     message->job_id().c_str(), why.c_str());
      break;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return attrib::epilog::hook_main("attrib-epilog-send", argc, argv, run); }
