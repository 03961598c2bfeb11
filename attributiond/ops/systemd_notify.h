// systemd's service notification protocol (Type=notify): READY=1 once the daemon
// listens, STATUS= lines for `systemctl status`, STOPPING=1 on shutdown, and WATCHDOG=1
// pings while the daemon is healthy. Outside systemd (no NOTIFY_SOCKET) every call is a
// no-op, so the same binary runs from a shell, a test or a container.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace attrib::ops {

class SystemdNotifier {
 public:
  SystemdNotifier() = default;
  ~SystemdNotifier();  // stops the watchdog thread
  SystemdNotifier(const SystemdNotifier&) = delete;
  SystemdNotifier& operator=(const SystemdNotifier&) = delete;

  void ready(const std::string& status);
  void status(const std::string& status);
  // Also stops the watchdog: once it returns, the health check is never called again,
  // so the daemon it checks may be torn down.
  void stopping(const std::string& status);

  // When systemd asked for a watchdog (WATCHDOG_USEC, and WATCHDOG_PID naming this
  // process if set), pings WATCHDOG=1 every half interval for as long as `healthy`
  // answers true. A daemon that stops answering is then restarted by systemd instead of
  // silently not attributing. Returns the ping interval, zero when no watchdog is asked for.
  std::chrono::microseconds start_watchdog(std::function<bool()> healthy);

 private:
  void stop_watchdog();
  void watchdog_loop(std::chrono::microseconds interval, std::function<bool()> healthy);

  std::mutex mutex_;
  std::condition_variable wakeup_;
  bool stopping_ = false;
  std::thread watchdog_;
};

}  // namespace attrib::ops
