// Replay over the golden fixtures: determinism under shuffled file and host order,
// export of archived evidence that replays to the same verdict, and a storm of a
// million identical lines.
#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "rules/evidence/bundle.h"
#include "rules/evidence/bundle_export.h"
#include "rules/evidence/golden.h"
#include "tests/support/bundle_test_support.h"
#include "tests/support/rule_test_support.h"
#include "tests/support/test_paths.h"

namespace attrib::rules {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::vector<fs::path> fixtures() {
  auto all = list_golden_fixtures(attrib::test::fixtures_dir());
  EXPECT_GE(all.size(), 20u) << attrib::test::fixtures_dir();
  return all;
}

std::string replay_json(const Bundle& bundle) {
  auto v = replay_bundle(bundle, test::shipped_pack());
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().message);
  return v.ok() ? to_json(*v).dump() : "";
}

// attrib-replay hands each <source>.log file to the engine as one run of lines (as the
// collectors hand files over); fed line by line instead, every golden fixture and every
// real-incident bundle gives byte-identical verdict JSON.
TEST(ReplayDeterminism, FilesAsRunsGiveWhatLineByLineGives) {
  std::vector<fs::path> bundles = fixtures();
  for (const auto& entry : fs::directory_iterator(fs::path(attrib::test::source_dir()) / "tests" / "corpus" / "real"))
    if (fs::exists(entry.path() / "job.json")) bundles.push_back(entry.path());
  ASSERT_GE(bundles.size(), 60u);
  for (const fs::path& dir : bundles) {
    auto bundle = open_bundle(dir);
    ASSERT_TRUE(bundle.ok()) << dir << ": " << bundle.error().message;
    Extractor extractor(test::shipped_pack());
    auto coverage = read_bundle_lines(*bundle, [&](const LogLine& line) { extractor.feed(line); });
    ASSERT_TRUE(coverage.ok()) << dir;
    std::vector<Event> events = extractor.finish();
    count_events(*coverage, events);
    const Verdict by_line = correlate(*test::shipped_pack(), bundle->job, std::move(events), std::move(*coverage));
    EXPECT_EQ(replay_json(*bundle), to_json(by_line).dump()) << dir;
  }
}

// Every file under dir by its path relative to dir, as the attribution API and the archive
// hold a bundle in memory.
BundleFiles files_under(const fs::path& dir) {
  BundleFiles files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    files[entry.path().lexically_relative(dir).generic_string()] = content.str();
  }
  return files;
}

// A bundle opened from its files in memory gives the verdict JSON its directory gives, for
// every golden fixture and every real-incident bundle.
TEST(ReplayDeterminism, FilesInMemoryGiveWhatTheirDirectoryGives) {
  std::vector<fs::path> bundles = fixtures();
  for (const auto& entry : fs::directory_iterator(fs::path(attrib::test::source_dir()) / "tests" / "corpus" / "real"))
    if (fs::exists(entry.path() / "job.json")) bundles.push_back(entry.path());
  for (const fs::path& dir : bundles) {
    auto from_dir = open_bundle(dir);
    ASSERT_TRUE(from_dir.ok()) << dir << ": " << from_dir.error().message;
    auto in_memory = open_bundle(files_under(dir));
    ASSERT_TRUE(in_memory.ok()) << dir << ": " << in_memory.error().message;
    EXPECT_EQ(in_memory->hosts, from_dir->hosts) << dir;
    EXPECT_EQ(replay_json(*in_memory), replay_json(*from_dir)) << dir;
  }
}

TEST(ReplayDeterminism, ShuffledFileOrderGivesByteIdenticalJson) {
  for (const auto& dir : fixtures()) {
    auto bundle = open_bundle(dir);
    ASSERT_TRUE(bundle.ok()) << dir << ": " << bundle.error().message;
    const std::string reference = replay_json(*bundle);
    for (unsigned seed : {1u, 2u, 3u}) {
      Bundle shuffled = *bundle;
      std::mt19937 rng(seed);
      std::shuffle(shuffled.files.begin(), shuffled.files.end(), rng);
      std::shuffle(shuffled.hosts.begin(), shuffled.hosts.end(), rng);
      EXPECT_EQ(replay_json(shuffled), reference) << dir << " seed " << seed;
    }
    std::reverse(bundle->files.begin(), bundle->files.end());
    EXPECT_EQ(replay_json(*bundle), reference) << dir << " reversed";
  }
}

TEST(ReplayDeterminism, CopyWithHostsCreatedInReverseOrderGivesTheSameJson) {
  for (const auto& dir : fixtures()) {
    TempDir copy;
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(dir)) entries.push_back(e.path());
    std::sort(entries.rbegin(), entries.rend());
    for (const auto& e : entries) fs::copy(e, copy.path() / e.filename(), fs::copy_options::recursive);
    auto a = replay_bundle(dir, test::shipped_pack());
    auto b = replay_bundle(copy.path(), test::shipped_pack());
    ASSERT_TRUE(a.ok() && b.ok()) << dir;
    EXPECT_EQ(to_json(*a).dump(), to_json(*b).dump()) << dir;
  }
}

// Everything but coverage: an export holds the events, not the raw files, so its
// line counts differ; the decision and the evidence must not.
nlohmann::json decision(const Verdict& v) {
  auto j = to_json(v);
  j.erase("coverage");
  // Derived from coverage too: a bundle can only say "no directory" (unavailable), not
  // partial/failed/timeout, so what is missing is compared only when nothing was.
  j.erase("missing_sources");
  auto comment = j["comment"].get<std::string>();
  if (const size_t at = comment.find(" missing="); at != std::string::npos) comment.erase(at);
  j["comment"] = comment;
  return j;
}

TEST(BundleExport, ReplayingAnExportGivesTheSameVerdict) {
  for (const auto& dir : fixtures()) {
    auto original = replay_bundle(dir, test::shipped_pack());
    ASSERT_TRUE(original.ok()) << dir;
    // What the archive holds: the verdict JSON (attrib-show --json), read back.
    auto archived = verdict_from_json(to_json(*original));
    ASSERT_TRUE(archived.ok()) << archived.error().message;
    TempDir out;
    const fs::path bundle_dir = out.path() / "bundle";
    auto written = export_verdict_bundle(bundle_dir, *archived);
    ASSERT_TRUE(written.ok()) << dir << ": " << written.error().message;
    auto replayed = replay_bundle(bundle_dir, test::shipped_pack());
    ASSERT_TRUE(replayed.ok()) << dir << ": " << replayed.error().message;
    EXPECT_EQ(decision(*replayed).dump(2), decision(*original).dump(2)) << dir;
    // The coverage ratio in the comment survives too when nothing was missing.
    const bool all_read = std::all_of(original->coverage.begin(), original->coverage.end(), [](const Coverage& c) {
      return c.status == CoverageStatus::Ok || c.status == CoverageStatus::Empty;
    });
    if (all_read) {
      EXPECT_EQ(replayed->comment, original->comment) << dir;
      EXPECT_EQ(to_json(*replayed)["missing_sources"], to_json(*original)["missing_sources"]) << dir;
    }
  }
}

// The daemon's raw evidence (every line each source returned, the coverage rows as
// collected, the window read) written as a bundle replays to the very verdict, byte for
// byte, also where a source was partial or failed, which the files alone cannot say.
TEST(RawBundle, ReplayingTheRawEvidenceGivesTheSameVerdictByteForByte) {
  for (const auto& dir : fixtures()) {
    auto bundle = open_bundle(dir);
    ASSERT_TRUE(bundle.ok()) << dir << ": " << bundle.error().message;
    // What a live collection hands the engine: the lines and the coverage report.
    RawEvidence raw;
    Extractor extractor(test::shipped_pack());
    auto coverage = read_bundle_lines(*bundle, [&](const LogLine& line) {
      raw.lines.add(line);
      extractor.feed(line);
    });
    ASSERT_TRUE(coverage.ok()) << dir;
    if (!coverage->empty()) {  // a source that failed on one node, as a collector reports it
      coverage->front().status = CoverageStatus::Partial;
      coverage->front().detail = "journal directory /var/log/journal/remote begins after the window start";
    }
    raw.coverage = *coverage;
    raw.window_start = bundle->window_start;
    raw.window_end = bundle->window_end;
    std::vector<Event> events = extractor.finish();
    count_events(*coverage, events);
    const Verdict live = correlate(*test::shipped_pack(), bundle->job, std::move(events), std::move(*coverage));

    auto files = raw_bundle_files(bundle->job, raw);
    ASSERT_TRUE(files.ok()) << dir << ": " << files.error().message;
    TempDir out;
    ASSERT_TRUE(write_bundle_files(out.path() / "raw", *files).ok());
    auto replayed = replay_bundle(out.path() / "raw", test::shipped_pack());
    ASSERT_TRUE(replayed.ok()) << dir << ": " << replayed.error().message;
    EXPECT_EQ(to_json(*replayed).dump(2), to_json(live).dump(2)) << dir;
  }
}

TEST(RawBundle, FilesThatWouldLeaveTheBundleAreRefused) {
  TempDir out;
  EXPECT_EQ(write_bundle_files(out.path() / "b", {{"../escape.jsonl", "x"}}).error().code, "BUNDLE_E_EXPORT");
  RawEvidence raw;
  raw.lines.add(LogLine{"../etc", "kernel", std::nullopt, 0, true, "x"});
  EXPECT_EQ(raw_bundle_files(JobFacts{}, raw).error().code, "BUNDLE_E_EXPORT");
}

TEST(BundleExport, AHetJobsComponentsSurviveExportAndReplay) {
  auto original = replay_bundle(fixtures().front(), test::shipped_pack());
  ASSERT_TRUE(original.ok());
  original->components = {{original->job_id + "+0", "FAILED", 1, 0, original->nodes}};
  TempDir out;
  ASSERT_TRUE(export_verdict_bundle(out.path() / "bundle", *original).ok());
  auto replayed = replay_bundle(out.path() / "bundle", test::shipped_pack());
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_EQ(replayed->components, original->components);
}

// The head's count of a node's earlier unexplained failures (JobFacts::repeated_failures)
// travels in job.json: a verdict it decided replays the same from the export, and a raw
// bundle written from the job's facts carries it too.
TEST(BundleExport, ANodesRepeatedFailuresSurviveExportAndReplay) {
  JobFacts facts = test::job("FAILED", 1, {"n1", "n2"});
  facts.repeated_failures = {{"n2", 3, 2, 86400}};
  const Verdict original = test::attribute(facts, {});
  ASSERT_TRUE(original.root_cause.has_value()) << original.comment;
  ASSERT_EQ(original.root_cause->rule, "host.unexplained_failures_repeat");
  TempDir out;
  ASSERT_TRUE(export_verdict_bundle(out.path() / "bundle", original).ok());
  auto bundle = open_bundle(out.path() / "bundle");
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  EXPECT_EQ(bundle->job.repeated_failures, facts.repeated_failures);
  auto replayed = replay_bundle(*bundle, test::shipped_pack());
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  // The same judgement (coverage aside: the export's files hold no lines to count).
  for (const char* member : {"domain", "confidence", "root_cause", "affected_nodes", "comment"})
    EXPECT_EQ(to_json(*replayed)[member], to_json(original)[member]) << member;
}

TEST(BundleExport, RefusesANonEmptyDirectoryAndUnsafeNodeNames) {
  TempDir out;
  test::write_file(out.path() / "x", {"y"});
  EXPECT_EQ(write_bundle(out.path(), JobFacts{}, {}, {}).error().code, "BUNDLE_E_EXPORT");
  Event e;
  e.id = "e1";
  e.node = "../etc";
  e.source = "kernel";
  TempDir empty;
  EXPECT_EQ(write_bundle(empty.path() / "b", JobFacts{}, {e}, {}).error().code, "BUNDLE_E_EXPORT");
}

// A storm of identical Xid lines folds into one event with its count, in bounded memory,
// and the export writes it once with ATTRIB_COUNT.
TEST(BundleReplay, MillionIdenticalXidLinesFoldIntoOneEvent) {
  TempDir dir;
  test::write_text(dir.path() / "job.json", R"({"job_id":"4242","cluster":"lab","state":"FAILED","exit_code":1,
    "start":"2026-11-30T10:00:00Z","end":"2026-11-30T10:20:00Z","nodes":["gpu017"]})");
  {
    fs::create_directories(dir.path() / "gpu017");
    std::ofstream out(dir.path() / "gpu017" / "kernel.log", std::ios::binary);
    const std::string line =
        "Nov 30 10:05:00 gpu017 kernel: NVRM: Xid (PCI:0000:52:00): 95, pid=7062, Uncontained: LTC TAG (0x2, 0x1). "
        "RST: Yes, D-RST: No\n";
    for (int i = 0; i < 1000000; ++i) out << line;
  }
  auto v = replay_bundle(dir.path(), test::shipped_pack());
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->domain, "GPU_HARDWARE");
  ASSERT_TRUE(v->root_cause);
  EXPECT_EQ(v->root_cause->event.count, 1000000u);
  EXPECT_EQ(v->root_cause->event.seq, 0u);  // the first occurrence is kept

  TempDir out;
  ASSERT_TRUE(export_verdict_bundle(out.path() / "b", *v).ok());
  EXPECT_LT(fs::file_size(out.path() / "b" / "gpu017" / "kernel.jsonl"), 1000u);
  auto again = replay_bundle(out.path() / "b", test::shipped_pack());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(decision(*again).dump(), decision(*v).dump());
}

TEST(Golden, EveryFixtureMeetsItsExpectations) {
  for (const auto& dir : fixtures()) {
    auto r = check_golden_fixture(dir, test::shipped_pack());
    ASSERT_TRUE(r.ok()) << dir << ": " << r.error().message;
    if (!r->pending.empty()) continue;  // attrib-rules test reports these (and fails when they pass)
    std::string why;
    for (const auto& m : r->mismatches) why += "\n  " + m;
    EXPECT_TRUE(r->mismatches.empty()) << r->name << why;
  }
}

TEST(Golden, AWrongExpectationIsReported) {
  TempDir dir;
  for (const auto& e : fs::directory_iterator(fs::path(attrib::test::fixtures_dir()) / "xid79_nccl_timeouts"))
    fs::copy(e.path(), dir.path() / e.path().filename(), fs::copy_options::recursive);
  test::write_text(dir.path() / "expected.json",
                   R"({"description":"wrong on purpose","domain":"NETWORK","root_cause":{"rule":"x"},
                       "recommended_action":"DRAIN_NODE","confidence":"high","affected_nodes":["gpu017"],
                       "symptoms":{"count":99},"coverage":[]})");
  auto r = check_golden_fixture(dir.path(), test::shipped_pack());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->mismatches.size(), 3u);
  // A fixture that leaves out part of the verdict is refused, not weakly checked.
  test::write_text(dir.path() / "expected.json", R"({"description":"partial","domain":"GPU_HARDWARE"})");
  auto partial = check_golden_fixture(dir.path(), test::shipped_pack());
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.error().message.find("'root_cause' is required"), std::string::npos) << partial.error().message;
  test::write_text(dir.path() / "expected.json", R"({"description":"typo","domain":"NONE","root_cuase":null})");
  auto typo = check_golden_fixture(dir.path(), test::shipped_pack());
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().code, "GOLDEN_E_EXPECTED");
}

}  // namespace
}  // namespace attrib::rules
