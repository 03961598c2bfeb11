#include "attributiond/ops/metrics_server.h"

#include <httplib.h>

namespace attrib::ops {

Result<std::unique_ptr<HttpServer>> serve_metrics(const std::string& address, const MetricsRegistry& registry) {
  // Scrapes are rare and cheap: two threads are plenty, and bound the cost of a storm.
  HttpServerOptions options{
      .what = "metrics", .threads = 2, .timeout = std::chrono::seconds(5), .max_payload = 64 * 1024};
  return HttpServer::start(address, options, [&registry](httplib::Server& server) {
    server.Get("/metrics", [&registry](const httplib::Request&, httplib::Response& response) {
      response.set_content(registry.render(), kMetricsContentType);
    });
    server.Get("/", [](const httplib::Request&, httplib::Response& response) {
      response.set_content("attributiond: metrics at /metrics\n", "text/plain");
    });
  });
}

}  // namespace attrib::ops
