#include "attributiond/ops/http_server.h"

#include <sys/socket.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "core/json_text.h"

namespace attrib::ops {

void send_error(httplib::Response& response, int status, const std::string& code, const std::string& message) {
  response.status = status;
  response.set_content(json_text(nlohmann::json{{"error", code}, {"message", message}}), "application/json");
}

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

HttpServer::HttpServer() : server_(std::make_unique<httplib::Server>()) {}

Result<std::unique_ptr<HttpServer>> HttpServer::start(const std::string& address, const HttpServerOptions& options,
                                                      const std::function<void(httplib::Server&)>& routes) {
  std::string host;
  int port = 0;
  if (!split_host_port(address, host, port))
    return Error{kListenAddress, options.what + " address '" + address + "' is not host:port"};
  std::unique_ptr<HttpServer> out(new HttpServer());
  auto& server = *out->server_;
  const int threads = options.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  server.set_read_timeout(options.timeout);
  server.set_write_timeout(options.timeout);
  server.set_payload_max_length(options.max_payload);
  // httplib's default also sets SO_REUSEPORT, which lets a second daemon bind the same
  // port and silently take half the requests. SO_REUSEADDR alone still allows a restart
  // while old connections linger in TIME_WAIT.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  routes(server);
  if (port == 0) {
    out->port_ = server.bind_to_any_port(host);
    if (out->port_ <= 0) return Error{kListenBind, "cannot listen on " + address + " (" + options.what + ")"};
  } else {
    if (!server.bind_to_port(host, port))
      return Error{kListenBind, "cannot listen on " + address + " (" + options.what + ")"};
    out->port_ = port;
  }
  HttpServer* self = out.get();
  out->thread_ = std::thread([self] {
    self->server_->listen_after_bind();
    self->finished_ = true;
  });
  // httplib's stop() is a no-op until the accept loop runs: wait for it, so the
  // destructor can always stop the thread it joins.
  while (!server.is_running() && !out->finished_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return out;
}

HttpServer::~HttpServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace attrib::ops
