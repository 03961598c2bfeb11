#include "attributiond/ops/metrics_server.h"

#include <sys/socket.h>

#include <chrono>

#include <httplib.h>

namespace attrib::head {

bool split_host_port(const std::string& address, std::string& host, int& port) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) return false;
  host = address.substr(0, colon);
  if (host.front() == '[') {
    if (host.back() != ']') return false;
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return false;  // an IPv6 literal needs brackets, or the port is ambiguous
  }
  std::string digits = address.substr(colon + 1);
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  port = std::stoi(digits);
  return !host.empty() && port <= 65535;
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& address,
                                                            const metrics::Registry& registry) {
  std::string host;
  int port = 0;
  if (!split_host_port(address, host, port))
    return Error{"LISTEN_E_ADDRESS", "metrics address '" + address + "' is not host:port"};
  std::unique_ptr<MetricsServer> out(new MetricsServer());
  out->server_ = std::make_unique<httplib::Server>();
  auto& server = *out->server_;
  // Scrapes are rare and cheap: two threads are plenty, and bound the cost of a storm.
  server.new_task_queue = [] { return new httplib::ThreadPool(2); };
  server.set_read_timeout(std::chrono::seconds(5));
  server.set_write_timeout(std::chrono::seconds(5));
  server.set_payload_max_length(64 * 1024);
  // httplib's default also sets SO_REUSEPORT, which lets a second daemon bind the same
  // port and silently take half the scrapes. SO_REUSEADDR alone still allows a restart
  // while old connections linger in TIME_WAIT.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server.Get("/metrics", [&registry](const httplib::Request&, httplib::Response& response) {
    response.set_content(registry.render(), metrics::kContentType);
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("attributiond: metrics at /metrics\n", "text/plain");
  });
  if (port == 0) {
    out->port_ = server.bind_to_any_port(host);
    if (out->port_ <= 0) return Error{"LISTEN_E_BIND", "cannot listen on " + address + " (metrics)"};
  } else {
    if (!server.bind_to_port(host, port)) return Error{"LISTEN_E_BIND", "cannot listen on " + address + " (metrics)"};
    out->port_ = port;
  }
  MetricsServer* self = out.get();
  out->thread_ = std::thread([self] {
    self->server_->listen_after_bind();
    self->finished_ = true;
  });
  // httplib's stop() is a no-op until the accept loop runs: wait for it, so the
  // destructor can always stop the thread it joins.
  while (!server.is_running() && !out->finished_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return out;
}

MetricsServer::~MetricsServer() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace attrib::head
