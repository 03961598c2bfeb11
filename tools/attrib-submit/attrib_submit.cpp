// attrib-submit BUNDLE_DIR: the static-input client of the attribution API (docs/api.md).
// An attempt of any scheduler (a Kubernetes job, a batch run elsewhere) written as an
// evidence bundle v1 (job.json and <host>/<source>.log files) is sent to the head, which
// judges it as attrib-replay would, archives it and answers with the verdict.
//
//   attrib-submit DIR                        gRPC to the head (the config's epilog.server
//                                            or --server), with a MUNGE credential
//   attrib-submit --url http://head:8477 DIR POST /v1/attribute: Bearer token of
//                                            --token-file, else a MUNGE credential
//   attrib-submit --print-request DIR        the request document only, for curl
//
// job.json without "scheduler" gets --scheduler's. Exit codes: 0 verdict printed, 2 the
// bundle, the request or the call failed.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "attrib/v1/attrib.grpc.pb.h"
#include "collectors/http_client.h"
#include "common/auth.h"
#include "common/command_line.h"
#include "common/config.h"
#include "common/grpc_limits.h"
#include "core/json_text.h"
#include "core/verdict.h"
#include "core/verdict_text.h"
#include "core/whole_file.h"
#include "rules/evidence/bundle.h"

namespace {

using json = nlohmann::json;

// The bundle as one attrib.attribute_request.v1 document: job.json as it is (with the
// scheduler filled in), every line the bundle reader reads with its time and trust, and
// the recorded coverage when the bundle has coverage.json.
attrib::Result<std::string> request_of(const std::filesystem::path& dir, const std::string& scheduler) {
  auto bundle = attrib::rules::open_bundle(dir);
  if (!bundle) return bundle.error();
  json job;
  try {
    job = json::parse(attrib::read_whole_file(dir / "job.json").value_or(""));
  } catch (const json::exception& e) {
    return attrib::Error{attrib::kBundleJob, "job.json: not JSON: " + std::string(e.what())};
  }
  if (!job.contains("scheduler")) job["scheduler"] = scheduler;
  json observations = json::array();
  auto coverage = attrib::rules::read_bundle_lines(*bundle, [&](const attrib::LogLine& line) {
    observations.push_back({{"node", line.node},
                            {"source", line.source},
                            {"time", line.time ? json(attrib::format_time(*line.time)) : json(nullptr)},
                            {"text", line.text},
                            {"trusted", line.trusted}});
  });
  if (!coverage) return coverage.error();
  json request = {{"schema", "attrib.attribute_request.v1"}, {"job", job}, {"observations", observations}};
  if (bundle->recorded_coverage) {
    json rows = json::array();
    for (const attrib::Coverage& c : *bundle->recorded_coverage)
      rows.push_back(
          {{"node", c.node}, {"source", c.source}, {"status", attrib::to_string(c.status)}, {"detail", c.detail}});
    request["coverage"] = rows;
  }
  return attrib::json_text(request);
}

attrib::Result<std::string> read_token(const std::string& path) {
  std::ifstream in(path);
  std::string token;
  if (!in || !std::getline(in, token) || token.empty())
    return attrib::Error{attrib::kApiRequest, path + ": no token on its first line"};
  return token;
}

int print_verdict(const std::string& verdict_json, bool as_json) {
  if (as_json) {
    std::printf("%s\n", verdict_json.c_str());
    return 0;
  }
  auto verdict = attrib::verdict_from_json(json::parse(verdict_json, nullptr, false));
  if (!verdict) {
    std::fprintf(stderr, "attrib-submit: the answer is no verdict: %s\n", verdict.error().message.c_str());
    return 2;
  }
  std::printf("%s", attrib::render_verdict_text(*verdict).c_str());
  return 0;
}

int post(const std::string& url, const std::string& body, const std::string& token_file,
         const attrib::common::AuthConfig& auth, bool as_json) {
  std::vector<std::string> headers = {"Content-Type: application/json"};
  if (!token_file.empty()) {
    auto token = read_token(token_file);
    if (!token) {
      std::fprintf(stderr, "attrib-submit: %s\n", token.error().message.c_str());
      return 2;
    }
    headers.push_back("Authorization: Bearer " + *token);
  } else if (auth.enabled()) {
    auto credential = attrib::common::encode_http_attribute(auth.munge_socket, body);
    if (!credential) {
      std::fprintf(stderr, "attrib-submit: %s\n", credential.error().message.c_str());
      return 2;
    }
    headers.push_back("Authorization: MUNGE " + *credential);
  }
  auto answer = attrib::collectors::http_post(attrib::collectors::join_url(url, "/v1/attribute"), body, headers, 60000);
  if (!answer) {
    std::fprintf(stderr, "attrib-submit: %s: %s\n", url.c_str(), answer.error().message.c_str());
    return 2;
  }
  if (answer->status != 200) {
    std::fprintf(stderr, "attrib-submit: %s answered %ld: %s\n", url.c_str(), answer->status,
                 attrib::collectors::body_excerpt(answer->body).c_str());
    return 2;
  }
  return print_verdict(answer->body, as_json);
}

int call(const std::string& server, const std::string& body, const attrib::common::AuthConfig& auth, bool as_json) {
  auto stub = attrib::v1::Attribution::NewStub(attrib::common::make_channel(server));
  attrib::v1::AttributeRequest request;
  request.set_request_json(body);
  attrib::v1::AttributeResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  if (auto signed_ = attrib::common::attach_credential(context, auth, attrib::common::kAttribute, request); !signed_) {
    std::fprintf(stderr, "attrib-submit: %s\n", signed_.error().message.c_str());
    return 2;
  }
  grpc::Status status = stub->Attribute(&context, request, &response);
  if (!status.ok()) {
    std::fprintf(stderr, "attrib-submit: %s: %s\n", server.c_str(),
                 attrib::common::describe_grpc_failure(status).c_str());
    return 2;
  }
  if (!as_json)
    std::printf("Archived as job %s run %lld on cluster %s%s\n", response.job_id().c_str(),
                static_cast<long long>(response.run()), response.cluster().c_str(),
                response.duplicate() ? " (judged before: its verdict)" : "");
  return print_verdict(response.verdict_json(), as_json);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Sends an evidence bundle of any scheduler's job to attributiond's attribution API (docs/api.md)"};
  std::string dir, scheduler = "static", url, token_file, server, munge_socket;
  std::string config_path = "/etc/attrib/attrib.yaml";
  bool print_request = false, as_json = false;
  app.add_option("bundle", dir, "evidence bundle v1 directory (job.json, <host>/<source>.log)")->required();
  app.add_option("--scheduler", scheduler, "who ran it, when job.json does not say (kubernetes, static, ...)");
  app.add_option("--url", url, "the HTTP API's base URL (api.listen), e.g. http://head:8477; default: gRPC");
  app.add_option("--token-file", token_file, "with --url: a file whose first line is a token of api.token_file");
  app.add_option("--server", server, "attributiond's gRPC address (overrides the config's epilog.server)");
  auto* config_option = app.add_option("-c,--config", config_path, "configuration file (address and auth settings)");
  auto* munge_option = app.add_option("--munge-socket", munge_socket, "munged's socket (default: libmunge's)");
  app.add_flag("--print-request", print_request, "print the request document (for curl) and send nothing");
  app.add_flag("--json", as_json, "print verdict v1 JSON");
  if (auto done = attrib::common::parse_command_line(app, argc, argv)) return *done;

  auto body = request_of(dir, scheduler);
  if (!body) {
    std::fprintf(stderr, "attrib-submit: %s\n", body.error().message.c_str());
    return 2;
  }
  if (print_request) {
    std::printf("%s\n", body->c_str());
    return 0;
  }
  attrib::common::AuthConfig auth;
  std::error_code ignored;
  if (config_option->count() > 0 || std::filesystem::exists(config_path, ignored)) {
    auto config = attrib::common::load_config(config_path);
    if (!config) {
      std::fprintf(stderr, "attrib-submit: %s\n", config.error().message.c_str());
      return 2;
    }
    if (server.empty()) server = config->epilog.server;
    auth = config->auth;
  }
  if (munge_option->count() > 0) auth.munge_socket = munge_socket;
  if (!url.empty()) return post(url, *body, token_file, auth, as_json);
  if (server.empty()) {
    std::fprintf(stderr, "attrib-submit: no server: pass --server, --url or a config file\n");
    return 2;
  }
  return call(server, *body, auth, as_json);
}
