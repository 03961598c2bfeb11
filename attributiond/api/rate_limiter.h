// Requests per caller and minute for the attribution API (api.rate_per_minute): a token
// bucket per caller that holds a minute's worth and refills continuously, so a caller may
// burst up to the limit and then goes at the limit's pace.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "core/types.h"

namespace attrib::api {

class RateLimiter {
 public:
  explicit RateLimiter(int per_minute) : per_minute_(per_minute > 0 ? per_minute : 1) {}
  // Takes one request of `caller` at `now`: 0 when allowed, else the seconds until the
  // next one would be (for Retry-After).
  int64_t take(const std::string& caller, TimeUs now);

 private:
  struct Bucket {
    double tokens = 0;
    TimeUs updated = 0;
  };
  const int per_minute_;
  std::mutex mutex_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace attrib::api
