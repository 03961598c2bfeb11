#include "attributiond/dashboard/dashboard_sessions.h"

#include <sys/random.h>

#include <algorithm>

namespace attrib::dashboard {

Result<std::string> SessionStore::open(const common::Caller& caller, TimeUs now) {
  unsigned char bytes[16];
  if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
    return Error{kDashRandom, "no randomness for a session token"};
  static const char* hex = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += hex[b >> 4];
    token += hex[b & 0xf];
  }
  std::lock_guard lock(mutex_);
  purge(now);
  if (sessions_.size() >= max_) {
    auto oldest = std::min_element(sessions_.begin(), sessions_.end(),
                                   [](const auto& a, const auto& b) { return a.second.expires < b.second.expires; });
    sessions_.erase(oldest);
  }
  sessions_[token] = Session{caller, now + ttl_us_};
  return token;
}

std::optional<common::Caller> SessionStore::find(const std::string& token, TimeUs now) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(token);
  if (it == sessions_.end()) return std::nullopt;
  if (it->second.expires <= now) {
    sessions_.erase(it);
    return std::nullopt;
  }
  return it->second.caller;
}

void SessionStore::close(const std::string& token) {
  std::lock_guard lock(mutex_);
  sessions_.erase(token);
}

size_t SessionStore::size() {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

void SessionStore::purge(TimeUs now) {
  std::erase_if(sessions_, [now](const auto& entry) { return entry.second.expires <= now; });
}

}  // namespace attrib::dashboard
