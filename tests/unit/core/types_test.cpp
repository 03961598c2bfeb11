#include "core/types.h"

#include <gtest/gtest.h>

#include "rules/sha256.h"

namespace attrib {
namespace {

TEST(CoverageStatus, NamesMatchTheVerdictContract) {
  EXPECT_STREQ(to_string(CoverageStatus::Ok), "ok");
  EXPECT_STREQ(to_string(CoverageStatus::Empty), "empty");
  EXPECT_STREQ(to_string(CoverageStatus::Partial), "partial");
  EXPECT_STREQ(to_string(CoverageStatus::Failed), "failed");
  EXPECT_STREQ(to_string(CoverageStatus::Timeout), "timeout");
  EXPECT_STREQ(to_string(CoverageStatus::Unavailable), "unavailable");
  EXPECT_STREQ(to_string(CoverageStatus::NotConfigured), "not_configured");
  EXPECT_STREQ(to_string(CoverageStatus::Refused), "refused");
  // Every name reads back; an unknown one is not guessed.
  for (auto s : {CoverageStatus::Ok, CoverageStatus::Empty, CoverageStatus::Partial, CoverageStatus::Failed,
                 CoverageStatus::Timeout, CoverageStatus::Unavailable, CoverageStatus::NotConfigured,
                 CoverageStatus::Refused})
    EXPECT_EQ(coverage_status_from(to_string(s)), s);
  EXPECT_EQ(coverage_status_from("skipped"), std::nullopt);
}

TEST(FormatTime, IsoUtcWithMicroseconds) {
  EXPECT_EQ(format_time(0), "1970-01-01T00:00:00.000000Z");
  // 2026-11-30T10:03:12.123456Z
  EXPECT_EQ(format_time(1796032992123456LL), "2026-11-30T10:03:12.123456Z");
  EXPECT_EQ(format_time(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(format_time(951782400000000LL), "2000-02-29T00:00:00.000000Z");
}

TEST(ParseIsoTime, AcceptsTheFormsUsedInJobJsonAndVerdicts) {
  EXPECT_EQ(parse_iso_time("2026-11-30T10:03:12.123456Z"), 1796032992123456LL);
  EXPECT_EQ(parse_iso_time("2026-11-30T10:03:12Z"), 1796032992000000LL);
  EXPECT_EQ(parse_iso_time("2026-11-30T11:03:12+01:00"), 1796032992000000LL);
  EXPECT_EQ(parse_iso_time("2026-11-30T05:03:12.5-05:00"), 1796032992500000LL);
  EXPECT_EQ(parse_iso_time("2025-01-25T10:34:54,859532+00:00"), parse_iso_time("2025-01-25T10:34:54.859532Z"));
  EXPECT_EQ(parse_iso_time("2026-11-30T10:03:12.1234567Z"), 1796032992123456LL);  // truncated to micros
}

TEST(ParseIsoTime, RejectsAnythingElse) {
  for (const char* bad : {"", "2026-11-30", "2026-11-30T10:03:12", "2026-11-30 10:03:12Z", "2026-13-01T00:00:00Z",
                          "2026-02-30T00:00:00Z", "2026-11-30T25:00:00Z", "2026-11-30T10:03:12.Z",
                          "2026-11-30T10:03:12Zjunk", "Nov 30 10:03:12", "2026-11-30T10:03:12+1:00"}) {
    EXPECT_FALSE(parse_iso_time(bad).has_value()) << bad;
  }
}

TEST(ParseIsoTime, RoundTripsFormatTime) {
  for (TimeUs t : {0LL, 1LL, 1796032992123456LL, 4102444799999999LL, -86400000001LL}) {
    EXPECT_EQ(parse_iso_time(format_time(t)), t) << t;
  }
}

TEST(Sha256, KnownVectors) {
  {
    rules::detail::Sha256 h;
    EXPECT_EQ(h.finish_hex(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  }
  {
    rules::detail::Sha256 h;
    h.update("abc");
    EXPECT_EQ(h.finish_hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  }
  {
    rules::detail::Sha256 h;  // two blocks, fed in pieces
    h.update("abcdbcdecdefdefgefghfghighijhijkijkljklm");
    h.update("klmnlmnomnopnopq");
    EXPECT_EQ(h.finish_hex(), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  }
}

}  // namespace
}  // namespace attrib
