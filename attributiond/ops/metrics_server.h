// The Prometheus scrape endpoint: GET /metrics on a configured TCP address, answered
// with the registry's text exposition. One per process (head or node agent), on its own
// small thread pool, so a slow scraper never delays gRPC or attribution work.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "core/result.h"
#include "attributiond/ops/metrics_registry.h"

namespace httplib {
class Server;
}

namespace attrib::head {

class MetricsServer {
 public:
  // `address` is host:port ("127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464"); port 0
  // binds a free port (see port()). Serves until destroyed. Error LISTEN_E_BIND or
  // LISTEN_E_ADDRESS.
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& address, const metrics::Registry& registry);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }

 private:
  MetricsServer() = default;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> finished_{false};
  int port_ = 0;
};

// Splits "host:port" / "[v6]:port"; false when it is not one of those.
bool split_host_port(const std::string& address, std::string& host, int& port);

}  // namespace attrib::head
