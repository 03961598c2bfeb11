// The attribution API over HTTP (docs/api.md): POST /v1/attribute on api.listen, the body
// attrib.attribute_request.v1, the answer verdict v1. Served by the head daemon.
//
// Authentication (Authorization header):
//   Bearer <token>      a service caller of api.token_file: its trust assertions count
//   MUNGE <credential>  a credential over http_attribute_payload(body) (common/auth.h):
//                       an admin's trust assertions count, anyone else's lines are untrusted
// With auth.mode none and no header, the caller is anonymous and trusted (development).
// Answers: 200 verdict v1 (X-Attrib-Cluster, X-Attrib-Job-Id, X-Attrib-Run,
// X-Attrib-Duplicate); errors {"error": CODE, "message": ...}: 400 invalid, 401 not
// authenticated, 413 too large, 429 rate (Retry-After), 503/500 the archive failed.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "attributiond/api/attributor.h"
#include "attributiond/ops/http_server.h"
#include "common/auth.h"
#include "core/result.h"

namespace attrib::api {

struct ApiHttpOptions {
  std::string listen;      // api.listen (a bare port: 127.0.0.1)
  std::string token_file;  // api.token_file; empty: no tokens
  int64_t max_request_bytes = 16 * 1024 * 1024;
  std::shared_ptr<const common::Authenticator> authenticator;
};

// api.token_file: "<name> <token>" per line, `#` comments; token -> name. Errors
// API_E_REQUEST naming file:line (a line that is not two words, a token given twice), and
// when the file is readable by anyone but its owner.
Result<std::map<std::string, std::string>> load_api_tokens(const std::string& path);

class ApiHttpServer {
 public:
  // Errors: load_api_tokens's, LISTEN_E_ADDRESS, LISTEN_E_BIND.
  static Result<std::unique_ptr<ApiHttpServer>> start(const ApiHttpOptions& options, Attributor& attributor);
  int port() const { return server_->port(); }

 private:
  ApiHttpServer(std::map<std::string, std::string> tokens, std::shared_ptr<const common::Authenticator> auth,
                Attributor& attributor)
      : tokens_(std::move(tokens)), auth_(std::move(auth)), attributor_(attributor) {}
  // The caller the Authorization header names; errors AUTH_E_*.
  Result<ApiCaller> caller_of(const std::string& authorization, std::string_view body) const;

  std::map<std::string, std::string> tokens_;
  std::shared_ptr<const common::Authenticator> auth_;
  Attributor& attributor_;
  std::unique_ptr<ops::HttpServer> server_;  // last: stopped first
};

}  // namespace attrib::api
