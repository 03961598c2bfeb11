#include "attributiond/api/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace attrib::api {

int64_t RateLimiter::take(const std::string& caller, TimeUs now) {
  constexpr double kMinuteUs = 60e6;
  std::lock_guard lock(mutex_);
  // Full buckets say nothing: drop them, so callers that came once do not pile up.
  if (buckets_.size() > 4096)
    std::erase_if(buckets_, [&](const auto& entry) {
      return (now - entry.second.updated) * per_minute_ / kMinuteUs + entry.second.tokens >= per_minute_;
    });
  auto [it, fresh] = buckets_.try_emplace(caller, Bucket{static_cast<double>(per_minute_), now});
  Bucket& bucket = it->second;
  if (!fresh && now > bucket.updated)
    bucket.tokens = std::min<double>(per_minute_, bucket.tokens + (now - bucket.updated) * per_minute_ / kMinuteUs);
  bucket.updated = std::max(bucket.updated, now);
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return 0;
  }
  return static_cast<int64_t>(std::ceil((1 - bucket.tokens) * 60.0 / per_minute_));
}

}  // namespace attrib::api
