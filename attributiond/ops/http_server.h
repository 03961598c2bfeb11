// The daemon's small HTTP servers (the Prometheus endpoint, the web dashboard) start and
// stop the same way: cpp-httplib on its own small thread pool, bound before it returns so
// a port conflict is an error at start, stopped and joined when destroyed.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/result.h"

namespace httplib {
class Server;
struct Response;
}

namespace attrib::ops {

struct HttpServerOptions {
  std::string what;                 // named in errors, e.g. "metrics"
  int threads = 2;                  // the pool bounds what a burst of requests can cost
  std::chrono::seconds timeout{5};  // read and write timeouts
  size_t max_payload = 64 * 1024;   // largest request body accepted
};

class HttpServer {
 public:
  // address: "host:port" or "[v6]:port"; port 0 binds a free port (see port()). `routes`
  // adds the handlers before the first request can arrive. Errors LISTEN_E_ADDRESS,
  // LISTEN_E_BIND.
  static Result<std::unique_ptr<HttpServer>> start(const std::string& address, const HttpServerOptions& options,
                                                   const std::function<void(httplib::Server&)>& routes);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }

 private:
  HttpServer();
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> finished_{false};
  int port_ = 0;
};

// The daemon's HTTP error answer (the dashboard's and the attribution API's):
// {"error": code, "message": message} as application/json with `status`.
void send_error(httplib::Response& response, int status, const std::string& code, const std::string& message);

// Splits "host:port" / "[v6]:port"; false when it is not one of those.
bool split_host_port(const std::string& address, std::string& host, int& port);

}  // namespace attrib::ops
