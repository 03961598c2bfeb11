// The kmsg collector against kmsg-format records written to a file and to a FIFO
// (never /dev/kmsg itself: writing there pollutes the real kernel ring).
#include "collectors/kmsg_collector.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>

#include <gtest/gtest.h>

#include "collectors/registry.h"
#include "core/clock.h"
#include "tests/support/file_fixtures.h"

namespace attrib::collectors {
namespace {

using testing::collect_all;
using testing::ScratchDir;
using testing::status_of;
using testing::write_file;

constexpr TimeUs kSecond = 1'000'000;
constexpr int64_t kBootSeconds = 1'764'496'000;           // 2025-11-30T09:46:40Z
constexpr TimeUs kWindowStart = 1'764'496'800 * kSecond;  // 2025-11-30T10:00:00Z (boot + 800 s)
constexpr TimeUs kWindowEnd = kWindowStart + 600 * kSecond;

// Records as /dev/kmsg prints them: priority 3 = kern.err, 6 = kern.info,
// 14 = user.info (what `echo > /dev/kmsg` produces), dictionary lines after a record.
const std::string kRecords =
    "6,0,1000000,-;Linux version 6.1.0-18-amd64\n"
    "3,1201,800500000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
    " SUBSYSTEM=pci\n"
    " DEVICE=+pci:0000:3b:00.0\n"
    "14,1202,800600000,-;user space wrote this to /dev/kmsg\n"
    "4,1203,801000000,c,caller=T42;mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link INIT\n"
    "6,1204,900000000,-;path with a backslash \\x5c and a tab\\x09here\n"
    "3,1205,1500000000,-;NVRM: Xid (PCI:0000:3b:00): 48, after the window\n"
    "not a kmsg record\n";

Result<std::unique_ptr<Collector>> make(const std::string& yaml) { return create_collector("kmsg", YAML::Load(yaml)); }

CollectRequest request_for(const std::string& node) {
  CollectRequest request;
  request.job_id = "4242";
  request.node = node;
  request.window_start = kWindowStart;
  request.window_end = kWindowEnd;
  return request;
}

TEST(KmsgCollector, ReadsKernelRecordsInTheWindowAsTrustedWallClockLines) {
  ScratchDir dir;
  write_file(dir.file("n2.kmsg"), kRecords);
  auto collector = make("path: " + dir.file("{node}.kmsg") + "\nboot_time: " + std::to_string(kBootSeconds) + "\n");
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  auto got = collect_all(**collector, request_for("n2"));

  ASSERT_EQ(got.lines.size(), 3u);
  EXPECT_EQ(got.lines[0].text, "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.");
  EXPECT_EQ(got.lines[0].time, kWindowStart + 500'000);
  EXPECT_EQ(got.lines[1].text, "mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link INIT");
  EXPECT_EQ(got.lines[1].time, kWindowStart + kSecond);
  EXPECT_EQ(got.lines[2].text, "path with a backslash \\ and a tab\there");
  for (size_t i = 0; i < got.lines.size(); ++i) {
    EXPECT_EQ(got.lines[i].node, "n2");
    EXPECT_EQ(got.lines[i].source, "kernel");
    EXPECT_TRUE(got.lines[i].trusted);
    EXPECT_EQ(got.lines[i].seq, i);
  }
  ASSERT_EQ(got.coverage.size(), 1u);
  EXPECT_EQ(got.coverage[0].source, "kernel");
  EXPECT_EQ(status_of(got.coverage[0]), "ok");
  EXPECT_EQ(got.coverage[0].lines, 3u);
  EXPECT_NE(got.coverage[0].detail.find("1 malformed"), std::string::npos) << got.coverage[0].detail;
  EXPECT_NE(got.coverage[0].detail.find("1 user-space"), std::string::npos) << got.coverage[0].detail;
}

// The header is read strictly: three unsigned decimal fields, then more fields or the ';'.
// Anything else is counted as malformed, never read as a record.
TEST(KmsgCollector, OnlyWellFormedHeadersAreRecords) {
  ScratchDir dir;
  write_file(dir.file("n2.kmsg"),
             "3,1300,800100000;no flags field\n"
             "3,1301,800200000,-,caller=C1;a ';' in the message; kept\n"
             "3,1302;no usec\n"
             "3,,800300000,-;empty seq\n"
             "3,1303,800400000 ,-;a space after usec\n"
             "+3,1304,800500000,-;a sign\n"
             "3,1305,99999999999999999999999,-;usec past 64 bits\n"
             "3,1306,800600000,-\n"
             "3,1307,800700000\n"
             "3;1308,800800000,-;a ';' first\n");
  auto collector = make("path: " + dir.file("{node}.kmsg") + "\nboot_time: " + std::to_string(kBootSeconds) + "\n");
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  auto got = collect_all(**collector, request_for("n2"));
  ASSERT_EQ(got.lines.size(), 2u);
  EXPECT_EQ(got.lines[0].text, "no flags field");
  EXPECT_EQ(got.lines[1].text, "a ';' in the message; kept");
  ASSERT_EQ(got.coverage.size(), 1u);
  EXPECT_NE(got.coverage[0].detail.find("8 malformed"), std::string::npos) << got.coverage[0].detail;
}

// Collectors hand a file's lines over as runs (core/line_run.h) where the sink takes
// them: the lines are those a line-by-line sink gets, in the same order with the same
// seqs, and a record whose message holds an escaped newline stays one line of its own.
TEST(KmsgCollector, HandsRecordsOverAsRunsThatHoldTheSameLines) {
  ScratchDir dir;
  write_file(dir.file("n2.kmsg"), kRecords +
                                      "6,1206,900100000,-;two\\x0alines in one record\n"
                                      "6,1207,900200000,-;after it\n");
  auto collector = make("path: " + dir.file("{node}.kmsg") + "\nboot_time: " + std::to_string(kBootSeconds) + "\n");
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  const auto by_line = collect_all(**collector, request_for("n2"));

  std::vector<LogLine> from_runs;
  int runs = 0;
  const auto keep = [&](const LogLine& line) { from_runs.push_back(line); };
  const auto coverage = (*collector)->collect(request_for("n2"), LineSink(keep, [&](const LineRun& run) {
                                                ++runs;
                                                return for_each_line_of(run, keep);
                                              }));
  EXPECT_EQ(runs, 2);  // the records before the two-line message, and the one after it
  ASSERT_EQ(from_runs.size(), 5u);
  ASSERT_EQ(by_line.lines.size(), from_runs.size());
  for (size_t i = 0; i < from_runs.size(); ++i) {
    EXPECT_EQ(from_runs[i].text, by_line.lines[i].text);
    EXPECT_EQ(from_runs[i].time, by_line.lines[i].time);
    EXPECT_EQ(from_runs[i].seq, i);
    EXPECT_EQ(by_line.lines[i].seq, i);
    EXPECT_TRUE(from_runs[i].trusted);
    EXPECT_EQ(from_runs[i].source, "kernel");
  }
  EXPECT_EQ(from_runs[3].text, "two\nlines in one record");
  EXPECT_EQ(from_runs[4].text, "after it");
  ASSERT_EQ(coverage.size(), 1u);
  EXPECT_EQ(coverage[0].lines, 5u);
}

// A thread keeps its buffers from one window to the next (a worker collects a window per
// job): a larger ring read first leaves nothing of itself in a smaller one read after it.
TEST(KmsgCollector, AWindowReadAfterALargerOneHoldsOnlyItsOwnLines) {
  ScratchDir dir;
  std::string large = kRecords;
  for (int i = 0; i < 2000; ++i)
    large += "6," + std::to_string(2000 + i) + "," + std::to_string(800700000 + i) + ",-;filler line " +
             std::to_string(i) + " of the larger ring\n";
  write_file(dir.file("big.kmsg"), large);
  write_file(dir.file("n2.kmsg"), kRecords);
  auto collector = make("path: " + dir.file("{node}.kmsg") + "\nboot_time: " + std::to_string(kBootSeconds) + "\n");
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  const auto fresh = collect_all(**collector, request_for("n2"));
  EXPECT_EQ(collect_all(**collector, request_for("big")).lines.size(), fresh.lines.size() + 2000);
  const auto after = collect_all(**collector, request_for("n2"));
  ASSERT_EQ(after.lines.size(), fresh.lines.size());
  for (size_t i = 0; i < after.lines.size(); ++i) {
    EXPECT_EQ(after.lines[i].text, fresh.lines[i].text);
    EXPECT_EQ(after.lines[i].time, fresh.lines[i].time);
  }
  EXPECT_EQ(after.coverage[0].lines, fresh.coverage[0].lines);
}

TEST(KmsgCollector, BootTimeFromAPerNodeProcStatCopy) {
  ScratchDir dir;
  write_file(dir.file("n3.kmsg"), "3,0,800000000,-;first\n");
  write_file(dir.file("n3.stat"), "cpu  1 2 3\nintr 0\nbtime " + std::to_string(kBootSeconds) + "\nprocesses 9\n");
  auto collector = make("path: " + dir.file("{node}.kmsg") + "\nboot_time: " + dir.file("{node}.stat") + "\n");
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  auto got = collect_all(**collector, request_for("n3"));
  ASSERT_EQ(got.lines.size(), 1u);
  EXPECT_EQ(got.lines[0].time, kWindowStart);  // window bounds are inclusive
  EXPECT_EQ(status_of(got.coverage[0]), "ok");

  // The companion file of another node is missing: the records cannot be placed.
  write_file(dir.file("n4.kmsg"), "3,0,800000000,-;first\n");
  auto missing = collect_all(**collector, request_for("n4"));
  EXPECT_TRUE(missing.lines.empty());
  EXPECT_EQ(status_of(missing.coverage[0]), "failed");
  EXPECT_NE(missing.coverage[0].detail.find("n4.stat"), std::string::npos) << missing.coverage[0].detail;
}

TEST(KmsgCollector, AutoBootTimeIsThisMachinesBtime) {
  ScratchDir dir;
  write_file(dir.file("local.kmsg"), "6,0,0,-;booted\n");
  auto collector = make("path: " + dir.file("local.kmsg"));
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  CollectRequest request = request_for("local");
  request.window_start = 0;
  request.window_end = wall_clock_us();
  auto got = collect_all(**collector, request);
  ASSERT_EQ(got.lines.size(), 1u);
  // A record at boot + 0 µs is placed at btime: in the past, and after 2000-01-01.
  EXPECT_LE(*got.lines[0].time, request.window_end);
  EXPECT_GT(*got.lines[0].time, 946'684'800 * kSecond);
  EXPECT_EQ(*got.lines[0].time % kSecond, 0);
}

TEST(KmsgCollector, ReadsAFifoWithoutBlocking) {
  ScratchDir dir;
  const std::string fifo = dir.file("ring");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // O_RDWR keeps a writer open for the whole read, like the kernel behind /dev/kmsg:
  // the collector must stop at EAGAIN rather than wait for more.
  const int writer = open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(writer, 0);
  const std::string records =
      "3,1201,800500000,-;NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
      "4,1202,801000000,-;second\n";
  ASSERT_EQ(write(writer, records.data(), records.size()), static_cast<ssize_t>(records.size()));

  auto collector = make("path: " + fifo + "\nboot_time: " + std::to_string(kBootSeconds) + "\n");
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  auto pending = std::async(std::launch::async, [&] { return collect_all(**collector, request_for("n1")); });
  const bool finished = pending.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  close(writer);  // unblocks a (broken) blocking reader either way
  ASSERT_TRUE(finished) << "reading the FIFO blocked";
  auto got = pending.get();
  ASSERT_EQ(got.lines.size(), 2u);
  EXPECT_EQ(got.lines[1].text, "second");
  // seq 1201 > 0 and the first record is after the window start: the ring wrapped.
  EXPECT_EQ(status_of(got.coverage[0]), "partial");
  EXPECT_NE(got.coverage[0].detail.find("overwritten"), std::string::npos) << got.coverage[0].detail;

  // No writer at all: end of data at once, nothing in the window.
  auto empty = collect_all(**collector, request_for("n1"));
  EXPECT_TRUE(empty.lines.empty());
  EXPECT_EQ(status_of(empty.coverage[0]), "empty");
}

TEST(KmsgCollector, CoverageStatuses) {
  ScratchDir dir;
  const std::string boot = "\nboot_time: " + std::to_string(kBootSeconds) + "\n";

  // The node booted inside the window: seq 0 after the window start.
  write_file(dir.file("rebooted.kmsg"), "6,0,900000000,-;Linux version 6.1.0\n");
  // The ring starts before the window but nothing in it falls inside.
  write_file(dir.file("quiet.kmsg"), "6,0,1000000,-;Linux version 6.1.0\n6,1,2000000,-;early\n");
  std::filesystem::create_directory(dir.path() / "unreadable.kmsg");

  auto collector = make("path: " + dir.file("{node}.kmsg") + boot);
  ASSERT_TRUE(collector.ok()) << collector.error().message;

  auto rebooted = collect_all(**collector, request_for("rebooted"));
  EXPECT_EQ(rebooted.lines.size(), 1u);
  EXPECT_EQ(status_of(rebooted.coverage[0]), "partial");
  EXPECT_NE(rebooted.coverage[0].detail.find("booted inside the window"), std::string::npos)
      << rebooted.coverage[0].detail;

  auto quiet = collect_all(**collector, request_for("quiet"));
  EXPECT_TRUE(quiet.lines.empty());
  EXPECT_EQ(status_of(quiet.coverage[0]), "empty");

  auto absent = collect_all(**collector, request_for("absent"));
  EXPECT_EQ(status_of(absent.coverage[0]), "unavailable");
  EXPECT_NE(absent.coverage[0].detail.find("absent.kmsg"), std::string::npos);

  auto failed = collect_all(**collector, request_for("unreadable"));
  EXPECT_EQ(status_of(failed.coverage[0]), "failed");

  auto escaping = collect_all(**collector, request_for(".."));
  EXPECT_EQ(status_of(escaping.coverage[0]), "failed");
}

TEST(KmsgCollector, OptionValidation) {
  auto unknown = make("path: /dev/kmsg\nboot_tme: auto\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, "CONFIG_E_UNKNOWN_KEY");
  EXPECT_NE(unknown.error().message.find("'boot_tme'"), std::string::npos) << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("line 2"), std::string::npos) << unknown.error().message;

  auto bad_boot = make("boot_time: yesterday\n");
  ASSERT_FALSE(bad_boot.ok());
  EXPECT_EQ(bad_boot.error().code, "CONFIG_E_VALUE");
  EXPECT_NE(bad_boot.error().message.find("'boot_time'"), std::string::npos) << bad_boot.error().message;

  auto glob = make("path: /var/log/kmsg/*.kmsg\n");
  ASSERT_FALSE(glob.ok());
  EXPECT_EQ(glob.error().code, "CONFIG_E_VALUE");
  EXPECT_NE(glob.error().message.find("line 1"), std::string::npos) << glob.error().message;

  auto placeholder = make("path: /var/log/kmsg/{job_id}.kmsg\n");
  ASSERT_FALSE(placeholder.ok());
  EXPECT_NE(placeholder.error().message.find("{job_id}"), std::string::npos) << placeholder.error().message;

  EXPECT_TRUE(make("").ok());  // every default is valid
}

TEST(KmsgCollector, RegisteredWithItsOptionTable) {
  const CollectorKind* kind = find_collector_kind("kmsg");
  ASSERT_NE(kind, nullptr);
  ASSERT_EQ(kind->options.size(), 2u);
  EXPECT_EQ(kind->options[0].key, "path");
  EXPECT_EQ(kind->options[0].default_value, "/dev/kmsg");
  EXPECT_NE(options_reference_markdown().find("### kmsg"), std::string::npos);
}

}  // namespace
}  // namespace attrib::collectors
