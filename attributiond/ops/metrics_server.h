// The Prometheus scrape endpoint: GET /metrics on a configured TCP address, answered with
// the registry's text exposition. One per process (head or node agent), on its own small
// thread pool, so a slow scraper never delays gRPC or attribution work.
#pragma once

#include <memory>
#include <string>

#include "attributiond/ops/http_server.h"
#include "attributiond/ops/metrics_registry.h"
#include "core/result.h"

namespace attrib::ops {

// `address` is host:port ("127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464"); port 0 binds a
// free port. Serves until the returned server is destroyed; registry must outlive it.
Result<std::unique_ptr<HttpServer>> serve_metrics(const std::string& address, const MetricsRegistry& registry);

}  // namespace attrib::ops
