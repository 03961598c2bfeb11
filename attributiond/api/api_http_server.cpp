#include "attributiond/api/api_http_server.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "core/clock.h"

namespace attrib::api {
namespace {

using ops::send_error;

int http_status(const Error& error) {
  if (error.code == kApiRate) return 429;
  switch (error_kind(error.code)) {
    case ErrorKind::InvalidArgument:
      return 400;
    case ErrorKind::Unauthenticated:
      return 401;
    case ErrorKind::PermissionDenied:
      return 403;
    case ErrorKind::NotFound:
      return 404;
    case ErrorKind::ResourceExhausted:
      return 413;
    case ErrorKind::Unavailable:
      return 503;
    case ErrorKind::FailedPrecondition:
    case ErrorKind::Internal:
      break;
  }
  return 500;
}

// Compares every byte whatever the first difference, so the time taken says nothing of
// how much of a guessed token was right.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

}  // namespace

Result<std::map<std::string, std::string>> load_api_tokens(const std::string& path) {
  std::map<std::string, std::string> tokens;
  if (path.empty()) return tokens;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Error{kApiRequest, path + ": api.token_file cannot be read"};
  if ((st.st_mode & 077) != 0)
    return Error{kApiRequest, path + ": api.token_file is readable by others than its owner (chmod 600)"};
  std::ifstream in(path);
  if (!in) return Error{kApiRequest, path + ": api.token_file cannot be read"};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::string name, token, extra;
    if (!(words >> name)) continue;
    const std::string at = path + ":" + std::to_string(number) + ": ";
    if (!(words >> token) || (words >> extra)) return Error{kApiRequest, at + "expected `<name> <token>`"};
    if (token.size() < 16) return Error{kApiRequest, at + "the token of '" + name + "' is shorter than 16 characters"};
    if (!tokens.emplace(token, name).second) return Error{kApiRequest, at + "the token of '" + name + "' is given twice"};
  }
  return tokens;
}

Result<ApiCaller> ApiHttpServer::caller_of(const std::string& authorization, std::string_view body) const {
  if (authorization.starts_with("Bearer ")) {
    const std::string token = authorization.substr(7);
    const std::string* name = nullptr;
    for (const auto& [known, who] : tokens_)
      if (same_secret(token, known)) name = &who;
    if (name == nullptr) return Error{kAuthInvalid, "the Bearer token is not one of api.token_file"};
    return ApiCaller{"token:" + *name, std::nullopt, true};
  }
  if (authorization.starts_with("MUNGE ")) {
    auto caller = auth_->verify_http_attribute(authorization.substr(6), body);
    if (!caller) return caller.error();
    if (!caller->verified) return ApiCaller{"anonymous", std::nullopt, true};
    return ApiCaller{"uid:" + std::to_string(caller->uid), caller->uid, auth_->is_admin(*caller)};
  }
  if (!authorization.empty()) return Error{kAuthInvalid, "Authorization: expected `Bearer <token>` or `MUNGE <credential>`"};
  if (!auth_->enabled()) return ApiCaller{"anonymous", std::nullopt, true};
  return Error{kAuthMissing, "no Authorization header: `Bearer <token>` (api.token_file) or `MUNGE <credential>`"};
}

Result<std::unique_ptr<ApiHttpServer>> ApiHttpServer::start(const ApiHttpOptions& options, Attributor& attributor) {
  auto tokens = load_api_tokens(options.token_file);
  if (!tokens) return tokens.error();
  std::unique_ptr<ApiHttpServer> self(new ApiHttpServer(std::move(*tokens), options.authenticator, attributor));
  ops::HttpServerOptions http;
  http.what = "attribution API";
  http.threads = 4;
  http.timeout = std::chrono::seconds(30);
  http.max_payload = static_cast<size_t>(options.max_request_bytes);
  ApiHttpServer* api = self.get();
  auto server = ops::HttpServer::start(
      common::loopback_default_address(options.listen), http, [api, &options](httplib::Server& server) {
        const int64_t max_bytes = options.max_request_bytes;
        server.Post("/v1/attribute", [api](const httplib::Request& request, httplib::Response& response) {
          auto caller = api->caller_of(request.get_header_value("Authorization"), request.body);
          if (!caller) {
            spdlog::warn("api: POST /v1/attribute from {} rejected: {}", request.remote_addr, caller.error().message);
            api->attributor_.count_unauthenticated("http");
            send_error(response, 401, caller.error().code, caller.error().message);
            response.set_header("WWW-Authenticate", "Bearer");
            return;
          }
          int64_t retry_after = 0;
          auto outcome = api->attributor_.attribute(request.body, *caller, wall_clock_us(), &retry_after);
          api->attributor_.count("http", outcome);
          if (!outcome) {
            send_error(response, http_status(outcome.error()), outcome.error().code, outcome.error().message);
            if (retry_after > 0) response.set_header("Retry-After", std::to_string(retry_after));
            return;
          }
          response.set_header("X-Attrib-Cluster", outcome->key.cluster);
          response.set_header("X-Attrib-Job-Id", outcome->key.job_id);
          response.set_header("X-Attrib-Run", std::to_string(outcome->key.run));
          response.set_header("X-Attrib-Duplicate", outcome->created ? "false" : "true");
          response.status = 200;
          response.set_content(outcome->verdict_json, "application/json");
        });
        // httplib's own refusals (a body over the limit, an unknown path) in the same shape.
        server.set_error_handler([max_bytes](const httplib::Request&, httplib::Response& response) {
          if (!response.body.empty()) return;
          if (response.status == 413)
            send_error(response, 413, kApiTooLarge,
                       "request: over " + std::to_string(max_bytes) + " bytes (api.max_request_bytes)");
          else if (response.status == 404)
            send_error(response, 404, kApiRequest, "no such path: the API is POST /v1/attribute");
          else
            send_error(response, response.status, kApiRequest, "only POST /v1/attribute is served here");
        });
      });
  if (!server) return server.error();
  self->server_ = std::move(*server);
  return self;
}

}  // namespace attrib::api
