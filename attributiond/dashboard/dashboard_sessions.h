// The dashboard's browser sessions: a random 128-bit token (the HttpOnly cookie) mapped
// to the uid MUNGE vouched for at login, in memory only. A restart logs everyone out,
// which costs one `attrib-show --dashboard`; nothing secret ever reaches the disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/auth.h"
#include "core/result.h"
#include "core/types.h"

namespace attrib::dashboard {

class SessionStore {
 public:
  // ttl_s: a session's lifetime from login. max_sessions bounds memory against a flood
  // of logins; the oldest session is dropped to make room.
  explicit SessionStore(int64_t ttl_s, size_t max_sessions = 10000) : ttl_us_(ttl_s * 1000000), max_(max_sessions) {}

  // A new session for caller; its token (32 hex digits). Error when the kernel gives no
  // randomness.
  Result<std::string> open(const common::Caller& caller, TimeUs now);
  // The caller of a live session; nullopt for unknown or expired tokens.
  std::optional<common::Caller> find(const std::string& token, TimeUs now);
  void close(const std::string& token);
  size_t size();

 private:
  struct Session {
    common::Caller caller;
    TimeUs expires = 0;
  };
  void purge(TimeUs now);  // caller holds mutex_

  int64_t ttl_us_;
  size_t max_;
  std::mutex mutex_;
  std::map<std::string, Session> sessions_;
};

}  // namespace attrib::dashboard
