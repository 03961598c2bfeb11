#include "attributiond/ops/systemd_notify.h"

#include <cstring>

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

namespace attrib::ops {
namespace {

// The environment is kept (unset_environment = 0): the watchdog thread and later
// STATUS= lines need NOTIFY_SOCKET after READY=1 too.
void notify(const std::string& message) {
  int sent = sd_notify(0, message.c_str());
  if (sent < 0) spdlog::debug("sd_notify: {}", std::strerror(-sent));
}

// One line: systemd reads STATUS= up to the newline.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

}  // namespace

SystemdNotifier::~SystemdNotifier() { stop_watchdog(); }

void SystemdNotifier::ready(const std::string& status) { notify("READY=1\nSTATUS=" + one_line(status)); }

void SystemdNotifier::status(const std::string& status) { notify("STATUS=" + one_line(status)); }

void SystemdNotifier::stopping(const std::string& status) {
  notify("STOPPING=1\nSTATUS=" + one_line(status));
  stop_watchdog();  // no pings after STOPPING=1: systemd's stop timeout applies now
}

void SystemdNotifier::stop_watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

std::chrono::microseconds SystemdNotifier::start_watchdog(std::function<bool()> healthy) {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0 || watchdog_.joinable()) return {};
  auto interval = std::chrono::microseconds(usec / 2);
  watchdog_ = std::thread([this, interval, healthy = std::move(healthy)] { watchdog_loop(interval, healthy); });
  return interval;
}

void SystemdNotifier::watchdog_loop(std::chrono::microseconds interval, std::function<bool()> healthy) {
  std::unique_lock lock(mutex_);
  bool was_healthy = true;
  while (!stopping_) {
    lock.unlock();
    bool ok = healthy();
    if (ok) notify("WATCHDOG=1");
    if (ok != was_healthy) {
      // Only on a change: the log says when it went wrong, not once per ping.
      if (ok)
        spdlog::info("watchdog: healthy again");
      else
        spdlog::error("watchdog: health check failed; not pinging systemd");
      notify(std::string("STATUS=") + (ok ? "running" : "health check failing; systemd will restart us"));
      was_healthy = ok;
    }
    lock.lock();
    wakeup_.wait_for(lock, interval, [this] { return stopping_; });
  }
}

}  // namespace attrib::ops
