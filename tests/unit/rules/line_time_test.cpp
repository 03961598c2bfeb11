// Line prefixes and timestamps (rules/line_time.h), one case per
// shape in message-formats.md section 0 plus the near misses that must stay payload.
#include "rules/line_time.h"

#include <gtest/gtest.h>

#include "tests/support/rule_test_support.h"

namespace attrib::rules {
namespace {

using test::at;

TimeContext in_2026() { return TimeContext{at("2026-11-30T10:00:00Z"), 0}; }

std::string payload(std::string_view line, const LineStamp& s) { return std::string(line.substr(s.payload_offset)); }

TEST(LineTime, SyslogHeaderIsStrippedAndTakesTheJobYear) {
  const std::string line = "Nov 30 10:03:12 gpu017 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";
  auto s = parse_line_stamp(line, in_2026(), true);
  EXPECT_EQ(s.format, StampFormat::Syslog);
  EXPECT_EQ(s.time, at("2026-11-30T10:03:12Z"));
  EXPECT_FALSE(s.uptime);
  EXPECT_EQ(payload(line, s), "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
}

TEST(LineTime, SyslogWithPaddedDayPidAndNestedDmesgStamp) {
  const std::string line =
      "May  7 06:45:12 errol kernel: [21584690.529862] mce: [Hardware Error]: Machine check events logged";
  auto s = parse_line_stamp(line, TimeContext{at("2026-05-07T06:00:00Z"), 0}, true);
  EXPECT_EQ(s.time, at("2026-05-07T06:45:12Z"));
  EXPECT_EQ(s.uptime, int64_t{21584690529862});
  EXPECT_EQ(payload(line, s), "mce: [Hardware Error]: Machine check events logged");

  const std::string daemon =
      "Nov 15 09:00:01 leon nv-fabricmanager[4177]: request to query NVSwitch device information";
  auto d = parse_line_stamp(daemon, in_2026(), true);
  EXPECT_EQ(d.format, StampFormat::Syslog);
  EXPECT_EQ(payload(daemon, d), "request to query NVSwitch device information");
}

TEST(LineTime, YearlessStampsWithoutReferenceKeepOrderOnly) {
  const std::string line = "Nov 30 10:03:12 gpu017 kernel: text";
  auto s = parse_line_stamp(line, TimeContext{}, true);
  EXPECT_EQ(s.format, StampFormat::Syslog);
  EXPECT_FALSE(s.time);
  EXPECT_TRUE(s.year_missing);
  EXPECT_EQ(payload(line, s), "text");
}

TEST(LineTime, YearRollsOverToTheNearestYear) {
  TimeContext newyear{at("2026-12-31T23:59:00Z"), 0};
  EXPECT_EQ(parse_line_stamp("Jan  1 00:00:03 n kernel: x", newyear, true).time, at("2027-01-01T00:00:03Z"));
  TimeContext january{at("2027-01-01T00:01:00Z"), 0};
  EXPECT_EQ(parse_line_stamp("Dec 31 23:59:59 n kernel: x", january, true).time, at("2026-12-31T23:59:59Z"));
}

TEST(LineTime, LocalTimeUsesTheOffsetUnlessTheStampHasAZone) {
  TimeContext plus2{at("2026-11-30T10:00:00Z"), 2 * 3600};
  EXPECT_EQ(parse_line_stamp("Nov 30 12:03:12 n kernel: x", plus2, true).time, at("2026-11-30T10:03:12Z"));
  EXPECT_EQ(parse_line_stamp("2026-11-30T12:03:12.5+02:00 x", plus2, false).time, at("2026-11-30T10:03:12.500000Z"));
  EXPECT_EQ(parse_line_stamp("2026-11-30 12:03:12,25 x", plus2, false).time, at("2026-11-30T10:03:12.250000Z"));
}

TEST(LineTime, Iso8601WithCommaOrDotFractionAndZone) {
  const std::string a = "2025-01-25T10:34:54,859532+00:00 payload";
  auto s = parse_line_stamp(a, {}, false);
  EXPECT_EQ(s.format, StampFormat::Iso);
  EXPECT_EQ(s.time, at("2025-01-25T10:34:54.859532Z"));
  EXPECT_EQ(payload(a, s), "payload");
  EXPECT_EQ(parse_line_stamp("2026-11-30T10:03:12.123456789Z x", {}, false).time, at("2026-11-30T10:03:12.123456Z"));
  EXPECT_EQ(parse_line_stamp("2026-11-30T10:03:12-0500 x", {}, false).time, at("2026-11-30T15:03:12Z"));
}

TEST(LineTime, RsyslogIsoHeaderIsStrippedOnlyInSystemLogs) {
  const std::string line = "2026-11-30T10:03:12.644138+00:00 gpu017 kernel: [74889.644138] NVRM: Xid x";
  auto sys = parse_line_stamp(line, {}, true);
  EXPECT_EQ(payload(line, sys), "NVRM: Xid x");
  EXPECT_EQ(sys.uptime, int64_t{74889644138});
  const std::string app = "2026-11-30T10:03:12Z worker main: step 5";
  EXPECT_EQ(payload(app, parse_line_stamp(app, {}, false)), "worker main: step 5");
}

TEST(LineTime, DmesgShapes) {
  const std::string raw = "[74889.644138] NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.";
  auto r = parse_line_stamp(raw, in_2026(), true);
  EXPECT_EQ(r.format, StampFormat::DmesgUptime);
  EXPECT_FALSE(r.time);
  EXPECT_EQ(r.uptime, int64_t{74889644138});
  EXPECT_EQ(payload(raw, r), "NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.");
  EXPECT_EQ(parse_line_stamp("[    2.935012] mlx5_core x", {}, true).uptime, int64_t{2935012});

  const std::string ctime = "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>'";
  auto c = parse_line_stamp(ctime, {}, true);
  EXPECT_EQ(c.format, StampFormat::DmesgCtime);
  EXPECT_EQ(c.time, at("2024-08-30T11:43:09Z"));
  EXPECT_EQ(payload(ctime, c), "NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>'");
  EXPECT_EQ(parse_line_stamp("[Fri Oct  6 11:12:25 2023] Lustre: x", {}, true).time, at("2023-10-06T11:12:25Z"));

  const std::string iso =
      "kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028";
  auto i = parse_line_stamp(iso, {}, true);
  EXPECT_EQ(i.format, StampFormat::DmesgIso);
  EXPECT_EQ(i.time, at("2025-01-25T10:34:54.859532Z"));
  EXPECT_EQ(payload(iso, i), "nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028");
}

TEST(LineTime, FabricManagerAndSlurmdBrackets) {
  const std::string fm = "[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0";
  auto f = parse_line_stamp(fm, {}, true);
  EXPECT_EQ(f.format, StampFormat::FabricManager);
  EXPECT_EQ(f.time, at("2024-07-23T07:53:55Z"));
  EXPECT_EQ(payload(fm, f), "[ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0");

  const std::string slurmd = "[2020-12-14T09:43:55.500] [63532.0] error: *** STEP 63532.0 ON cn106 CANCELLED AT x ***";
  auto s = parse_line_stamp(slurmd, {}, false);
  EXPECT_EQ(s.format, StampFormat::SlurmIso);
  EXPECT_EQ(s.time, at("2020-12-14T09:43:55.500000Z"));
  EXPECT_EQ(payload(slurmd, s), "[63532.0] error: *** STEP 63532.0 ON cn106 CANCELLED AT x ***");
}

TEST(LineTime, GlogGivesTimeButStaysInThePayload) {
  const std::string line =
      "[rank3]:[E1130 10:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation "
      "timeout";
  auto s = parse_line_stamp(line, in_2026(), false);
  EXPECT_EQ(s.format, StampFormat::Glog);
  EXPECT_EQ(s.time, at("2026-11-30T10:07:08.408271Z"));
  EXPECT_EQ(s.payload_offset, 0u);

  const std::string torchrun =
      "E0801 13:23:20.000000 32974 torch/distributed/elastic/multiprocessing/api.py:874] failed";
  auto t = parse_line_stamp(torchrun, TimeContext{at("2026-08-01T12:00:00Z"), 0}, false);
  EXPECT_EQ(t.format, StampFormat::Glog);
  EXPECT_EQ(t.time, at("2026-08-01T13:23:20Z"));
  EXPECT_EQ(t.payload_offset, 0u);
}

TEST(LineTime, NearMissesAreAllPayload) {
  for (const std::string line :
       {"[rank3]: torch.distributed.DistBackendError: NCCL error in: x", "[E ProcessGroupNCCL.cpp:737] [Rank 1] x",
        "NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.", "[Rank 0] Watchdog caught", "[ERROR] x",
        "Nov 30 is a date: nothing else", "2026-13-01T00:00:00Z month 13", "gpu001:3468:3905 [0] NCCL INFO x",
        "E0801 is not glog", ""}) {
    auto s = parse_line_stamp(line, in_2026(), true);
    EXPECT_EQ(s.format, StampFormat::None) << line;
    EXPECT_FALSE(s.time) << line;
    EXPECT_EQ(s.payload_offset, 0u) << line;
  }
}

TEST(JournalJson, ReadsTheFieldsTheEngineUses) {
  auto e = parse_journal_json(
      R"({"__REALTIME_TIMESTAMP":"1796032992000001","__MONOTONIC_TIMESTAMP":"1234","_HOSTNAME":"gpu017",)"
      R"("_TRANSPORT":"kernel","_UID":"0","MESSAGE":"NVRM: Xid x","ATTRIB_SEQ":"7","ATTRIB_COUNT":"3"})");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->message, "NVRM: Xid x");
  EXPECT_EQ(e->realtime, int64_t{1796032992000001});
  EXPECT_EQ(e->monotonic, int64_t{1234});
  EXPECT_EQ(e->hostname, "gpu017");
  EXPECT_EQ(e->transport, "kernel");
  EXPECT_EQ(e->seq, uint64_t{7});
  EXPECT_EQ(e->count, 3u);

  auto bytes = parse_journal_json(R"({"MESSAGE":[104,105,255]})");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->message, std::string("hi\xff"));
  EXPECT_FALSE(bytes->realtime);

  auto none = parse_journal_json(R"({"MESSAGE":null})");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_message);
}

TEST(JournalJson, BadLinesAreErrors) {
  EXPECT_EQ(parse_journal_json("not json").error().code, "BUNDLE_E_JSON");
  EXPECT_EQ(parse_journal_json("[1,2]").error().code, "BUNDLE_E_JSON");
  auto bad = parse_journal_json(R"({"__REALTIME_TIMESTAMP":"12x"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("__REALTIME_TIMESTAMP"), std::string::npos);
  EXPECT_FALSE(parse_journal_json(R"({"ATTRIB_COUNT":"0"})").ok());
}

}  // namespace
}  // namespace attrib::rules
