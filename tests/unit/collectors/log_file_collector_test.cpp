// The log-file collectors (syslog_file, slurm_log) over real files: logrotate's plain,
// numbered, gzipped and dateext generations, rsyslog's traditional lines and its "#ooo"
// escapes, Slurm's LogFile lines. Every log line below is verbatim from a public thread:
//   rsyslog kernel lines, https://github.com/NVIDIA/gpu-operator/issues/1146 (worker4)
//   rsyslog "#012" escapes, https://github.com/InterNetNews/inn/issues/373 (archive)
//   slurmd.log, https://github.com/ai4d-iasc/trixie/issues/45 (cn106)
#include "collectors/log_file_collector.h"

#include <sys/stat.h>
#include <utime.h>
#include <zlib.h>

#include <string>

#include <gtest/gtest.h>

#include "collectors/registry.h"
#include "collectors/rotated_files.h"
#include "core/calendar.h"
#include "tests/support/file_fixtures.h"

namespace attrib::collectors {
namespace {

using testing::collect_all;
using testing::ScratchDir;
using testing::status_of;
using testing::write_file;

constexpr TimeUs kSecond = 1'000'000;

TimeUs utc(int year, int month, int day, int hour, int minute, int second) {
  return *civil_to_utc(CivilTime{year, month, day, hour, minute, second, 0}, 0);
}

void set_modified(const std::string& path, TimeUs when) {
  struct utimbuf times {};
  times.actime = times.modtime = static_cast<time_t>(when / kSecond);
  ASSERT_EQ(::utime(path.c_str(), &times), 0) << path;
}

void write_gzip(const std::string& path, const std::string& text) {
  gzFile out = gzopen(path.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(out);
}

CollectRequest request_for(const std::string& node, TimeUs start, TimeUs end) {
  CollectRequest request;
  request.job_id = "4242";
  request.node = node;
  request.window_start = start;
  request.window_end = end;
  return request;
}

std::unique_ptr<Collector> make(const std::string& kind, const std::string& yaml) {
  auto collector = create_collector(kind, YAML::Load(yaml));
  EXPECT_TRUE(collector.ok()) << collector.error().message;
  return collector ? std::move(*collector) : nullptr;
}

// gpu-operator#1146, worker4's /var/log/messages, split over three generations.
const std::string kOldest =
    "Dec  2 11:38:27 worker4 kernel: [  199.234935] NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor "
    "number 5\n";
const std::string kRotated =
    "Dec  2 11:38:46 worker4 kernel: [  218.250408] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)\n"
    "Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, "
    "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 "
    "partition 7, subpartition 1.\n";
const std::string kLive =
    "Dec  2 11:38:47 worker4 kernel: [  219.471050] NVRM: Xid (PCI:0000:07:00): 64, pid='<unknown>', name=<unknown>, "
    "Dynamic Page Retirement: Blacklisting failed.  Page should have been blacklisted on boot(0x00000000007fffa8).\n"
    "Dec  2 11:49:53 worker4 kernel: [  885.242168] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)\n";

TEST(SyslogFileCollector, ReadsGenerationsOldestFirstWithKernelLinesAsKernel) {
  ScratchDir dir;
  const TimeUs written = utc(2024, 12, 2, 12, 0, 0);
  write_gzip(dir.file("messages.2.gz"), kOldest);
  write_file(dir.file("messages.1"), kRotated);
  write_file(dir.file("messages"), kLive);
  write_file(dir.file("messages.1.tmp"), kLive);  // no generation: not read
  set_modified(dir.file("messages.2.gz"), written - 3 * 60 * kSecond);
  set_modified(dir.file("messages.1"), written - 2 * 60 * kSecond);
  set_modified(dir.file("messages"), written);
  auto collector = make("syslog_file", "path: " + dir.file("messages"));
  ASSERT_TRUE(collector);
  auto got = collect_all(*collector, request_for("worker4", utc(2024, 12, 2, 11, 30, 0), utc(2024, 12, 2, 11, 45, 0)));

  ASSERT_EQ(got.lines.size(), 4u);  // 11:49:53 is after the window
  EXPECT_EQ(got.lines[0].text, "NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 5");
  EXPECT_EQ(got.lines[0].time, utc(2024, 12, 2, 11, 38, 27));  // the year from the file's time
  EXPECT_EQ(got.lines[2].text.rfind("NVRM: Xid (PCI:0000:07:00): 48, ", 0), 0u) << got.lines[2].text;
  for (size_t i = 0; i < got.lines.size(); ++i) {
    EXPECT_EQ(got.lines[i].source, "kernel");
    EXPECT_EQ(got.lines[i].seq, i);
    // rsyslog's file shows no writer: any user's `logger -t kernel` looks the same.
    EXPECT_FALSE(got.lines[i].trusted);
  }
  ASSERT_EQ(got.coverage.size(), 2u);
  EXPECT_EQ(got.coverage[0].source, "syslog");
  EXPECT_EQ(status_of(got.coverage[0]), "empty");
  EXPECT_EQ(got.coverage[1].source, "kernel");
  EXPECT_EQ(status_of(got.coverage[1]), "ok");
  EXPECT_EQ(got.coverage[1].lines, 4u);
}

TEST(SyslogFileCollector, SkipsGenerationsBeforeTheWindowAndSaysWhenRotationsCutItShort) {
  ScratchDir dir;
  const TimeUs written = utc(2024, 12, 2, 12, 0, 0);
  write_file(dir.file("syslog-20241201"), kOldest);  // dateext, written a day earlier: not read
  write_gzip(dir.file("syslog.2.gz"), kOldest);
  write_file(dir.file("syslog.1"), kRotated);
  write_file(dir.file("syslog"), kLive);
  set_modified(dir.file("syslog-20241201"), written - 86400 * kSecond);
  set_modified(dir.file("syslog.2.gz"), written - 3 * 60 * kSecond);
  set_modified(dir.file("syslog.1"), written - 2 * 60 * kSecond);
  set_modified(dir.file("syslog"), written);
  bool capped = false;
  auto generations = log_generations(dir.file("syslog"), 4, &capped);
  ASSERT_EQ(generations.size(), 4u);
  EXPECT_EQ(generations.front().path, dir.file("syslog-20241201"));
  EXPECT_TRUE(generations[1].gzip);
  EXPECT_FALSE(capped);

  auto one = make("syslog_file", "{path: " + dir.file("syslog") + ", rotations: 1}");
  ASSERT_TRUE(one);
  auto got = collect_all(*one, request_for("worker4", utc(2024, 12, 2, 11, 30, 0), utc(2024, 12, 2, 11, 45, 0)));
  EXPECT_EQ(got.lines.size(), 3u);  // syslog.2.gz is past rotations: 1
  EXPECT_EQ(status_of(got.coverage[1]), "partial");
  EXPECT_NE(got.coverage[1].detail.find("older ones are past `rotations`"), std::string::npos) << got.coverage[1].detail;
}

TEST(SyslogFileCollector, UndoesRsyslogEscapesAndKeepsOnlyTheNodesLines) {
  ScratchDir dir;
  // InterNetNews/inn#373: rsyslog's "#012" is the message's own trailing newline.
  write_file(dir.file("messages"),
             "Jul  5 18:20:49 archive controlchan[2306]: [ID 702911 news.notice] starting#012\n"
             "Jul 12 17:48:32 archive pgpverify[3297]: [ID 702911 news.error] pgpverify: verification failed#012\n"
             "Dec  2 11:38:27 worker4 kernel: [  199.234935] NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device "
             "minor number 5\n");
  set_modified(dir.file("messages"), utc(2024, 12, 2, 12, 0, 0));
  auto collector = make("syslog_file", "path: " + dir.file("messages"));
  ASSERT_TRUE(collector);
  auto got = collect_all(*collector, request_for("archive", utc(2024, 7, 1, 0, 0, 0), utc(2024, 12, 31, 0, 0, 0)));
  ASSERT_EQ(got.lines.size(), 2u);
  EXPECT_EQ(got.lines[0].source, "syslog");
  EXPECT_EQ(got.lines[0].text, "[ID 702911 news.notice] starting\n");
  EXPECT_EQ(got.lines[1].text, "[ID 702911 news.error] pgpverify: verification failed\n");
  EXPECT_NE(got.coverage[1].detail.find("1 lines of other hosts in the window skipped"), std::string::npos)
      << got.coverage[1].detail;

  EXPECT_EQ(unescape_rsyslog("a#011b#012"), "a\tb\n");
  EXPECT_EQ(unescape_rsyslog("#040 is a space, not a control"), "#040 is a space, not a control");
  EXPECT_EQ(unescape_rsyslog("issue #01"), "issue #01");
  EXPECT_EQ(unescape_rsyslog("#177"), "\x7f");
}

TEST(SyslogFileCollector, TrustsAFileOnlyWhenVouchedForAndWrittenByTheSystem) {
  ScratchDir dir;
  write_file(dir.file("kern.log"), kLive);
  set_modified(dir.file("kern.log"), utc(2024, 12, 2, 12, 0, 0));
  const CollectRequest request = request_for("worker4", utc(2024, 12, 2, 11, 0, 0), utc(2024, 12, 2, 12, 0, 0));
  ::chmod(dir.file("kern.log").c_str(), 0640);
  auto vouched = make("syslog_file", "{path: " + dir.file("kern.log") + ", trust: file}");
  ASSERT_TRUE(vouched);
  auto got = collect_all(*vouched, request);
  ASSERT_EQ(got.lines.size(), 2u);
  EXPECT_EQ(got.lines[0].trusted, ::geteuid() == 0);  // root's file, not writable by others
  ::chmod(dir.file("kern.log").c_str(), 0666);
  got = collect_all(*vouched, request);
  ASSERT_EQ(got.lines.size(), 2u);
  EXPECT_FALSE(got.lines[0].trusted);
  EXPECT_NE(got.coverage[1].detail.find("writable by others than its owner"), std::string::npos)
      << got.coverage[1].detail;
  auto refused = create_collector("syslog_file", YAML::Load("{path: /var/log/messages, trust: always}"));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("'trust' of collector 'syslog_file': must be auto, file or none"),
            std::string::npos);
}

// ai4d-iasc/trixie#45: cn106's slurmd.log, stepd's lines with their "[job.step]".
const std::string kSlurmd =
    "[2020-12-14T08:59:01.890] launch task 63532.0 request from UID:xxxxxxxxx  GID:xxxxxxxxx HOST:10.xxx.xxx.xxx "
    "PORT:63195\n"
    "[2020-12-14T09:43:55.500] [63532.0] error: *** STEP 63532.0 ON cn106 CANCELLED AT 2020-12-14T09:43:55 ***\n"
    "[2020-12-14T09:43:55.502] [63532.extern] done with job\n"
    "[2020-12-14T09:44:56.002] [63532.0] error: *** STEP 63532.0 STEPD TERMINATED ON cn106 AT 2020-12-14T09:44:56 "
    "DUE TO JOB NOT ENDING WITH SIGNALS ***\n";

TEST(SlurmLogCollector, ReadsSlurmdLinesAsTheSlurmSourceTrustedByTheirFile) {
  ScratchDir dir;
  write_file(dir.file("slurmd-cn106.log"), kSlurmd + "a line that is no Slurm line\n");
  ::chmod(dir.file("slurmd-cn106.log").c_str(), 0640);
  set_modified(dir.file("slurmd-cn106.log"), utc(2020, 12, 14, 10, 0, 0));
  // The node's clock is CET: Slurm writes local time without a zone.
  auto collector = make("slurm_log", "path: " + dir.file("slurmd-{node}.log") + "\ntimezone_offset_minutes: 60");
  ASSERT_TRUE(collector);
  auto got = collect_all(*collector, request_for("cn106", utc(2020, 12, 14, 8, 40, 0), utc(2020, 12, 14, 8, 50, 0)));
  ASSERT_EQ(got.lines.size(), 3u);  // 08:59:01 CET is 07:59:01 UTC, before the window
  EXPECT_EQ(got.lines[0].source, "slurm");
  EXPECT_EQ(got.lines[0].text, "[63532.0] error: *** STEP 63532.0 ON cn106 CANCELLED AT 2020-12-14T09:43:55 ***");
  EXPECT_EQ(got.lines[0].time, utc(2020, 12, 14, 8, 43, 55) + 500000);
  EXPECT_EQ(got.lines[2].text.rfind("[63532.0] error: *** STEP 63532.0 STEPD TERMINATED ON cn106", 0), 0u)
      << got.lines[2].text;
  EXPECT_EQ(got.lines[0].trusted, ::geteuid() == 0);
  ASSERT_EQ(got.coverage.size(), 1u);
  EXPECT_EQ(status_of(got.coverage[0]), "ok");
  EXPECT_NE(got.coverage[0].detail.find("1 lines without a recognised stamp skipped"), std::string::npos)
      << got.coverage[0].detail;

  ::chmod(dir.file("slurmd-cn106.log").c_str(), 0646);  // anyone may append lines: no one's word
  got = collect_all(*collector, request_for("cn106", utc(2020, 12, 14, 8, 40, 0), utc(2020, 12, 14, 8, 50, 0)));
  ASSERT_EQ(got.lines.size(), 3u);
  EXPECT_FALSE(got.lines[0].trusted);
}

TEST(SlurmLogCollector, MissingDamagedAndOldFilesAreSaidSo) {
  ScratchDir dir;
  auto collector = make("slurm_log", "path: " + dir.file("slurmd.log"));
  ASSERT_TRUE(collector);
  const CollectRequest request = request_for("cn106", utc(2020, 12, 14, 9, 40, 0), utc(2020, 12, 14, 9, 50, 0));
  auto got = collect_all(*collector, request);
  EXPECT_EQ(status_of(got.coverage[0]), "unavailable");

  write_file(dir.file("slurmd.log"), kSlurmd);
  set_modified(dir.file("slurmd.log"), utc(2020, 12, 13, 0, 0, 0));  // last written the day before
  got = collect_all(*collector, request);
  EXPECT_TRUE(got.lines.empty());
  EXPECT_EQ(status_of(got.coverage[0]), "empty");
  EXPECT_NE(got.coverage[0].detail.find("last written before the window"), std::string::npos);

  const char damaged[] = "\x1f\x8b\x08\x00 not really gzip after its magic";
  write_file(dir.file("slurmd.log.1.gz"), std::string(damaged, sizeof damaged - 1));
  set_modified(dir.file("slurmd.log.1.gz"), utc(2020, 12, 14, 9, 45, 0));
  set_modified(dir.file("slurmd.log"), utc(2020, 12, 14, 10, 0, 0));
  got = collect_all(*collector, request);
  EXPECT_EQ(got.lines.size(), 3u);  // the live file is still read
  EXPECT_EQ(status_of(got.coverage[0]), "partial");
  EXPECT_NE(got.coverage[0].detail.find("slurmd.log.1.gz: not readable as gzip"), std::string::npos)
      << got.coverage[0].detail;
}

}  // namespace
}  // namespace attrib::collectors
