// The journald collector against real journal files: each test writes entries with
// scripts/journal-inject.sh (systemd-journal-remote) into a fresh directory and reads
// them back through sd-journal.
#include "collectors/journald_collector.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/line_run.h"
#include "tests/support/test_paths.h"

namespace attrib {
// Lets GoogleTest print statuses by name in failure messages.
void PrintTo(CoverageStatus status, std::ostream* os) { *os << to_string(status); }
}  // namespace attrib

namespace attrib::collectors {
namespace {

namespace fs = std::filesystem;

constexpr TimeUs kSecond = 1'000'000;
constexpr TimeUs kWindowStart = 1'764'496'800'000'000;  // 2025-11-30T10:00:00Z
constexpr TimeUs kWindowEnd = kWindowStart + 600 * kSecond;
constexpr const char* kBootA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
constexpr const char* kBootB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "attrib-journald-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// What journal-inject.sh is told about the entries of one call (chainable setters).
struct Entry {
  std::string host = "n2";
  std::string transport = "kernel";
  std::string identifier;
  int uid = 0;
  TimeUs time = kWindowStart;
  std::string boot_id;

  Entry& on(std::string value) {
    host = std::move(value);
    return *this;
  }
  Entry& via(std::string value) {
    transport = std::move(value);
    return *this;
  }
  Entry& id(std::string value) {
    identifier = std::move(value);
    return *this;
  }
  Entry& as_uid(int value) {
    uid = value;
    return *this;
  }
  Entry& at(TimeUs value) {
    time = value;
    return *this;
  }
  Entry& boot(std::string value) {
    boot_id = std::move(value);
    return *this;
  }
  std::vector<std::string> fields;  // extra KEY=VALUE fields
  Entry& field(std::string value) {
    fields.push_back(std::move(value));
    return *this;
  }
};

// Writes `messages` (1 µs apart from entry.time) as one new journal file in `dir`.
int inject_rc(const fs::path& dir, const Entry& entry, const std::vector<std::string>& messages) {
  std::string command = std::string(attrib::test::scripts_dir()) + "/journal-inject.sh --dir " + shell_quote(dir.string()) +
                        " --host " + shell_quote(entry.host) + " --transport " + shell_quote(entry.transport) +
                        " --uid " + std::to_string(entry.uid) + " --time-us " + std::to_string(entry.time);
  if (!entry.identifier.empty()) command += " --identifier " + shell_quote(entry.identifier);
  if (!entry.boot_id.empty()) command += " --boot-id " + shell_quote(entry.boot_id);
  for (const std::string& field : entry.fields) command += " --field " + shell_quote(field);
  command += " --";
  for (const std::string& message : messages) command += " " + shell_quote(message);
  command += " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void inject(const fs::path& dir, const Entry& entry, const std::vector<std::string>& messages) {
  ASSERT_EQ(inject_rc(dir, entry, messages), 0) << "journal-inject.sh failed";
}

// An entry long before the window, so that n2's journal covers the whole window
// (otherwise coverage is rightly partial).
void inject_history(const fs::path& dir) {
  inject(dir, Entry().at(kWindowStart - 3600 * kSecond), {"journal history of n2"});
}

struct Collected {
  std::vector<LogLine> lines;
  std::vector<Coverage> coverage;

  const Coverage& coverage_of(const std::string& source) const {
    for (const Coverage& c : coverage) {
      if (c.source == source) return c;
    }
    throw std::runtime_error("no coverage for source " + source);
  }
  std::vector<std::string> texts() const {
    std::vector<std::string> out;
    for (const LogLine& line : lines) out.push_back(line.text);
    return out;
  }
};

JournaldOptions options_for(const fs::path& dir, bool match_hostname = true) {
  JournaldOptions options;
  options.directory = dir.string();
  options.match_hostname = match_hostname;
  options.identifiers = {"nv-fabricmanager", "nvidia-persistenced"};
  return options;
}

Collected collect(const JournaldOptions& options, const std::string& node = "n2", TimeUs start = kWindowStart,
                  TimeUs end = kWindowEnd) {
  JournaldCollector collector(options);
  Collected collected;
  CollectRequest request{"4242", node, start, end};
  collected.coverage = collector.collect(request, [&](const LogLine& line) { collected.lines.push_back(line); });
  return collected;
}

TEST(JournaldCollector, KeepsOnlyEntriesInsideTheWindowInclusive) {
  TempDir dir;
  inject(dir.path(), Entry().at(kWindowStart - 10 * kSecond), {"before the window"});
  inject(dir.path(), Entry().at(kWindowStart - 1), {"one microsecond early", "at the window start"});
  inject(dir.path(), Entry().at(kWindowStart + 5 * kSecond),
         {"NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."});
  inject(dir.path(), Entry().at(kWindowEnd), {"at the window end", "one microsecond late"});
  inject(dir.path(), Entry().at(kWindowEnd + 60 * kSecond), {"after the window"});

  const Collected got = collect(options_for(dir.path()));
  EXPECT_EQ(got.texts(), (std::vector<std::string>{"at the window start",
                                                   "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
                                                   "at the window end"}));
  ASSERT_EQ(got.lines.size(), 3u);
  EXPECT_EQ(got.lines[0].time, kWindowStart);
  EXPECT_EQ(got.lines[1].time, kWindowStart + 5 * kSecond);
  EXPECT_EQ(got.lines[2].time, kWindowEnd);
  for (size_t i = 0; i < got.lines.size(); ++i) {
    EXPECT_EQ(got.lines[i].node, "n2");
    EXPECT_EQ(got.lines[i].source, "kernel");
    EXPECT_EQ(got.lines[i].seq, i);
    EXPECT_TRUE(got.lines[i].trusted);
  }
  const Coverage& kernel = got.coverage_of("kernel");
  EXPECT_EQ(kernel.status, CoverageStatus::Ok) << kernel.detail;
  EXPECT_EQ(kernel.lines, 3u);
  EXPECT_EQ(kernel.events, 0u);
  EXPECT_EQ(kernel.node, "n2");
  EXPECT_EQ(kernel.window_start, kWindowStart);
  EXPECT_EQ(kernel.window_end, kWindowEnd);
}

TEST(JournaldCollector, MergesFilesWrittenOutOfOrderIntoTimeOrder) {
  TempDir dir;
  inject(dir.path(), Entry().at(kWindowStart + 1 * kSecond), {"first"});
  inject(dir.path(), Entry().at(kWindowStart + 5 * kSecond), {"fourth"});
  inject(dir.path(), Entry().at(kWindowStart + 3 * kSecond), {"second", "third"});
  const Collected got = collect(options_for(dir.path()));
  EXPECT_EQ(got.texts(), (std::vector<std::string>{"first", "second", "third", "fourth"}));
}

TEST(JournaldCollector, MatchHostnameSelectsOneHostOfACentralDirectory) {
  TempDir dir;
  for (const char* host : {"n1", "n2", "n3"}) {
    inject(dir.path(), Entry().on(host).at(kWindowStart + kSecond), {std::string("kernel line of ") + host});
    inject(dir.path(), Entry().on(host).via("syslog").id("nv-fabricmanager").at(kWindowStart + 2 * kSecond),
           {std::string("fabric manager line of ") + host});
  }

  const Collected n2 = collect(options_for(dir.path(), true), "n2");
  EXPECT_EQ(n2.texts(), (std::vector<std::string>{"kernel line of n2", "fabric manager line of n2"}));

  const Collected n3 = collect(options_for(dir.path(), true), "n3");
  EXPECT_EQ(n3.texts(), (std::vector<std::string>{"kernel line of n3", "fabric manager line of n3"}));

  // A node agent reading its own journal takes every entry as the node's own.
  const Collected all = collect(options_for(dir.path(), false), "n2");
  EXPECT_EQ(all.lines.size(), 6u);
  for (const LogLine& line : all.lines) EXPECT_EQ(line.node, "n2");
}

TEST(JournaldCollector, HostWithoutAnyEntriesIsUnavailable) {
  TempDir dir;
  inject(dir.path(), Entry().on("n1").at(kWindowStart + kSecond), {"kernel line of n1"});
  const Collected got = collect(options_for(dir.path(), true), "n7");
  EXPECT_TRUE(got.lines.empty());
  const Coverage& kernel = got.coverage_of("kernel");
  EXPECT_EQ(kernel.status, CoverageStatus::Unavailable);
  EXPECT_NE(kernel.detail.find("n7"), std::string::npos) << kernel.detail;
}

TEST(JournaldCollector, KernelTransportIsTrustedApplicationOutputIsNot) {
  TempDir dir;
  inject_history(dir.path());
  inject(dir.path(), Entry().at(kWindowStart + 1 * kSecond), {"NVRM: Xid (PCI:0000:3b:00): 79"});
  // A user prints the same text: it must arrive as untrusted application output.
  inject(dir.path(), Entry().via("stdout").id("python3").as_uid(1000).at(kWindowStart + 2 * kSecond),
         {"NVRM: Xid (PCI:0000:3b:00): 79", "RuntimeError: CUDA error"});
  // Root-run persistenced is trusted syslog; the same identifier from a user is not.
  inject(dir.path(), Entry().via("syslog").id("nvidia-persistenced").as_uid(0).at(kWindowStart + 3 * kSecond),
         {"persistence mode enabled"});
  inject(dir.path(), Entry().via("syslog").id("nvidia-persistenced").as_uid(1000).at(kWindowStart + 4 * kSecond),
         {"forged persistenced line"});
  // Neither configured nor kernel transport: not collected, even when it calls itself "kernel".
  inject(dir.path(), Entry().via("syslog").id("sshd").at(kWindowStart + 5 * kSecond), {"sshd line"});
  inject(dir.path(), Entry().via("syslog").id("kernel").as_uid(1000).at(kWindowStart + 6 * kSecond),
         {"user pretending to be the kernel"});

  JournaldOptions options = options_for(dir.path());
  options.app_identifiers = {"python3"};
  const Collected got = collect(options);
  ASSERT_EQ(got.lines.size(), 5u) << testing::PrintToString(got.texts());

  EXPECT_EQ(got.lines[0].source, "kernel");
  EXPECT_TRUE(got.lines[0].trusted);
  EXPECT_EQ(got.lines[0].seq, 0u);

  EXPECT_EQ(got.lines[1].source, "app");
  EXPECT_FALSE(got.lines[1].trusted);
  EXPECT_EQ(got.lines[1].text, "NVRM: Xid (PCI:0000:3b:00): 79");
  EXPECT_EQ(got.lines[1].seq, 0u);
  EXPECT_EQ(got.lines[2].source, "app");
  EXPECT_EQ(got.lines[2].seq, 1u);

  EXPECT_EQ(got.lines[3].source, "syslog");
  EXPECT_TRUE(got.lines[3].trusted);
  EXPECT_EQ(got.lines[4].source, "syslog");
  EXPECT_FALSE(got.lines[4].trusted);
  EXPECT_EQ(got.lines[4].text, "forged persistenced line");

  EXPECT_EQ(got.coverage_of("kernel").lines, 1u);
  EXPECT_EQ(got.coverage_of("app").lines, 2u);
  EXPECT_EQ(got.coverage_of("app").status, CoverageStatus::Ok);
  EXPECT_EQ(got.coverage_of("syslog").lines, 2u);
  EXPECT_EQ(got.coverage_of("fabricmanager").status, CoverageStatus::Empty);
}

// Entries are handed over as runs (collectors/run_builder.h) where the sink takes them:
// consecutive entries of one stream go as one run, a stream change (source or trust)
// starts another, and a message of several lines stays one line. The lines are those a
// line-by-line sink gets, in the same order, with the same times and seqs.
TEST(JournaldCollector, HandsEntriesOverAsRunsThatHoldTheSameLines) {
  TempDir dir;
  inject_history(dir.path());
  inject(dir.path(), Entry().at(kWindowStart + 1 * kSecond), {"kernel one", "kernel two", ""});
  inject(dir.path(), Entry().via("stdout").id("python3").as_uid(1000).at(kWindowStart + 2 * kSecond),
         {"app one", "Traceback (most recent call last):\n  File \"train.py\", line 1", "app three"});
  inject(dir.path(), Entry().via("syslog").id("nvidia-persistenced").as_uid(0).at(kWindowStart + 3 * kSecond),
         {"trusted syslog"});
  inject(dir.path(), Entry().via("syslog").id("nvidia-persistenced").as_uid(1000).at(kWindowStart + 4 * kSecond),
         {"untrusted syslog"});
  inject(dir.path(), Entry().at(kWindowStart + 5 * kSecond), {"kernel three"});
  JournaldOptions options = options_for(dir.path());
  options.app_identifiers = {"python3"};
  const Collected by_line = collect(options);

  JournaldCollector collector(options);
  std::vector<LogLine> from_runs;
  int runs = 0;
  const auto keep = [&](const LogLine& line) { from_runs.push_back(line); };
  const auto coverage =
      collector.collect({"4242", "n2", kWindowStart, kWindowEnd}, LineSink(keep, [&](const LineRun& run) {
                          ++runs;
                          return for_each_line_of(run, keep);
                        }));
  // kernel; app one; (the two-line message alone); app three; trusted syslog; untrusted; kernel
  EXPECT_EQ(runs, 6);
  ASSERT_EQ(by_line.lines.size(), 9u) << testing::PrintToString(by_line.texts());
  ASSERT_EQ(from_runs.size(), by_line.lines.size());
  for (size_t i = 0; i < from_runs.size(); ++i) {
    EXPECT_EQ(from_runs[i].text, by_line.lines[i].text) << i;
    EXPECT_EQ(from_runs[i].time, by_line.lines[i].time) << i;
    EXPECT_EQ(from_runs[i].seq, by_line.lines[i].seq) << i;
    EXPECT_EQ(from_runs[i].source, by_line.lines[i].source) << i;
    EXPECT_EQ(from_runs[i].trusted, by_line.lines[i].trusted) << i;
  }
  EXPECT_EQ(by_line.lines[2].text, "");
  EXPECT_EQ(by_line.lines[4].text, "Traceback (most recent call last):\n  File \"train.py\", line 1");
  EXPECT_EQ(by_line.lines[4].seq, 1u);
  EXPECT_EQ(by_line.lines[8].text, "kernel three");
  EXPECT_EQ(by_line.lines[8].seq, 3u);
  EXPECT_EQ(by_line.lines[7].seq, 1u) << "trusted and untrusted syslog share the syslog stream";
  EXPECT_FALSE(by_line.lines[7].trusted);
  ASSERT_EQ(coverage.size(), by_line.coverage.size());
  for (size_t i = 0; i < coverage.size(); ++i) EXPECT_EQ(coverage[i].lines, by_line.coverage[i].lines);
}

// journald stores every /dev/kmsg record with _TRANSPORT=kernel, and its facility in
// SYSLOG_FACILITY: 0 for the kernel's own, 1 (user) or more for what user space wrote
// there (`echo ... > /dev/kmsg`). Only the kernel's are kernel evidence.
TEST(JournaldCollector, KernelTransportRecordsUserSpaceWroteAreNotKernelEvidence) {
  TempDir dir;
  inject_history(dir.path());
  inject(dir.path(), Entry().field("SYSLOG_FACILITY=0").at(kWindowStart + 1 * kSecond),
         {"NVRM: Xid (PCI:0000:3b:00): 79"});
  inject(dir.path(), Entry().field("SYSLOG_FACILITY=1").at(kWindowStart + 2 * kSecond),
         {"NVRM: Xid (PCI:0000:18:00): 79"});
  const Collected got = collect(options_for(dir.path()));
  ASSERT_EQ(got.lines.size(), 1u) << testing::PrintToString(got.texts());
  EXPECT_EQ(got.lines[0].text, "NVRM: Xid (PCI:0000:3b:00): 79");
  EXPECT_TRUE(got.lines[0].trusted);
  EXPECT_EQ(got.coverage_of("kernel").lines, 1u);
  EXPECT_NE(got.coverage_of("kernel").detail.find("1 user-space records of the kernel transport"), std::string::npos)
      << got.coverage_of("kernel").detail;
}

TEST(JournaldCollector, FabricManagerIdentifierMapsToFabricmanager) {
  TempDir dir;
  inject_history(dir.path());
  const std::string fm_line =
      "[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on "
      "NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33";
  inject(dir.path(), Entry().via("syslog").id("nv-fabricmanager").as_uid(0).at(kWindowStart + kSecond), {fm_line});
  inject(dir.path(), Entry().via("syslog").id("nv-fabricmanager").as_uid(1000).at(kWindowStart + 2 * kSecond),
         {"user logger -t nv-fabricmanager"});
  const Collected got = collect(options_for(dir.path()));
  ASSERT_EQ(got.lines.size(), 2u);
  EXPECT_EQ(got.lines[0].source, "fabricmanager");
  EXPECT_EQ(got.lines[0].text, fm_line);
  EXPECT_TRUE(got.lines[0].trusted);
  EXPECT_EQ(got.lines[1].source, "fabricmanager");
  EXPECT_FALSE(got.lines[1].trusted);
  EXPECT_EQ(got.coverage_of("fabricmanager").status, CoverageStatus::Ok);
  EXPECT_EQ(got.coverage_of("fabricmanager").lines, 2u);
  EXPECT_EQ(got.coverage_of("kernel").status, CoverageStatus::Empty);
}

TEST(JournaldCollector, MultiLineMessagesSurviveTheRoundTrip) {
  TempDir dir;
  inject(dir.path(), Entry().at(kWindowStart + kSecond), {"first line\nsecond line"});
  const Collected got = collect(options_for(dir.path()));
  EXPECT_EQ(got.texts(), (std::vector<std::string>{"first line\nsecond line"}));
}

TEST(JournaldCollector, ReportsOneCoveragePerSourceItReads) {
  TempDir dir;
  inject(dir.path(), Entry().at(kWindowStart - 60 * kSecond), {"older kernel line"});

  JournaldOptions kernel_only = options_for(dir.path());
  kernel_only.identifiers.clear();
  const Collected empty = collect(kernel_only);
  ASSERT_EQ(empty.coverage.size(), 1u);
  EXPECT_EQ(empty.coverage[0].source, "kernel");
  EXPECT_EQ(empty.coverage[0].status, CoverageStatus::Empty) << empty.coverage[0].detail;
  EXPECT_EQ(empty.coverage[0].lines, 0u);

  JournaldOptions everything = options_for(dir.path());
  everything.app_identifiers = {"python3"};
  std::vector<std::string> sources;
  for (const Coverage& c : collect(everything).coverage) sources.push_back(c.source);
  EXPECT_EQ(sources, (std::vector<std::string>{"kernel", "fabricmanager", "syslog", "app"}));
}

TEST(JournaldCollector, MissingDirectoryIsUnavailableAndNamesThePath) {
  TempDir dir;
  const fs::path missing = dir.path() / "no-such-journal";
  const Collected got = collect(options_for(missing));
  EXPECT_TRUE(got.lines.empty());
  ASSERT_EQ(got.coverage.size(), 3u);
  for (const Coverage& c : got.coverage) {
    EXPECT_EQ(c.status, CoverageStatus::Unavailable) << c.source;
    EXPECT_NE(c.detail.find(missing.string()), std::string::npos) << c.detail;
    EXPECT_EQ(c.window_start, kWindowStart);
  }
}

TEST(JournaldCollector, JournalStartingAfterTheWindowStartIsPartial) {
  TempDir dir;
  // Other hosts' older entries must not hide that n2's journal starts late.
  inject(dir.path(), Entry().on("n1").at(kWindowStart - 3600 * kSecond), {"old line of n1"});
  inject(dir.path(), Entry().at(kWindowStart + 30 * kSecond), {"first retained line of n2"});
  const Collected got = collect(options_for(dir.path()));
  EXPECT_EQ(got.lines.size(), 1u);
  const Coverage& kernel = got.coverage_of("kernel");
  EXPECT_EQ(kernel.status, CoverageStatus::Partial);
  EXPECT_EQ(kernel.lines, 1u);
  EXPECT_NE(kernel.detail.find("after the window start"), std::string::npos) << kernel.detail;
  // The sources with no lines are partial too: the missing stretch may have held some.
  EXPECT_EQ(got.coverage_of("fabricmanager").status, CoverageStatus::Partial);

  // With an older entry of n2 itself, the same window is fully covered.
  inject(dir.path(), Entry().at(kWindowStart - 3600 * kSecond), {"old line of n2"});
  EXPECT_EQ(collect(options_for(dir.path())).coverage_of("kernel").status, CoverageStatus::Ok);
}

TEST(JournaldCollector, RebootInsideTheWindowIsPartial) {
  TempDir dir;
  inject(dir.path(), Entry().at(kWindowStart - 60 * kSecond).boot(kBootA), {"boot A, before the window"});
  inject(dir.path(), Entry().at(kWindowStart + 10 * kSecond).boot(kBootA), {"boot A, in the window"});
  inject(dir.path(), Entry().at(kWindowStart + 90 * kSecond).boot(kBootB), {"Linux version 6.1.0 (boot B)"});
  const Collected got = collect(options_for(dir.path()));
  EXPECT_EQ(got.texts(), (std::vector<std::string>{"boot A, in the window", "Linux version 6.1.0 (boot B)"}));
  const Coverage& kernel = got.coverage_of("kernel");
  EXPECT_EQ(kernel.status, CoverageStatus::Partial);
  EXPECT_NE(kernel.detail.find("rebooted"), std::string::npos) << kernel.detail;
  EXPECT_NE(kernel.detail.find(kBootB), std::string::npos) << kernel.detail;
}

TEST(JournaldCollector, RebootBeforeTheWindowIsNotPartial) {
  TempDir dir;
  inject(dir.path(), Entry().at(kWindowStart - 600 * kSecond).boot(kBootA), {"boot A"});
  inject(dir.path(), Entry().at(kWindowStart - 300 * kSecond).boot(kBootB), {"boot B starts"});
  inject(dir.path(), Entry().at(kWindowStart + 10 * kSecond).boot(kBootB), {"boot B, in the window"});
  const Collected got = collect(options_for(dir.path()));
  EXPECT_EQ(got.texts(), (std::vector<std::string>{"boot B, in the window"}));
  EXPECT_EQ(got.coverage_of("kernel").status, CoverageStatus::Ok) << got.coverage_of("kernel").detail;
}

TEST(JournalInjectScript, RejectsBadArguments) {
  TempDir dir;
  EXPECT_NE(inject_rc(dir.path(), Entry().via("carrier-pigeon"), {"x"}), 0);
  EXPECT_NE(inject_rc(dir.path(), Entry().via("stdout"), {"no identifier"}), 0);
  EXPECT_NE(inject_rc(dir.path(), Entry().boot("not-hex"), {"x"}), 0);
  EXPECT_NE(inject_rc(dir.path(), Entry().on("bad host"), {"x"}), 0);
  EXPECT_NE(inject_rc(dir.path(), Entry(), {}), 0);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace attrib::collectors
