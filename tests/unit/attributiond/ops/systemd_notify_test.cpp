// systemd integration: the notify protocol (READY=1, STATUS=, WATCHDOG=1, STOPPING=1)
// of the real attributiond binary in both roles, read from a datagram socket the test
// owns and names in NOTIFY_SOCKET; the watchdog's health gate in-process; and the unit
// files in packaging/systemd checked by `systemd-analyze verify`.
#include "attributiond/ops/systemd_notify.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "tests/support/child_process.h"
#include "tests/support/test_paths.h"
#include "core/whole_file.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// The receiving end of NOTIFY_SOCKET: a bound AF_UNIX datagram socket, closed and
// unlinked on destruction.
class NotifySocket {
 public:
  explicit NotifySocket(fs::path path) : path_(std::move(path)) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    fs::remove(path_);
    bound_ = fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~NotifySocket() {
    if (fd_ >= 0) close(fd_);
    std::error_code ec;
    fs::remove(path_, ec);
  }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  bool bound() const { return bound_; }
  const fs::path& path() const { return path_; }

  // The next message, or nullopt after `timeout` without one.
  std::optional<std::string> receive(std::chrono::milliseconds timeout) {
    timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::array<char, 4096> buffer{};
    ssize_t n = recv(fd_, buffer.data(), buffer.size(), 0);
    if (n < 0) return std::nullopt;
    return std::string(buffer.data(), static_cast<size_t>(n));
  }

 private:
  fs::path path_;
  int fd_ = -1;
  bool bound_ = false;
};

// Sets environment variables for this scope (the child inherits them at fork).
class ScopedEnv {
 public:
  ScopedEnv(std::vector<std::pair<std::string, std::string>> vars) : vars_(std::move(vars)) {
    for (const auto& [name, value] : vars_) setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : vars_) unsetenv(name.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

bool Has(const std::vector<std::string>& messages, const std::string& line) {
  for (const auto& m : messages) {
    std::istringstream lines(m);
    for (std::string l; std::getline(lines, l);)
      if (l == line || (line.back() == '=' && l.rfind(line, 0) == 0)) return true;
  }
  return false;
}

int Count(const std::vector<std::string>& messages, const std::string& exact) {
  int n = 0;
  for (const auto& m : messages) n += m == exact;
  return n;
}

class SystemdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Short: sun_path holds 108 bytes.
    dir_ = fs::path("/tmp") / ("attrib-sd-" + std::to_string(::getpid()) + "-" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "spool");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the real binary under a fake systemd and returns every notify message until it
  // has said READY=1 and pinged twice, then SIGTERMs it and collects STOPPING=1.
  std::vector<std::string> RunUnderNotify(const std::string& role, const std::string& config_yaml, int metrics_port,
                                          std::string* metrics_text) {
    std::ofstream(dir_ / "attrib.yaml") << config_yaml;
    NotifySocket notify(dir_ / "notify.sock");
    EXPECT_TRUE(notify.bound());
    std::vector<std::string> messages;
    std::unique_ptr<attrib::test::ChildProcess> daemon;
    {
      ScopedEnv env({{"NOTIFY_SOCKET", notify.path().string()}, {"WATCHDOG_USEC", "400000"}});
      daemon = std::make_unique<attrib::test::ChildProcess>(
          std::vector<std::string>{ATTRIBUTIOND_BINARY, "--role", role, "--config", (dir_ / "attrib.yaml").string()},
          (dir_ / "daemon.log").string());
    }
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline &&
           !(Has(messages, "READY=1") && Count(messages, "WATCHDOG=1") >= 2)) {
      if (auto m = notify.receive(200ms))
        messages.push_back(*m);
      else if (!daemon->running())
        break;
    }
    EXPECT_TRUE(Has(messages, "READY=1")) << attrib::read_whole_file(dir_ / "daemon.log").value_or("");
    if (metrics_text != nullptr && Has(messages, "READY=1")) {
      // READY=1 promises the endpoints listen: no retry loop here on purpose.
      httplib::Client client("127.0.0.1", metrics_port);
      auto response = client.Get("/metrics");
      EXPECT_TRUE(response) << "metrics endpoint not listening at READY=1";
      if (response) *metrics_text = response->body;
    }
    daemon->stop();  // SIGTERM, waits for the exit
    while (auto m = notify.receive(100ms)) messages.push_back(*m);
    return messages;
  }

  fs::path dir_;
};

}  // namespace

TEST_F(SystemdTest, NodeAgentSaysReadyPingsTheWatchdogAndSaysStopping) {
  int port = attrib::test::free_loopback_port();
  std::string metrics;
  auto messages =
      RunUnderNotify("node",
                     "cluster: lab\nauth:\n  mode: none\nnode:\n  name: n1\n  listen: [\"unix://" +
                         (dir_ / "agent.sock").string() + "\"]\n  metrics_listen: \"127.0.0.1:" + std::to_string(port) +
                         "\"\nrules:\n  pack_dir: " + attrib::test::rules_pack_dir() + "\n",
                     port, &metrics);
  EXPECT_TRUE(Has(messages, "STATUS=")) << "READY=1 carries a STATUS= line";
  EXPECT_GE(Count(messages, "WATCHDOG=1"), 2);
  EXPECT_TRUE(Has(messages, "STOPPING=1"));
  EXPECT_NE(metrics.find("attrib_info{role=\"node\""), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("# TYPE attrib_collect_requests_total counter"), std::string::npos) << metrics;
}

TEST_F(SystemdTest, HeadSaysReadyPingsTheWatchdogAndSaysStopping) {
  int port = attrib::test::free_loopback_port();
  std::string metrics;
  auto messages = RunUnderNotify(
      "head",
      "cluster: lab\nauth:\n  mode: none\nhead:\n  listen: [\"unix://" + (dir_ / "head.sock").string() +
          "\"]\n  database: " + (dir_ / "attrib.db").string() + "\n  spool_dir: " + (dir_ / "spool").string() +
          "\n  metrics_listen: \"127.0.0.1:" + std::to_string(port) +
          "\"\nrules:\n  pack_dir: " + attrib::test::rules_pack_dir() + "\n",
      port, &metrics);
  EXPECT_TRUE(Has(messages, "STATUS="));
  EXPECT_GE(Count(messages, "WATCHDOG=1"), 2);
  EXPECT_TRUE(Has(messages, "STOPPING=1"));
  EXPECT_NE(metrics.find("attrib_info{role=\"head\""), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("attrib_queue_depth 0\n"), std::string::npos) << metrics;
}

TEST_F(SystemdTest, WatchdogIsNotPingedWhileUnhealthyNorWithoutWatchdogUsec) {
  NotifySocket notify(dir_ / "notify.sock");
  ASSERT_TRUE(notify.bound());
  {
    ScopedEnv env({{"NOTIFY_SOCKET", notify.path().string()}, {"WATCHDOG_USEC", "100000"}});
    attrib::ops::SystemdNotifier systemd;
    systemd.ready("up");
    EXPECT_EQ(systemd.start_watchdog([] { return false; }), 50ms);
    std::vector<std::string> messages;
    while (auto m = notify.receive(300ms)) messages.push_back(*m);
    EXPECT_EQ(messages.front(), "READY=1\nSTATUS=up");
    EXPECT_TRUE(Has(messages, "STATUS=health check failing; systemd will restart us"));
    EXPECT_EQ(Count(messages, "WATCHDOG=1"), 0);
  }
  {
    ScopedEnv env({{"NOTIFY_SOCKET", notify.path().string()}});  // no WATCHDOG_USEC: no watchdog asked for
    attrib::ops::SystemdNotifier systemd;
    EXPECT_EQ(systemd.start_watchdog([] { return true; }), 0us);
    systemd.stopping("bye");
    EXPECT_EQ(notify.receive(1000ms), "STOPPING=1\nSTATUS=bye");
  }
  attrib::ops::SystemdNotifier outside_systemd;  // no NOTIFY_SOCKET: every call is a no-op
  outside_systemd.ready("nobody listens");
  EXPECT_FALSE(notify.receive(100ms));
}

// `systemd-analyze verify` checks keys, values and that ExecStart is executable, so the
// units are verified with ExecStart pointing at the binary this build made.
TEST_F(SystemdTest, UnitFilesPassSystemdAnalyzeVerify) {
  std::string analyze;
  for (const char* candidate : {"/usr/bin/systemd-analyze", "/bin/systemd-analyze"})
    if (access(candidate, X_OK) == 0) analyze = candidate;
  if (analyze.empty()) GTEST_SKIP() << "systemd-analyze not installed; unit files not verified";
  fs::path units = fs::path(attrib::test::source_dir()) / "packaging" / "systemd";
  for (const char* unit : {"attributiond-head.service", "attributiond-node.service"}) {
    std::string text = attrib::read_whole_file(units / unit).value_or("");
    ASSERT_NE(text.find("ExecStart=/usr/bin/attributiond --role "), std::string::npos) << unit;
    ASSERT_NE(text.find("Type=notify\n"), std::string::npos) << unit;
    ASSERT_NE(text.find("WatchdogSec="), std::string::npos) << unit;
    for (size_t at = text.find("/usr/bin/attributiond"); at != std::string::npos;
         at = text.find("/usr/bin/attributiond", at + 1))
      text.replace(at, std::string("/usr/bin/attributiond").size(), ATTRIBUTIOND_BINARY);
    std::ofstream(dir_ / unit) << text;
    std::string command =
        analyze + " verify --man=no " + (dir_ / unit).string() + " > " + (dir_ / "verify.log").string() + " 2>&1";
    int rc = std::system(command.c_str());
    std::string output = attrib::read_whole_file(dir_ / "verify.log").value_or("");
    EXPECT_EQ(rc, 0) << unit << ":\n" << output;
    EXPECT_EQ(output, "") << unit << ": warnings (an unknown key is only a warning)";
  }
}
