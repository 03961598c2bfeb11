// The Fabric Manager log collector against log files in FM's own format
// (lines from gpud's testdata, see docs/collectors.md), including rotation and
// multi-line entries.
#include "collectors/fabricmanager_collector.h"

#include <string>

#include <gtest/gtest.h>

#include "collectors/registry.h"
#include "tests/support/file_fixtures.h"

namespace attrib::collectors {
namespace {

using testing::collect_all;
using testing::ScratchDir;
using testing::status_of;
using testing::write_file;

constexpr TimeUs kSecond = 1'000'000;
constexpr TimeUs kJul23_0753 = 1'721'721'180 * kSecond;  // 2024-07-23T07:53:00Z
constexpr TimeUs kWindowStart = kJul23_0753;
constexpr TimeUs kWindowEnd = kJul23_0753 + 10 * 60 * kSecond;

Result<std::unique_ptr<Collector>> make(const std::string& yaml) {
  return create_collector("fabricmanager", YAML::Load(yaml));
}

CollectRequest request_for(const std::string& node, TimeUs start = kWindowStart, TimeUs end = kWindowEnd) {
  CollectRequest request;
  request.job_id = "4242";
  request.node = node;
  request.window_start = start;
  request.window_end = end;
  return request;
}

const std::string kRotated =
    "[Jul 23 2024 07:40:01] [INFO] [tid 812] Fabric Manager version 535.161.08 is running\n"
    "[Jul 23 2024 07:53:10] [WARNING] [tid 841] NVLink training on partition 2 took longer than expected\n";
const std::string kCurrent =
    "[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id "
    "00000000:86:00.0 physical id 3 port 33\n"
    "    fatal error details: port 33 link state DOWN\n"
    "    NVSwitch instance will be reset\n"
    "[Jul 23 2024 07:54:02] [INFO] [tid 1808] multicast group 0 is freed.\n"
    "[Jul 23 2024 08:30:00] [ERROR] [tid 1230079] failed to find the GPU handle 5410063385821516767 in the "
    "multicast team request setup 6130285411925746235.\n";

TEST(FabricManagerCollector, ReadsRotatedFileFirstAndJoinsContinuationLines) {
  ScratchDir dir;
  write_file(dir.file("n3-fm.log.1"), kRotated);
  write_file(dir.file("n3-fm.log"), kCurrent);
  auto collector = make("path: " + dir.file("{node}-fm.log"));
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  auto got = collect_all(**collector, request_for("n3"));

  // 07:40:01 is before the window, 08:30:00 after it.
  ASSERT_EQ(got.lines.size(), 3u);
  EXPECT_EQ(got.lines[0].text,
            "[WARNING] [tid 841] NVLink training on partition 2 took longer than expected");  // from .1
  EXPECT_EQ(got.lines[0].time, kJul23_0753 + 10 * kSecond);
  EXPECT_EQ(got.lines[1].text,
            "[ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id "
            "00000000:86:00.0 physical id 3 port 33\n"
            "    fatal error details: port 33 link state DOWN\n"
            "    NVSwitch instance will be reset");
  EXPECT_EQ(got.lines[1].time, kJul23_0753 + 55 * kSecond);
  EXPECT_EQ(got.lines[2].text, "[INFO] [tid 1808] multicast group 0 is freed.");
  for (size_t i = 0; i < got.lines.size(); ++i) {
    EXPECT_EQ(got.lines[i].node, "n3");
    EXPECT_EQ(got.lines[i].source, "fabricmanager");
    EXPECT_TRUE(got.lines[i].trusted);
    EXPECT_EQ(got.lines[i].seq, i);
  }
  ASSERT_EQ(got.coverage.size(), 1u);
  EXPECT_EQ(got.coverage[0].source, "fabricmanager");
  EXPECT_EQ(status_of(got.coverage[0]), "ok") << got.coverage[0].detail;
  EXPECT_EQ(got.coverage[0].lines, 3u);
}

TEST(FabricManagerCollector, LocalTimeOffsetAndSinglePaddedDays) {
  ScratchDir dir;
  // CEST node (UTC+2): 09:53:55 local is 07:53:55Z. "Jul  3" and "Jul 3" both parse.
  write_file(dir.file("fm.log"),
             "[Jul 23 2024 09:53:55] [ERROR] [tid 841] local time\n"
             "[Jul  3 2024 09:00:00] [INFO] [tid 1] padded day, long before\n"
             "[Jul 3 2024 09:00:00] [INFO] [tid 1] unpadded day, long before\n");
  auto collector = make("path: " + dir.file("fm.log") + "\ntimezone_offset_minutes: 120\n");
  ASSERT_TRUE(collector.ok()) << collector.error().message;
  auto got = collect_all(**collector, request_for("n1", 1'719'990'000 * kSecond, kWindowEnd));
  ASSERT_EQ(got.lines.size(), 3u);
  EXPECT_EQ(got.lines[0].time, kJul23_0753 + 55 * kSecond);
  EXPECT_EQ(got.lines[1].time, 1'719'990'000 * kSecond);  // 2024-07-03T07:00:00Z
  EXPECT_EQ(got.lines[2].time, 1'719'990'000 * kSecond);
}

TEST(FabricManagerCollector, CoverageStatuses) {
  ScratchDir dir;
  auto collector = make("path: " + dir.file("{node}.log"));
  ASSERT_TRUE(collector.ok()) << collector.error().message;

  auto absent = collect_all(**collector, request_for("n1"));
  EXPECT_EQ(status_of(absent.coverage[0]), "unavailable");
  EXPECT_NE(absent.coverage[0].detail.find("n1.log.1"), std::string::npos) << absent.coverage[0].detail;

  // Only the rotated file is left: still read.
  write_file(dir.file("n2.log.1"), kRotated);
  auto rotated_only = collect_all(**collector, request_for("n2"));
  EXPECT_EQ(rotated_only.lines.size(), 1u);
  EXPECT_EQ(status_of(rotated_only.coverage[0]), "ok");

  // The log begins after the window start (FM restarted with a fresh log, or the
  // beginning rotated away): lines may be missing. Orphan continuation lines at
  // the top (the rest of an entry we no longer have) are skipped.
  write_file(dir.file("n3.log"), "    tail of an older entry\n" + kCurrent);
  auto late = collect_all(**collector, request_for("n3"));
  EXPECT_EQ(late.lines.size(), 2u);
  EXPECT_EQ(status_of(late.coverage[0]), "partial");
  EXPECT_NE(late.coverage[0].detail.find("after the window start"), std::string::npos) << late.coverage[0].detail;
  EXPECT_NE(late.coverage[0].detail.find("1 lines before the first"), std::string::npos) << late.coverage[0].detail;

  // Read completely, nothing inside the window.
  write_file(dir.file("n4.log"), kRotated);
  auto quiet = collect_all(**collector, request_for("n4", kJul23_0753 + 3600 * kSecond, kJul23_0753 + 7200 * kSecond));
  EXPECT_TRUE(quiet.lines.empty());
  EXPECT_EQ(status_of(quiet.coverage[0]), "empty");

  std::filesystem::create_directory(dir.path() / "n5.log");
  auto failed = collect_all(**collector, request_for("n5"));
  EXPECT_EQ(status_of(failed.coverage[0]), "failed");
  EXPECT_NE(failed.coverage[0].detail.find("not a regular file"), std::string::npos) << failed.coverage[0].detail;

  // One of the two files unreadable, the other read: partial.
  write_file(dir.file("n6.log"), kCurrent);
  std::filesystem::create_directory(dir.path() / "n6.log.1");
  auto half = collect_all(**collector, request_for("n6", kJul23_0753 + 50 * kSecond, kWindowEnd));
  EXPECT_EQ(half.lines.size(), 2u);
  EXPECT_EQ(status_of(half.coverage[0]), "partial");
  EXPECT_NE(half.coverage[0].detail.find("n6.log.1 is not a regular file"), std::string::npos)
      << half.coverage[0].detail;
}

TEST(FabricManagerCollector, OptionValidation) {
  auto unknown = make("path: /var/log/fabricmanager.log\ntimezone: 60\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, "CONFIG_E_UNKNOWN_KEY");
  EXPECT_NE(unknown.error().message.find("'timezone'"), std::string::npos) << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("line 2"), std::string::npos) << unknown.error().message;

  auto not_int = make("timezone_offset_minutes: CET\n");
  ASSERT_FALSE(not_int.ok());
  EXPECT_EQ(not_int.error().code, "CONFIG_E_TYPE");

  auto out_of_range = make("path: /var/log/fm.log\ntimezone_offset_minutes: 3000\n");
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_EQ(out_of_range.error().code, "CONFIG_E_VALUE");
  EXPECT_NE(out_of_range.error().message.find("line 2"), std::string::npos) << out_of_range.error().message;

  auto relative = make("path: fabricmanager.log\n");
  ASSERT_FALSE(relative.ok());
  EXPECT_EQ(relative.error().code, "CONFIG_E_VALUE");

  auto defaults = make("");
  ASSERT_TRUE(defaults.ok());
  const CollectorKind* kind = find_collector_kind("fabricmanager");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->options[0].default_value, "/var/log/fabricmanager.log");
}

}  // namespace
}  // namespace attrib::collectors
