// Evidence bundle reading (rules/bundle.h): job.json, streams, trust,
// timestamps across files, window filtering, coverage and the errors of bad bundles,
// from a directory and from the same files in memory.
#include <gtest/gtest.h>

#include "core/utf8.h"
#include "rules/evidence/bundle.h"
#include "tests/support/bundle_test_support.h"
#include "tests/support/rule_test_support.h"

namespace attrib::rules {
namespace {

using test::at;
using test::TempDir;
using test::write_file;
using test::write_text;

const char* kJob = R"({"job_id":"4242","cluster":"lab","state":"FAILED","exit_code":1,
  "start":"2026-11-30T10:00:00Z","end":"2026-11-30T10:20:00Z","nodes":["gpu001","gpu017"]})";

std::vector<LogLine> read_all(const Bundle& bundle, std::vector<Coverage>* coverage = nullptr) {
  std::vector<LogLine> lines;
  auto c = read_bundle_lines(bundle, [&](const LogLine& l) { lines.push_back(l); });
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  if (c.ok() && coverage) *coverage = *c;
  return lines;
}

const Coverage* row(const std::vector<Coverage>& coverage, const std::string& node, const std::string& source) {
  for (const auto& c : coverage)
    if (c.node == node && c.source == source) return &c;
  return nullptr;
}

// Everything a LogLine carries, to compare two reads of the same evidence.
std::vector<std::string> described(const std::vector<LogLine>& lines) {
  std::vector<std::string> out;
  for (const LogLine& l : lines)
    out.push_back(l.node + "|" + l.source + "|" + (l.time ? std::to_string(*l.time) : "-") + "|" +
                  std::to_string(l.seq) + "|" + (l.trusted ? "trusted" : "untrusted") + "|" + l.text);
  return out;
}

std::vector<std::string> described(const std::vector<Coverage>& coverage) {
  std::vector<std::string> out;
  for (const Coverage& c : coverage) out.push_back(to_json(c).dump());
  return out;
}

TEST(BundleReader, ReadsJobFactsAndSortedStreams) {
  TempDir dir;
  write_text(dir.path() / "job.json",
             R"({"job_id":"4242_7","cluster":"lab","attempt":1,"state":"TIMEOUT","exit_code":0,"signal":15,
                 "start":"2026-11-30T10:00:00Z","end":"2026-11-30T10:20:00Z","nodes":["gpu017","gpu001"],
                 "ranks":{"0":"gpu001","1":"gpu017"},"extra_field":"ignored"})");
  write_file(dir.path() / "gpu017" / "kernel.log", {"x"});
  write_file(dir.path() / "gpu001" / "app.rank0.log", {"y"});
  write_file(dir.path() / "gpu001" / "app.log", {"z"});
  write_text(dir.path() / "expected.json", "{}");  // top-level files are not evidence
  auto b = open_bundle(dir.path());
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->job.job_id, "4242_7");
  EXPECT_EQ(b->job.attempt, 1);
  EXPECT_EQ(b->job.state, "TIMEOUT");
  EXPECT_EQ(b->job.signal, 15);
  EXPECT_EQ(b->job.ranks.at(1), "gpu017");
  EXPECT_EQ(b->window_start, at("2026-11-30T09:55:00Z"));  // the daemon's default lead and grace
  EXPECT_EQ(b->window_end, at("2026-11-30T10:21:00Z"));
  ASSERT_EQ(b->files.size(), 3u);
  EXPECT_EQ(b->files[0].source, "app");
  EXPECT_EQ(b->files[1].source, "app.rank0");
  EXPECT_EQ(b->files[2].host, "gpu017");
}

TEST(BundleReader, OnlyJobIdAndNodesAreRequired) {
  TempDir dir;
  write_text(dir.path() / "job.json", R"({"job_id":"7","nodes":["n1"]})");
  write_file(dir.path() / "n1" / "kernel.log", {"2020-01-01T00:00:00Z very old line"});
  auto b = open_bundle(dir.path());
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->job.state, "UNKNOWN");
  EXPECT_FALSE(b->window_start);
  EXPECT_EQ(read_all(*b).size(), 1u);  // no times: no window filtering
}

TEST(BundleReader, BadBundlesAreErrorsNamingTheProblem) {
  {
    TempDir dir;
    auto b = open_bundle(dir.path() / "missing");
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.error().code, "BUNDLE_E_IO");
  }
  {
    TempDir dir;
    write_file(dir.path() / "n1" / "kernel.log", {"x"});
    auto b = open_bundle(dir.path());
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.error().code, "BUNDLE_E_IO");
    EXPECT_NE(b.error().message.find("job.json"), std::string::npos);
  }
  const std::vector<std::pair<std::string, std::string>> bad_jobs = {
      {"{", "not JSON"},
      {R"({"nodes":["n1"]})", "job_id"},
      {R"({"job_id":"1"})", "nodes"},
      {R"({"job_id":"1","nodes":"n1"})", "nodes"},
      {R"({"job_id":"1","nodes":["n1"],"start":"yesterday"})", "start"},
      {R"({"job_id":"1","nodes":["n1"],"exit_code":"one"})", "exit_code"},
      {R"({"job_id":"1","nodes":["n1"],"ranks":{"x":"n1"}})", "ranks"},
      {R"({"job_id":"1","nodes":["n1"],"utc_offset":"2h"})", "utc_offset"},
  };
  for (const auto& [text, field] : bad_jobs) {
    TempDir dir;
    write_text(dir.path() / "job.json", text);
    auto b = open_bundle(dir.path());
    ASSERT_FALSE(b.ok()) << text;
    EXPECT_EQ(b.error().code, "BUNDLE_E_JOB") << text;
    EXPECT_NE(b.error().message.find(field), std::string::npos) << b.error().message;
  }
  {
    TempDir dir;
    write_text(dir.path() / "job.json", kJob);
    write_file(dir.path() / "gpu001" / "dmesg.log", {"x"});
    auto b = open_bundle(dir.path());
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.error().code, "BUNDLE_E_SOURCE");
    EXPECT_NE(b.error().message.find("gpu001/dmesg.log"), std::string::npos);
    EXPECT_NE(b.error().message.find("unknown source 'dmesg'"), std::string::npos);
  }
  {
    TempDir dir;
    write_text(dir.path() / "job.json", kJob);
    write_file(dir.path() / "gpu001" / "kernel.txt", {"x"});
    EXPECT_EQ(open_bundle(dir.path()).error().code, "BUNDLE_E_SOURCE");
  }
  {
    TempDir dir;
    write_text(dir.path() / "job.json", kJob);
    write_file(dir.path() / "gpu001" / "kernel.log", {"x"});
    write_file(dir.path() / "gpu001" / "kernel.jsonl", {"{}"});
    EXPECT_EQ(open_bundle(dir.path()).error().code, "BUNDLE_E_SOURCE");
  }
  {
    TempDir dir;
    write_text(dir.path() / "job.json", kJob);
    write_file(dir.path() / "gpu001" / "kernel.jsonl", {R"({"MESSAGE":"ok"})", "not json"});
    auto b = open_bundle(dir.path());
    ASSERT_TRUE(b.ok());
    auto lines = read_bundle_lines(*b, [](const LogLine&) {});
    ASSERT_FALSE(lines.ok());
    EXPECT_EQ(lines.error().code, "BUNDLE_E_JSON");
    EXPECT_NE(lines.error().message.find("kernel.jsonl:2:"), std::string::npos) << lines.error().message;
  }
}

TEST(BundleReader, TrustFollowsTheSource) {
  TempDir dir;
  write_text(dir.path() / "job.json", kJob);
  write_file(dir.path() / "gpu001" / "kernel.log", {"k"});
  write_file(dir.path() / "gpu001" / "syslog.log", {"s"});
  write_file(dir.path() / "gpu001" / "slurm.log", {"l"});
  write_file(dir.path() / "gpu001" / "app.log", {"a"});
  write_file(dir.path() / "gpu001" / "app.rank3.log", {"r"});
  write_file(dir.path() / "gpu017" / "fabricmanager.jsonl",
             {R"({"MESSAGE":"root","_UID":"0"})", R"({"MESSAGE":"user","_UID":"1000"})"});
  write_file(dir.path() / "gpu017" / "kernel.jsonl",
             {R"({"MESSAGE":"ring","_TRANSPORT":"kernel"})", R"({"MESSAGE":"logger","_TRANSPORT":"syslog"})"});
  auto b = open_bundle(dir.path());
  ASSERT_TRUE(b.ok());
  std::map<std::string, bool> trusted;
  for (const auto& l : read_all(*b)) trusted[l.text] = l.trusted;
  EXPECT_TRUE(trusted.at("k"));
  EXPECT_TRUE(trusted.at("s"));
  EXPECT_TRUE(trusted.at("l"));
  EXPECT_FALSE(trusted.at("a"));
  EXPECT_FALSE(trusted.at("r"));
  EXPECT_TRUE(trusted.at("root"));
  EXPECT_FALSE(trusted.at("user"));
  EXPECT_TRUE(trusted.at("ring"));
  EXPECT_FALSE(trusted.at("logger"));
}

TEST(BundleReader, DmesgUptimeGetsTheBootTimePairedInAnotherFile) {
  TempDir dir;
  write_text(dir.path() / "job.json", kJob);
  // syslog pairs wall clock 10:03:11 with uptime 74888.5 -> boot at 10:03:11 - 74888.5 s.
  write_file(dir.path() / "gpu017" / "syslog.log", {"Nov 30 10:03:11 gpu017 kernel: [74888.500000] first"});
  write_file(dir.path() / "gpu017" / "kernel.log", {"[74889.644138] later", "no stamp at all"});
  auto b = open_bundle(dir.path());
  ASSERT_TRUE(b.ok());
  std::map<std::string, LogLine> by_text;
  for (const auto& l : read_all(*b)) by_text[l.text] = l;
  EXPECT_EQ(by_text.at("first").time, at("2026-11-30T10:03:11Z"));
  EXPECT_EQ(by_text.at("later").time, at("2026-11-30T10:03:12.144138Z"));
  EXPECT_FALSE(by_text.at("no stamp at all").time);
  EXPECT_EQ(by_text.at("no stamp at all").seq, 1u);  // its position in the stream
}

TEST(BundleReader, DisagreeingBootTimesLeaveDmesgLinesUntimed) {
  TempDir dir;
  write_text(dir.path() / "job.json", kJob);
  // A reboot inside the window: two pairings an hour apart.
  write_file(dir.path() / "gpu017" / "syslog.log",
             {"Nov 30 10:01:00 gpu017 kernel: [5000.000000] a", "Nov 30 10:02:00 gpu017 kernel: [10.000000] b"});
  write_file(dir.path() / "gpu017" / "kernel.log", {"[20.000000] bare"});
  auto b = open_bundle(dir.path());
  ASSERT_TRUE(b.ok());
  std::vector<Coverage> coverage;
  for (const auto& l : read_all(*b, &coverage))
    if (l.text == "bare") {
      EXPECT_FALSE(l.time);
    }
  const Coverage* k = row(coverage, "gpu017", "kernel");
  ASSERT_NE(k, nullptr);
  EXPECT_NE(k->detail.find("without a boot time"), std::string::npos) << k->detail;
}

TEST(BundleReader, YearComesFromDatedLinesWhenJobJsonHasNoTimes) {
  TempDir dir;
  write_text(dir.path() / "job.json", R"({"job_id":"1","nodes":["n1"]})");
  write_file(dir.path() / "n1" / "fabricmanager.log", {"[Dec 31 2025 23:59:00] [INFO] [tid 1] fm"});
  write_file(dir.path() / "n1" / "kernel.log", {"Jan  1 00:00:05 n1 kernel: next year"});
  auto b = open_bundle(dir.path());
  ASSERT_TRUE(b.ok());
  for (const auto& l : read_all(*b))
    if (l.text == "next year") {
      EXPECT_EQ(l.time, at("2026-01-01T00:00:05Z"));
    }
}

TEST(BundleReader, WindowFilteringAndCoverage) {
  TempDir dir;
  write_text(dir.path() / "job.json", R"({"job_id":"4242","state":"FAILED","exit_code":1,
    "start":"2026-11-30T10:00:00Z","end":"2026-11-30T10:20:00Z","nodes":["gpu001","gpu002","gpu003"]})");
  write_file(dir.path() / "gpu001" / "kernel.log",
             {"2026-11-30T08:00:00Z n k: too early", "2026-11-30T10:05:00Z n k: inside", "", "untimed"});
  write_file(dir.path() / "gpu001" / "app.log", {"a"});
  write_file(dir.path() / "gpu002" / "kernel.log", {});
  write_file(dir.path() / "head" / "slurm.log", {"[2026-11-30T10:11:00.120] Killing JobId=4242 on failed node gpu003"});
  auto b = open_bundle(dir.path());
  ASSERT_TRUE(b.ok());
  std::vector<Coverage> coverage;
  auto lines = read_all(*b, &coverage);
  std::set<std::string> texts;
  for (const auto& l : lines) texts.insert(l.text);
  EXPECT_EQ(texts, (std::set<std::string>{"inside", "untimed", "a", "Killing JobId=4242 on failed node gpu003"}));

  const Coverage* k1 = row(coverage, "gpu001", "kernel");
  ASSERT_NE(k1, nullptr);
  EXPECT_EQ(k1->status, CoverageStatus::Ok);
  EXPECT_EQ(k1->lines, 2u);
  EXPECT_NE(k1->detail.find("1 line outside the evidence window"), std::string::npos);
  EXPECT_EQ(row(coverage, "gpu002", "kernel")->status, CoverageStatus::Empty);
  EXPECT_EQ(row(coverage, "gpu002", "app"), nullptr);  // a node with a directory: only what it holds
  EXPECT_EQ(row(coverage, "gpu003", "app")->status, CoverageStatus::Unavailable);  // others have app output
  EXPECT_EQ(row(coverage, "gpu003", "kernel")->status, CoverageStatus::Unavailable);
  EXPECT_NE(row(coverage, "gpu003", "kernel")->detail.find("no gpu003/ directory"), std::string::npos);
  EXPECT_EQ(row(coverage, "head", "slurm")->status, CoverageStatus::Ok);  // a host outside the job is kept
  EXPECT_EQ(row(coverage, "head", "kernel"), nullptr);                    // ...but never reported missing
}

TEST(BundleReader, InvalidUtf8IsReplacedNotFatal) {
  TempDir dir;
  write_text(dir.path() / "job.json", kJob);
  write_text(dir.path() / "gpu001" / "app.log", "bad \xff\xfe byte\r\n");
  auto b = open_bundle(dir.path());
  ASSERT_TRUE(b.ok());
  auto lines = read_all(*b);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, "bad \xEF\xBF\xBD\xEF\xBF\xBD byte");
  auto verdict = replay_bundle(dir.path(), test::shipped_pack());
  ASSERT_TRUE(verdict.ok());
  EXPECT_NO_THROW(to_json(*verdict).dump());
}

// A replayed line is repaired exactly as the daemon's engine repairs a collected one
// (core/utf8.h): a cut-off sequence is one U+FFFD, not one per byte.
TEST(BundleReader, InvalidUtf8IsRepairedAsTheEngineRepairsIt) {
  TempDir dir;
  write_text(dir.path() / "job.json", kJob);
  const std::string raw = "cut \xE2\x82 off, lone \x80, ok \xE2\x82\xAC";
  write_text(dir.path() / "gpu001" / "app.log", raw + "\n");
  auto b = open_bundle(dir.path());
  ASSERT_TRUE(b.ok());
  auto lines = read_all(*b);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, to_valid_utf8(raw));
  EXPECT_EQ(lines[0].text, "cut \xEF\xBF\xBD off, lone \xEF\xBF\xBD, ok \xE2\x82\xAC");
}

// The attribution API and the tools open a bundle from its files in memory: it reads as
// the same files in a directory read, line for line, coverage row for row, verdict for
// verdict (dmesg times from another stream, '\r' line ends, journal JSON, a job node
// without files, a top-level file that is not evidence).
TEST(BundleReader, FilesInMemoryReadAsTheSameFilesInADirectory) {
  const BundleFiles files = {
      {"job.json", R"({"job_id":"4242","state":"FAILED","exit_code":1,"start":"2026-11-30T10:00:00Z",
                      "end":"2026-11-30T10:20:00Z","nodes":["gpu001","gpu017","gpu003"]})"},
      {"expected.json", "{}"},
      {"gpu001/app.log", "a\r\nb\r\n"},
      {"gpu017/syslog.log", "Nov 30 10:03:11 gpu017 kernel: [74888.500000] first\n"},
      {"gpu017/kernel.log", "[74889.644138] later\nno stamp at all\n2026-11-30T08:00:00Z n k: too early\n"},
      {"gpu017/fabricmanager.jsonl", R"({"MESSAGE":"root","_UID":"0"})" "\n" R"({"MESSAGE":"user","_UID":"1000"})"},
  };
  TempDir dir;
  for (const auto& [name, content] : files) write_text(dir.path() / name, content);
  auto from_dir = open_bundle(dir.path());
  ASSERT_TRUE(from_dir.ok()) << from_dir.error().message;
  auto in_memory = open_bundle(files);
  ASSERT_TRUE(in_memory.ok()) << in_memory.error().message;

  EXPECT_TRUE(in_memory->dir.empty());
  EXPECT_EQ(in_memory->hosts, from_dir->hosts);
  ASSERT_EQ(in_memory->files.size(), from_dir->files.size());
  for (size_t i = 0; i < in_memory->files.size(); ++i) {
    EXPECT_EQ(in_memory->files[i].path.string(), from_dir->files[i].path.lexically_relative(dir.path()).string());
    EXPECT_EQ(in_memory->files[i].journal_json, from_dir->files[i].journal_json);
    EXPECT_EQ(in_memory->files[i].content, from_dir->files[i].content);
  }
  std::vector<Coverage> dir_coverage, memory_coverage;
  const std::vector<LogLine> dir_lines = read_all(*from_dir, &dir_coverage);
  EXPECT_EQ(dir_lines.size(), 7u);  // all but the line before the window
  EXPECT_EQ(described(read_all(*in_memory, &memory_coverage)), described(dir_lines));
  EXPECT_EQ(described(memory_coverage), described(dir_coverage));
  ASSERT_NE(row(memory_coverage, "gpu003", "kernel"), nullptr);
  EXPECT_EQ(row(memory_coverage, "gpu003", "kernel")->status, CoverageStatus::Unavailable);

  auto dir_verdict = replay_bundle(*from_dir, test::shipped_pack());
  auto memory_verdict = replay_bundle(*in_memory, test::shipped_pack());
  ASSERT_TRUE(dir_verdict.ok() && memory_verdict.ok());
  EXPECT_EQ(to_json(*memory_verdict).dump(), to_json(*dir_verdict).dump());
}

TEST(BundleReader, BadFilesInMemoryAreTheDirectoryErrorsNamingTheRelativePath) {
  auto no_job = open_bundle(BundleFiles{{"gpu001/kernel.log", "x\n"}});
  ASSERT_FALSE(no_job.ok());
  EXPECT_EQ(no_job.error().code, "BUNDLE_E_IO");
  EXPECT_NE(no_job.error().message.find("job.json"), std::string::npos);
  struct Bad {
    BundleFiles files;
    std::string code;
    std::string named;  // what the message must say
  };
  const std::vector<Bad> bad = {
      {{{"job.json", "{"}}, "BUNDLE_E_JOB", "job.json: not JSON"},
      {{{"job.json", kJob}, {"coverage.json", "{}"}}, "BUNDLE_E_JOB", "coverage.json"},
      {{{"job.json", kJob}, {"gpu001/dmesg.log", "x\n"}}, "BUNDLE_E_SOURCE", "gpu001/dmesg.log: unknown source"},
      {{{"job.json", kJob}, {"gpu001/kernel.txt", "x\n"}}, "BUNDLE_E_SOURCE", "gpu001/kernel.txt"},
      {{{"job.json", kJob}, {"gpu001/kernel.log", "x\n"}, {"gpu001/kernel.jsonl", "{}\n"}}, "BUNDLE_E_SOURCE",
       "appears twice"},
      {{{"job.json", kJob}, {"gpu001/sub/kernel.log", "x\n"}}, "BUNDLE_E_HOST", "gpu001/sub/kernel.log"},
  };
  for (const Bad& b : bad) {
    auto opened = open_bundle(b.files);
    ASSERT_FALSE(opened.ok()) << b.named;
    EXPECT_EQ(opened.error().code, b.code) << opened.error().message;
    EXPECT_NE(opened.error().message.find(b.named), std::string::npos) << opened.error().message;
  }
  auto opened =
      open_bundle(BundleFiles{{"job.json", kJob}, {"gpu001/kernel.jsonl", R"({"MESSAGE":"ok"})" "\nnot json\n"}});
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  auto lines = read_bundle_lines(*opened, [](const LogLine&) {});
  ASSERT_FALSE(lines.ok());
  EXPECT_EQ(lines.error().code, "BUNDLE_E_JSON");
  EXPECT_NE(lines.error().message.find("gpu001/kernel.jsonl:2:"), std::string::npos) << lines.error().message;
}

}  // namespace
}  // namespace attrib::rules
