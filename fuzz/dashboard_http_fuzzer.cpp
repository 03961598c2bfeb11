// The dashboard's HTTP request path: raw bytes sent over loopback to a real DashboardServer
// (attributiond/dashboard/, started through attributiond/ops/http_server), i.e. cpp-httplib's
// request parsing (Debian's shared library: not instrumented, so not coverage-guided, but
// any memory error in it still crashes here), the routes, the cookie and query parameters,
// the filters and the archive queries. auth.mode none: every route is open (as admin), so
// no munged is needed. The archive holds two jobs made by the real rules engine.
//
// Input: whatever a client sends on one connection (one or more requests); the connection
// is then half-closed and the answer read to the end. Properties: a handler never throws
// (cpp-httplib would turn that into a 500 with an EXCEPTION_WHAT header) and no request
// gets a 5xx. A connection left without an answer for 8 s is reported on stderr but is
// not a finding: under fuzzing's thousands of connections a second, a few such stalls
// were seen in which the server's accept thread and all its workers sat idle (gdb), so
// the connection never reached it, and no single input reproduces one; a larger listen
// backlog did not remove them. They fit the client reusing a loopback port whose server
// side is still in TIME_WAIT, its SYN waiting out retransmission (docs/security.md,
// "Fuzzing record"). Running out of local ports altogether is not a finding either.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "attributiond/dashboard/dashboard_server.h"
#include "attributiond/store/job_store.h"
#include "common/auth.h"
#include "core/clock.h"
#include "fuzz/fuzz_support.h"
#include "rules/evidence/bundle_export.h"

namespace attrib::fuzz {
namespace {

// Two archived jobs: an Xid 79 on gpu017 (three real kernel lines of
// tests/fixtures/xid79_nccl_timeouts/gpu017), one of them user 2001's, one user 2002's.
void write_archive(const std::string& database) {
  auto store = store::JobStore::open(database);
  require(store.ok(), "the archive does not open");
  const TimeUs now = wall_clock_us();
  const char* const kLines[] = {
      "NVRM: GPU at PCI:0000:3b:00: GPU-660d987e-5b28-3bf6-2a2d-1d5ecae7f6df",
      "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
  };
  for (int i = 0; i < 2; ++i) {
    const std::string job_id = std::to_string(5001 + i);
    rules::Extractor extractor(shipped_pack());
    for (uint64_t k = 0; k < 2; ++k)
      extractor.feed(LogLine{"gpu017", "kernel", now - 3600000000LL + static_cast<TimeUs>(k), k, true, kLines[k]});
    JobFacts facts;
    facts.job_id = job_id;
    facts.cluster = "lab";
    facts.state = "FAILED";
    facts.exit_code = 1;
    facts.start = now - 7200000000LL;
    facts.end = now - 3000000000LL;
    facts.nodes = {"gpu001", "gpu017"};
    Verdict verdict = rules::correlate(*shipped_pack(), facts, extractor.finish(), {});
    v1::JobEnded request;
    request.set_job_id(job_id);
    request.set_cluster("lab");
    request.set_node_list("gpu[001,017]");
    request.set_state("FAILED");
    request.set_exit_code(1);
    request.set_user(i == 0 ? "alice" : "bob");
    request.set_uid(2001 + i);
    request.set_end_time_us(*facts.end);
    request.set_hook_time_us(*facts.end);
    const store::JobKey key{"lab", job_id};
    require((*store)->enqueue(request, "lab", *facts.end).ok(), "enqueue into the archive failed");
    require((*store)->archive(key, verdict, rules::events_of_verdict(verdict), now).ok(), "archive failed");
    require((*store)->mark_done(key, now).ok(), "mark_done failed");
  }
}

// What one connection got. Neither no_local_port nor no_answer is a finding (see the top).
struct Exchange {
  enum class Outcome { answered, no_local_port, no_answer } outcome = Outcome::answered;
  std::string response;
};

// Waits until fd is ready for events, for at most 8 s in all. libFuzzer's timeout timer
// interrupts system calls (its SIGALRM handler has no SA_RESTART): EINTR is waited out.
bool wait_ready(int fd, short events) {
  const TimeUs deadline = wall_clock_us() + 8000000;
  while (true) {
    const TimeUs left = deadline - wall_clock_us();
    if (left <= 0) return false;
    pollfd ready{fd, events, 0};
    const int n = poll(&ready, 1, static_cast<int>(left / 1000) + 1);
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

Exchange exchange(int port, std::string_view request) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  require(fd >= 0, "socket failed");
  // connect() picks the port: Linux reuses a loopback TIME_WAIT port for it
  // (net.ipv4.tcp_tw_reuse, 2 by default), which an explicit bind() never does.
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int error = 0;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    error = errno;
    // Interrupted while its SYN waits out a retransmission: the connection goes on
    // being made; its result comes when the socket turns writable.
    if (error == EINTR) {
      socklen_t length = sizeof error;
      if (!wait_ready(fd, POLLOUT)) {
        close(fd);
        return {Exchange::Outcome::no_answer, {}};
      }
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
    }
  }
  if (error != 0) {
    close(fd);
    // Thousands of loopback connections a second run out of local ports (TIME_WAIT): a
    // limit of this harness, not of the server. Any other failure (refused: the server
    // stopped) is a finding.
    if (error == EADDRNOTAVAIL) return {Exchange::Outcome::no_local_port, {}};
    broken(std::string("connect failed: ") + std::strerror(error));
  }
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server answered early (413, 400) and closed
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  Exchange result;
  char buffer[16384];
  while (true) {
    if (!wait_ready(fd, POLLIN)) {
      close(fd);
      return {Exchange::Outcome::no_answer, {}};
    }
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.response.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return result;
}

}  // namespace

int dashboard_http(const uint8_t* data, size_t size) {
  static const int port = [] {
    quiet_logs();
    static ScratchDir dir("dashboard");  // removed at exit, not left in /tmp
    const std::string database = (dir.path() / "attrib.db").string();
    write_archive(database);
    dashboard::DashboardOptions options;
    options.listen = "127.0.0.1:0";
    options.database = database;
    options.authenticator = common::Authenticator::none();
    auto server = dashboard::DashboardServer::start(options);
    require(server.ok(), "the dashboard does not start");
    return server->release()->port();  // serves until the process exits
  }();
  const Exchange answered = exchange(port, as_text(data, size));
  if (answered.outcome == Exchange::Outcome::no_local_port) {
    std::fprintf(stderr, "attrib fuzz: no local port free for a connection (not a finding: see exchange)\n");
    return 0;
  }
  if (answered.outcome == Exchange::Outcome::no_answer) {
    std::fprintf(stderr, "attrib fuzz: a connection got no answer within 8 s (not a finding: see the top)\n");
    return 0;
  }
  const std::string& response = answered.response;
  // Each response: status line, headers, Content-Length bytes of body. Stops quietly at
  // anything else (a HEAD answer has no body).
  size_t at = 0;
  while (at < response.size() && response.compare(at, 9, "HTTP/1.1 ") == 0) {
    const size_t headers_end = response.find("\r\n\r\n", at);
    if (headers_end == std::string::npos) break;
    const std::string head = response.substr(at, headers_end - at);
    if (head.compare(9, 1, "5") == 0) broken("the dashboard answered " + head.substr(0, head.find('\r')));
    if (head.find("\r\nEXCEPTION_WHAT:") != std::string::npos) broken("a dashboard handler threw: " + head);
    const size_t length_at = head.find("\r\nContent-Length: ");
    if (length_at == std::string::npos) break;
    at = headers_end + 4 + std::strtoull(head.c_str() + length_at + 18, nullptr, 10);
  }
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(dashboard_http)
