// The archive's compact raw lines (rules/raw_lines.h) and their way back into bundle v1
// files (rules/bundle_export.h archive_files / archived_bundle_files).
#include "rules/evidence/raw_lines.h"

#include <gtest/gtest.h>

#include "rules/evidence/bundle_export.h"

namespace attrib::rules {
namespace {

std::vector<LogLine> read_back(const RawLines& raw) {
  std::vector<LogLine> lines;
  raw.for_each([&](const LogLine& line) { lines.push_back(line); });
  return lines;
}

bool same(const LogLine& a, const LogLine& b) {
  return a.node == b.node && a.source == b.source && a.time == b.time && a.seq == b.seq && a.trusted == b.trusted &&
         a.text == b.text;
}

// Every field comes back as added, whatever the order of seqs and times: going back,
// jumping by the whole range, undated between dated, empty text, any bytes in it.
TEST(RawLines, EveryFieldRoundTrips) {
  const std::vector<LogLine> lines = {
      {"n1", "kernel", 1'796'025'601'000'000, 0, true, "first"},
      {"n1", "kernel", std::nullopt, 1, false, ""},
      {"n1", "kernel", 1'796'025'600'000'000, 7, true, std::string("nul\0and\nnewline\xff", 17)},
      {"n1", "kernel", -5, 3, false, "a time before the epoch, a seq going back"},
      {"n1", "kernel", INT64_MAX, UINT64_MAX, true, "the largest of both"},
      {"n1", "kernel", INT64_MIN, 0, true, std::string(70'000, 'x')},
  };
  const RawLines raw = raw_lines_of(lines);
  EXPECT_EQ(raw.size(), lines.size());
  const auto back = read_back(raw);
  ASSERT_EQ(back.size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_TRUE(same(back[i], lines[i])) << "line " << i;
}

// Streams come back in (node, source) order, each in the order its lines were added,
// interleaved or not.
TEST(RawLines, StreamsAreKeptApart) {
  RawLines raw;
  raw.add({"n2", "syslog", 10, 0, true, "b0"});
  raw.add({"n1", "kernel", 20, 0, true, "a0"});
  raw.add({"n2", "syslog", 30, 1, true, "b1"});
  raw.add({"n1", "kernel", 40, 1, true, "a1"});
  std::vector<std::string> order;
  raw.for_each([&](const LogLine& line) { order.push_back(line.node + "/" + line.source + ":" + line.text); });
  EXPECT_EQ(order, (std::vector<std::string>{"n1/kernel:a0", "n1/kernel:a1", "n2/syslog:b0", "n2/syslog:b1"}));
}

// A stream both the head's collector and the node's agent read: the second read's lines
// follow the first's, each field intact (the records continue from the first's last line).
TEST(RawLines, AppendingAStreamReadTwiceKeepsBothReads) {
  RawLines head = raw_lines_of({{"n1", "kernel", 1000, 0, true, "h0"}, {"n1", "kernel", 2000, 1, true, "h1"}});
  RawLines agent = raw_lines_of({{"n1", "kernel", 500, 0, true, "g0"}, {"n1", "syslog", std::nullopt, 4, false, "s4"}});
  head.append(std::move(agent));
  EXPECT_TRUE(agent.empty());
  const auto back = read_back(head);
  ASSERT_EQ(back.size(), 4u);
  EXPECT_TRUE(same(back[2], {"n1", "kernel", 500, 0, true, "g0"}));
  EXPECT_TRUE(same(back[3], {"n1", "syslog", std::nullopt, 4, false, "s4"}));
}

// A damaged archive is an error naming the record, at whatever byte it was cut, never a
// read past the end; a stray flag is refused too.
TEST(RawLines, DamagedRecordsAreAnErrorNamingTheRecord) {
  RawStream stream;
  stream.add(0, 1'796'025'601'000'000, true, "first line");
  stream.add(1, std::nullopt, false, "second line");
  const std::string& records = stream.records();
  const auto count = [](std::string_view bytes) {
    size_t n = 0;
    auto decoded = RawStream::decode(bytes, [&](uint64_t, std::optional<TimeUs>, bool, std::string_view) { ++n; });
    return decoded.ok() ? Result<size_t>(n) : Result<size_t>(decoded.error());
  };
  ASSERT_EQ(count(records).value(), 2u);
  size_t first_record_end = 0;
  for (size_t cut = 1; cut < records.size(); ++cut) {
    auto n = count(std::string_view(records).substr(0, cut));
    if (n.ok()) {  // only at the end of the first record
      EXPECT_EQ(*n, 1u);
      first_record_end = cut;
      continue;
    }
    EXPECT_EQ(n.error().code, "EVIDENCE_E_UNPACK");
    EXPECT_NE(n.error().message.find(cut < first_record_end || first_record_end == 0 ? "record 1" : "record 2"),
              std::string::npos)
        << n.error().message;
  }
  EXPECT_GT(first_record_end, 0u);
  std::string stray = records;
  stray[1] = '\x40';  // the first record's flags byte (its seq delta is one byte)
  EXPECT_EQ(count(stray).error().code, "EVIDENCE_E_UNPACK");
}

JobFacts job() {
  JobFacts facts;
  facts.job_id = "4242";
  facts.cluster = "lab";
  facts.state = "FAILED";
  facts.exit_code = 1;
  facts.nodes = {"n1"};
  return facts;
}

// The archive packs records, a fraction of the journal JSON they become; read back, they
// are that JSON, and a stream read twice is one line with ATTRIB_COUNT, in seq order.
TEST(ArchivedBundle, RecordsBecomeTheJournalJsonOfTheBundle) {
  RawEvidence raw;
  raw.lines = raw_lines_of({{"n1", "kernel", 2'000'000, 1, true, "second"},
                            {"n1", "kernel", 1'000'000, 0, true, "first"},
                            {"n1", "kernel", 2'000'000, 1, true, "second"}});
  Coverage read;
  read.node = "n1";
  read.source = "syslog";
  read.status = CoverageStatus::Empty;
  raw.coverage = {read};
  auto archived = archive_files(job(), raw);
  ASSERT_TRUE(archived.ok()) << archived.error().message;
  EXPECT_TRUE(archived->contains("n1/kernel.attrib-lines"));
  EXPECT_TRUE(archived->contains("n1/syslog.attrib-lines"));  // read, nothing said
  EXPECT_FALSE(archived->contains("n1/kernel.jsonl"));

  auto bundle = archived_bundle_files(*archived);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  EXPECT_FALSE(bundle->contains("n1/kernel.attrib-lines"));
  EXPECT_EQ(bundle->at("n1/kernel.jsonl"),
            "{\"ATTRIB_SEQ\":\"0\",\"MESSAGE\":\"first\",\"_HOSTNAME\":\"n1\",\"_TRANSPORT\":\"kernel\","
            "\"__REALTIME_TIMESTAMP\":\"1000000\"}\n"
            "{\"ATTRIB_COUNT\":\"2\",\"ATTRIB_SEQ\":\"1\",\"MESSAGE\":\"second\",\"_HOSTNAME\":\"n1\","
            "\"_TRANSPORT\":\"kernel\",\"__REALTIME_TIMESTAMP\":\"2000000\"}\n");
  EXPECT_EQ(bundle->at("n1/syslog.jsonl"), "");
  EXPECT_EQ(bundle->at("job.json"), archived->at("job.json"));
  EXPECT_EQ(bundle->at(kCoverageFile), archived->at(kCoverageFile));
  EXPECT_EQ(*bundle, raw_bundle_files(job(), raw).value());
}

TEST(ArchivedBundle, RecordsAreSmallerThanTheirJson) {
  RawEvidence raw;
  for (uint64_t i = 0; i < 1000; ++i)
    raw.lines.add({"n1", "kernel", static_cast<TimeUs>(1'796'025'601'000'000 + i * 59'000), i, true,
                   "a payload of some sixty bytes, as a kernel line has " + std::to_string(i)});
  const auto archived = archive_files(job(), raw).value();
  const auto bundle = archived_bundle_files(archived).value();
  EXPECT_LT(archived.at("n1/kernel.attrib-lines").size() * 2, bundle.at("n1/kernel.jsonl").size());
}

// An archive from before the records holds .jsonl files: they are kept as they are. A
// stream in both forms, or a records file that is not <node>/<source>, is damage.
TEST(ArchivedBundle, OlderArchivesPassAndDamageIsNamed) {
  const BundleFiles older = {{"job.json", "{}\n"}, {"n1/kernel.jsonl", "{\"MESSAGE\":\"x\"}\n"}};
  EXPECT_EQ(archived_bundle_files(older).value(), older);

  BundleFiles both = older;
  both["n1/kernel.attrib-lines"] = "";
  auto twice = archived_bundle_files(both);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, "EVIDENCE_E_UNPACK");
  EXPECT_NE(twice.error().message.find("n1/kernel.attrib-lines"), std::string::npos) << twice.error().message;

  for (const char* name : {"kernel.attrib-lines", "n1/nosuchsource.attrib-lines", "../x/kernel.attrib-lines"})
    EXPECT_EQ(archived_bundle_files({{name, ""}}).error().code, "EVIDENCE_E_UNPACK") << name;
  EXPECT_EQ(archived_bundle_files({{"n1/kernel.attrib-lines", "\x02"}}).error().code, "EVIDENCE_E_UNPACK");
}

}  // namespace
}  // namespace attrib::rules
