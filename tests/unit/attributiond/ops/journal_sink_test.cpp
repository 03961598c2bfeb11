// The journal sink: spdlog levels to syslog priorities, the structured ATTRIB_* fields
// from the thread's LogScope, and JOURNAL_STREAM matching only the file it names.
#include "attributiond/ops/journal_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "attributiond/ops/log_context.h"

using namespace attrib;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> Fields(spdlog::level::level_enum level, const std::string& text,
                                spdlog::source_loc where = {}) {
  spdlog::details::log_msg message(where, "attributiond", level, text);
  return ops::journal_fields(message, ops::current_fields(), "attributiond");
}

bool Has(const std::vector<std::string>& fields, const std::string& field) {
  return std::find(fields.begin(), fields.end(), field) != fields.end();
}

bool HasName(const std::vector<std::string>& fields, const std::string& name) {
  return std::any_of(fields.begin(), fields.end(), [&](const auto& f) { return f.rfind(name + "=", 0) == 0; });
}

}  // namespace

TEST(JournalSink, LevelsBecomeSyslogPriorities) {
  EXPECT_EQ(ops::journal_priority(spdlog::level::critical), LOG_CRIT);
  EXPECT_EQ(ops::journal_priority(spdlog::level::err), LOG_ERR);
  EXPECT_EQ(ops::journal_priority(spdlog::level::warn), LOG_WARNING);
  EXPECT_EQ(ops::journal_priority(spdlog::level::info), LOG_INFO);
  EXPECT_EQ(ops::journal_priority(spdlog::level::debug), LOG_DEBUG);
  EXPECT_EQ(ops::journal_priority(spdlog::level::trace), LOG_DEBUG);
}

TEST(JournalSink, MessageWithoutContextHasOnlyTheBasicFields) {
  auto fields = Fields(spdlog::level::err, "queue: disk I/O error");
  EXPECT_TRUE(Has(fields, "MESSAGE=queue: disk I/O error"));
  EXPECT_TRUE(Has(fields, "PRIORITY=3"));
  EXPECT_TRUE(Has(fields, "SYSLOG_IDENTIFIER=attributiond"));
  EXPECT_FALSE(HasName(fields, "ATTRIB_JOB_ID"));
  EXPECT_FALSE(HasName(fields, "ATTRIB_NODE"));
  EXPECT_FALSE(HasName(fields, "ATTRIB_COLLECTOR"));
  EXPECT_FALSE(HasName(fields, "CODE_FILE"));
}

TEST(JournalSink, ScopesAddJobNodeAndCollectorAndNestAndRestore) {
  {
    ops::LogScope job("4242");
    EXPECT_TRUE(Has(Fields(spdlog::level::info, "x"), "ATTRIB_JOB_ID=4242"));
    {
      ops::LogScope collect("", "n3", "journald");  // empty job id: keeps the outer one
      auto fields = Fields(spdlog::level::warn, "x");
      EXPECT_TRUE(Has(fields, "ATTRIB_JOB_ID=4242"));
      EXPECT_TRUE(Has(fields, "ATTRIB_NODE=n3"));
      EXPECT_TRUE(Has(fields, "ATTRIB_COLLECTOR=journald"));
      EXPECT_TRUE(Has(fields, "PRIORITY=4"));
    }
    auto after = Fields(spdlog::level::info, "x");
    EXPECT_TRUE(Has(after, "ATTRIB_JOB_ID=4242"));
    EXPECT_FALSE(HasName(after, "ATTRIB_NODE"));
    // Another thread has its own (empty) context.
    std::thread([] { EXPECT_FALSE(HasName(Fields(spdlog::level::info, "x"), "ATTRIB_JOB_ID")); }).join();
  }
  EXPECT_FALSE(HasName(Fields(spdlog::level::info, "x"), "ATTRIB_JOB_ID"));
}

TEST(JournalSink, MultiLineMessagesStayOneFieldAndSourceLocationIsKept) {
  auto fields = Fields(spdlog::level::info, "line one\nline two", spdlog::source_loc{"head_daemon.cpp", 42, "start"});
  EXPECT_TRUE(Has(fields, "MESSAGE=line one\nline two"));
  EXPECT_TRUE(Has(fields, "CODE_FILE=head_daemon.cpp"));
  EXPECT_TRUE(Has(fields, "CODE_LINE=42"));
  EXPECT_TRUE(Has(fields, "CODE_FUNC=start"));
}

TEST(JournalSink, JournalStreamMatchesOnlyTheFileItNames) {
  fs::path file = fs::temp_directory_path() / ("attrib-journal-stream-" + std::to_string(getpid()));
  std::ofstream(file) << "";
  int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  struct stat st {};
  ASSERT_EQ(fstat(fd, &st), 0);
  std::string named = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  EXPECT_TRUE(ops::fd_is_journal_stream(fd, named.c_str()));
  EXPECT_FALSE(
      ops::fd_is_journal_stream(fd, (std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + 1)).c_str()));
  EXPECT_FALSE(ops::fd_is_journal_stream(fd, nullptr));
  EXPECT_FALSE(ops::fd_is_journal_stream(fd, "garbage"));
  EXPECT_FALSE(ops::fd_is_journal_stream(-1, named.c_str()));
  close(fd);
  fs::remove(file);
}
