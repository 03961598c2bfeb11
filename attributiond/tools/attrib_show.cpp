// attrib-show <jobid>: a job's verdict from attributiond, readable or as verdict v1 JSON.
// --export-bundle DIR writes the archived evidence as a bundle (attrib-replay DIR).
// Exit codes: 0 verdict shown, 1 job known but not attributed yet, 2 unknown job, not
// permitted (another user's job) or error.
//
// Each call carries a MUNGE credential (auth.h): the daemon learns the caller's uid from
// it and shows ordinary users only their own jobs.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "attrib/v1/attrib.grpc.pb.h"
#include "auth.h"
#include "config.h"
#include "attrib/rules/bundle_export.h"
#include "attrib/rules/verdict_text.h"

int main(int argc, char** argv) {
  CLI::App app{"attrib-show: why a Slurm job ended, as decided by attrib"};
  std::string job_id;
  std::string config_path = "/etc/attrib/attrib.yaml";
  std::string server;
  std::string cluster;
  bool json = false;
  app.add_option("jobid", job_id, "Slurm job id (4242, 4242_7, 4242+1)")->required();
  auto* config_option =
      app.add_option("-c,--config", config_path, "configuration file (for the daemon address and auth settings)")
          ->capture_default_str();
  std::string munge_socket;
  auto* munge_socket_option =
      app.add_option("--munge-socket", munge_socket, "munged socket for the credential (overrides auth.munge_socket)")
          ->envname("ATTRIB_MUNGE_SOCKET");
  app.add_option("--server", server, "attributiond address (overrides the config): unix:///path or host:port");
  app.add_option("--cluster", cluster, "cluster name (default: the daemon's)");
  app.add_flag("--json", json, "print the verdict v1 JSON exactly as archived");
  std::string export_dir;
  app.add_option("--export-bundle", export_dir,
                 "write the job's archived evidence as an evidence bundle into this (new) directory, for attrib-replay");
  CLI11_PARSE(app, argc, argv);

  // The config gives the address (unless --server) and the auth settings. With --server
  // and no config file (a workstation, the test cluster) the auth defaults apply.
  attrib::config::AuthConfig auth;
  bool config_needed = server.empty() || config_option->count() > 0;
  std::error_code ignored;
  if (config_needed || std::filesystem::exists(config_path, ignored)) {
    auto config = attrib::config::load(config_path);
    if (!config) {
      std::fprintf(stderr, "attrib-show: %s%s\n", config.error().message.c_str(),
                   server.empty() ? " (or pass --server)" : "");
      return 2;
    }
    if (server.empty()) server = config->epilog.server;
    auth = config->auth;
  }
  if (munge_socket_option->count() > 0) auth.munge_socket = munge_socket;

  auto stub = attrib::v1::Attribution::NewStub(grpc::CreateChannel(server, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  attrib::v1::GetVerdictRequest request;
  request.set_job_id(job_id);
  request.set_cluster(cluster);
  if (auto signed_ = attrib::auth::attach_credential(context, auth, attrib::auth::kGetVerdict, request); !signed_) {
    std::fprintf(stderr, "attrib-show: %s\n", signed_.error().message.c_str());
    return 2;
  }
  attrib::v1::GetVerdictResponse response;
  grpc::Status status = stub->GetVerdict(&context, request, &response);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    std::fprintf(stderr, "attrib-show: unknown job %s: %s\n", job_id.c_str(), status.error_message().c_str());
    return 2;
  }
  if (status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    std::fprintf(stderr, "attrib-show: not permitted: %s\n", status.error_message().c_str());
    return 2;
  }
  if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
    std::fprintf(stderr, "attrib-show: attributiond at %s rejected the credential: %s\n", server.c_str(),
                 status.error_message().c_str());
    return 2;
  }
  if (!status.ok()) {
    std::fprintf(stderr, "attrib-show: cannot reach attributiond at %s: %s\n", server.c_str(),
                 status.error_message().c_str());
    return 2;
  }
  if (response.verdict_json().empty() && response.status() == "done") {
    std::fprintf(stderr, "attrib-show: job %s was not attributed: %s\n", job_id.c_str(),
                 response.last_error().c_str());
    return 1;
  }
  if (response.verdict_json().empty()) {
    std::fprintf(stderr, "attrib-show: job %s is %s, not attributed yet%s%s\n", job_id.c_str(),
                 response.status().c_str(), response.last_error().empty() ? "" : ": ",
                 response.last_error().c_str());
    return 1;
  }
  if (json && export_dir.empty()) {
    std::cout << response.verdict_json() << "\n";
    return 0;
  }
  auto verdict = attrib::verdict_from_json(nlohmann::json::parse(response.verdict_json()));
  if (!verdict) {
    std::fprintf(stderr, "attrib-show: archived verdict unreadable: %s\n", verdict.error().message.c_str());
    return 2;
  }
  if (!export_dir.empty()) {
    // The verdict carries every event it weighed; replaying the bundle gives the same decision.
    if (auto written = attrib::rules::export_verdict_bundle(export_dir, *verdict); !written) {
      std::fprintf(stderr, "attrib-show: %s %s\n", written.error().code.c_str(), written.error().message.c_str());
      return 2;
    }
    std::printf("attrib-show: job %s exported to %s (attrib-replay %s)\n", job_id.c_str(), export_dir.c_str(),
                export_dir.c_str());
    return 0;
  }
  std::cout << attrib::render_verdict_text(*verdict);
  if (response.status() != "done")
    std::cout << "(comment not yet written to Slurm" << (response.last_error().empty() ? "" : ": ")
              << response.last_error() << ")\n";
  return 0;
}
