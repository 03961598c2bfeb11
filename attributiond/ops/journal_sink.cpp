#include "attributiond/ops/journal_sink.h"

#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <systemd/sd-journal.h>

namespace attrib::ops {

int journal_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return LOG_DEBUG;
    case spdlog::level::info:
      return LOG_INFO;
    case spdlog::level::warn:
      return LOG_WARNING;
    case spdlog::level::err:
      return LOG_ERR;
    case spdlog::level::critical:
      return LOG_CRIT;
    default:
      return LOG_INFO;
  }
}

std::vector<std::string> journal_fields(const spdlog::details::log_msg& message, const LogFields& context,
                                        const std::string& identifier) {
  std::vector<std::string> fields;
  fields.push_back("MESSAGE=" + std::string(message.payload.data(), message.payload.size()));
  fields.push_back("PRIORITY=" + std::to_string(journal_priority(message.level)));
  fields.push_back("SYSLOG_IDENTIFIER=" + identifier);
  if (!context.job_id.empty()) fields.push_back("ATTRIB_JOB_ID=" + context.job_id);
  if (!context.node.empty()) fields.push_back("ATTRIB_NODE=" + context.node);
  if (!context.collector.empty()) fields.push_back("ATTRIB_COLLECTOR=" + context.collector);
  if (!message.source.empty()) {
    fields.push_back(std::string("CODE_FILE=") + message.source.filename);
    fields.push_back("CODE_LINE=" + std::to_string(message.source.line));
    if (message.source.funcname != nullptr) fields.push_back(std::string("CODE_FUNC=") + message.source.funcname);
  }
  return fields;
}

bool fd_is_journal_stream(int fd, const char* journal_stream) {
  if (journal_stream == nullptr) return false;
  unsigned long long device = 0, inode = 0;
  if (std::sscanf(journal_stream, "%llu:%llu", &device, &inode) != 2) return false;
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == device && static_cast<unsigned long long>(st.st_ino) == inode;
}

bool stderr_is_journal() { return fd_is_journal_stream(STDERR_FILENO, std::getenv("JOURNAL_STREAM")); }

void JournalSink::sink_it_(const spdlog::details::log_msg& message) {
  std::vector<std::string> fields = journal_fields(message, current_fields(), identifier_);
  std::vector<iovec> vectors;
  vectors.reserve(fields.size());
  for (std::string& field : fields) vectors.push_back({field.data(), field.size()});
  // Values may hold newlines: sd_journal_sendv frames fields by length, not by line.
  sd_journal_sendv(vectors.data(), static_cast<int>(vectors.size()));
}

}  // namespace attrib::ops
