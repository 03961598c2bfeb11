// attrib-epilog: ships a JobEnded to attributiond when a job ends.
//
// Runs as EpilogSlurmctld (primary), as jobcomp/script, or as a slurmd Epilog. It must
// never hurt the cluster: it always exits 0 (a non-zero slurmd Epilog drains the node),
// bounds its RPC with a short deadline, and spools the message to disk when the daemon
// cannot take it, so the job is still attributed later. It runs no other program, so
// the missing PATH in EpilogSlurmctld's environment does not matter. Once the daemon takes
// its own report, it re-sends what earlier runs spooled (resend_spool).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "attrib/v1/attrib.grpc.pb.h"
#include "common/auth.h"
#include "common/config.h"
#include "common/grpc_limits.h"
#include "common/spool.h"
#include "core/clock.h"
#include "epilog/hook_env.h"

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

void resend_spool(const attrib::common::EpilogConfig& config, const attrib::common::AuthConfig& auth) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(config.deadline_ms);
  size_t sent = 0;
  for (const auto& file : attrib::common::list_spool_files(config.spool_dir)) {
    if (sent == kResendPerRun || std::chrono::steady_clock::now() >= until) return;
    auto message = attrib::common::read_spool_file(file);
    std::string why;
    const Sent result = message ? submit(config, auth, *message, why) : Sent::refused;
    if (result == Sent::failed) return;
    if (result == Sent::refused) {
      std::fprintf(stderr, "attrib-epilog: spooled %s moved to bad/: %s\n", file.c_str(),
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
  CLI::App app{"attrib-epilog: report a finished Slurm job to attributiond (always exits 0)"};
  std::string config_path = "/etc/attrib/attrib.yaml";
  bool print_only = false;
  app.add_option("-c,--config", config_path, "configuration file")->capture_default_str();
  app.add_flag("--print", print_only, "print the JobEnded message instead of sending it");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 0;
  }

  // An unreadable config must not lose the job: fall back to the documented defaults.
  attrib::common::EpilogConfig epilog_config;
  attrib::common::AuthConfig auth_config;
  std::string cluster;
  if (auto config = attrib::common::load_config(config_path)) {
    epilog_config = config->epilog;
    auth_config = config->auth;
    cluster = config->cluster;
  } else {
    std::fprintf(stderr, "attrib-epilog: %s (using defaults)\n", config.error().message.c_str());
  }
  auto message = attrib::epilog::job_ended_from_env(attrib::epilog::current_environment(), attrib::wall_clock_us());
  if (!message) {
    std::fprintf(stderr, "attrib-epilog: %s\n", message.error().message.c_str());
    return 0;
  }
  if (message->cluster().empty()) message->set_cluster(cluster);
  if (print_only) {
    std::printf("%s\n", message->DebugString().c_str());
    return 0;
  }
  std::string why;
  if (submit(epilog_config, auth_config, *message, why) == Sent::accepted) {
    resend_spool(epilog_config, auth_config);
    return 0;
  }
  auto spooled = attrib::common::write_spool_file(epilog_config.spool_dir, *message);
  if (spooled) {
    std::fprintf(stderr, "attrib-epilog: job %s spooled to %s: %s\n", message->job_id().c_str(), spooled->c_str(),
                 why.c_str());
  } else {
    std::fprintf(stderr, "attrib-epilog: job %s LOST: %s; and spooling failed: %s\n", message->job_id().c_str(),
                 why.c_str(), spooled.error().message.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attrib-epilog: unexpected error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "attrib-epilog: unexpected error\n");
  }
  return 0;  // never let a hook failure touch the job or drain a node
}
