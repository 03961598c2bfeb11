// An spdlog sink that writes to the systemd journal with structured fields: PRIORITY
// from the log level, SYSLOG_IDENTIFIER, and ATTRIB_JOB_ID / ATTRIB_NODE /
// ATTRIB_COLLECTOR from the thread's LogScope. Used only when stderr already goes to the
// journal (systemd's JOURNAL_STREAM names it), so a daemon run from a shell keeps its
// plain stderr lines.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include <spdlog/sinks/base_sink.h>

#include "attributiond/ops/log_context.h"

namespace attrib::ops {

// The journal fields ("NAME=value") for one message; pure, for tests.
std::vector<std::string> journal_fields(const spdlog::details::log_msg& message, const LogFields& context,
                                        const std::string& identifier);

// syslog(3) priority of an spdlog level (journald's PRIORITY field).
int journal_priority(spdlog::level::level_enum level);

// True when JOURNAL_STREAM ("<device>:<inode>", set by systemd for StandardError=journal)
// names the file open on `fd`. A child that inherits the variable but has its stderr
// redirected elsewhere does not match.
bool fd_is_journal_stream(int fd, const char* journal_stream);
bool stderr_is_journal();

class JournalSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit JournalSink(std::string identifier) : identifier_(std::move(identifier)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override;
  void flush_() override {}

 private:
  std::string identifier_;
};

}  // namespace attrib::ops
