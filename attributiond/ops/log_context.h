// What a log line is about (job, node, collector), kept per thread so that any log call
// inside an attribution or a Collect carries it without threading it through every
// signature. The journal sink turns it into structured fields (ATTRIB_JOB_ID, ...), so
// `journalctl ATTRIB_JOB_ID=4242` finds every line about job 4242.
#pragma once

#include <string>

namespace attrib::ops {

struct LogFields {
  std::string job_id;
  std::string node;
  std::string collector;
};

// This thread's fields (empty outside any LogScope).
const LogFields& current_fields();

// Sets the given non-empty fields for this thread until destroyed; empty ones keep the
// enclosing scope's value. Scopes nest.
class LogScope {
 public:
  explicit LogScope(std::string job_id, std::string node = {}, std::string collector = {});
  ~LogScope();
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

 private:
  LogFields saved_;
};

}  // namespace attrib::ops
