// The one-pass candidate scan (rules/candidate_scan.h) must give exactly the events
// of the RE2-only path it replaces: it may flag too many lines, never too few.
#include "rules/candidate_scan.h"

#include <map>
#include <random>
#include <tuple>
#include <thread>

#include <gtest/gtest.h>

#include "core/verdict.h"
#include "rules/rule_pack.h"
#include "tests/support/rule_test_support.h"
#include "tests/support/temp_pack.h"
#include "tests/support/test_paths.h"

namespace attrib {
namespace {

std::shared_ptr<const rules::RulePack> reference_pack(const rules::LoadOptions& options) {
  auto loaded = rules::detail::load_rule_pack_without_scan(options);
  if (!loaded.ok()) {
    ADD_FAILURE() << loaded.error().code << " " << loaded.error().message;
    return nullptr;
  }
  return *loaded;
}

std::shared_ptr<const rules::RulePack> shipped_reference() {
  static auto pack = [] {
    rules::LoadOptions options;
    options.pack_dir = attrib::test::rules_pack_dir();
    return reference_pack(options);
  }();
  return pack;
}

std::string events_json(const std::vector<Event>& events) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& e : events) j.push_back(to_json(e));
  // Lines may hold invalid UTF-8 (the verdict writer replaces it; compare the same way).
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string run(const std::shared_ptr<const rules::RulePack>& pack, const std::vector<LogLine>& lines,
                size_t max_distinct = rules::Extractor::kDefaultMaxDistinctEvents) {
  rules::Extractor extractor(pack, max_distinct);
  for (const auto& line : lines) extractor.feed(line);
  std::string out = events_json(extractor.finish());
  return out + " dropped=" + std::to_string(extractor.dropped_events());
}

// A source a rule reads, as a stream name ("app" rules also see app.rank<N> streams).
std::vector<std::string> streams_of(const rules::detail::ExtractionRuleDef& def) {
  std::vector<std::string> out;
  for (const auto& s : def.sources) {
    out.push_back(s);
    if (s == "app") out.push_back("app.rank7");
  }
  return out;
}

// One example as stream lines: a block rule's example is several physical lines.
std::vector<LogLine> example_lines(const rules::detail::ExtractionRuleDef& def, const std::string& text,
                                   const std::string& source, uint64_t& seq) {
  std::vector<LogLine> out;
  const bool trusted = source.rfind("app", 0) != 0;
  if (!def.block) {
    out.push_back(LogLine{"n1", source, std::nullopt, seq++, trusted, text});
    return out;
  }
  for (const auto piece : rules::detail::split_lines(text)) {
    out.push_back(LogLine{"n1", source, std::nullopt, seq++, trusted, std::string(piece)});
  }
  return out;
}

// Every line of every inline example of the pack, on every source its rule reads.
std::vector<LogLine> all_example_lines(const rules::RulePack& pack) {
  std::vector<LogLine> lines;
  uint64_t seq = 0;
  for (const auto& rule : pack.extraction) {
    for (const auto& source : streams_of(rule.def)) {
      for (const auto& e : rule.def.match_examples) {
        for (auto& l : example_lines(rule.def, e.line, source, seq)) lines.push_back(std::move(l));
      }
      for (const auto& e : rule.def.no_match_examples) {
        for (auto& l : example_lines(rule.def, e.line, source, seq)) lines.push_back(std::move(l));
      }
    }
  }
  return lines;
}

TEST(CandidateScan, ShippedPackScansEveryRuleByLiteral) {
  const auto stats = rules::pack_stats(*test::shipped_pack());
  // Every shipped rule has a prefilter: none should need RE2 on every line.
  EXPECT_TRUE(stats.scan_fallbacks.empty()) << stats.scan_fallbacks.front();
  EXPECT_EQ(stats.scan_literal_rules + stats.scan_regex_rules, stats.extraction_rules);
}

TEST(CandidateScan, EveryInlineExampleGivesTheSameEventsAsTheRe2Path) {
  const auto scan = test::shipped_pack();
  const auto reference = shipped_reference();
  ASSERT_TRUE(scan && reference);
  ASSERT_TRUE(scan->scanner);
  ASSERT_FALSE(reference->scanner);
  uint64_t seq = 0;
  for (const auto& rule : scan->extraction) {
    for (const auto& source : streams_of(rule.def)) {
      for (const auto& e : rule.def.match_examples) {
        const auto lines = example_lines(rule.def, e.line, source, seq);
        const std::string got = run(scan, lines);
        EXPECT_EQ(got, run(reference, lines)) << rule.def.id << " on " << source << ": " << e.line;
        // and the example is found at all (as its own kind)
        EXPECT_NE(got.find("\"rule\":\"" + rule.def.id + "\""), std::string::npos) << rule.def.id << ": " << e.line;
      }
      for (const auto& e : rule.def.no_match_examples) {
        const auto lines = example_lines(rule.def, e.line, source, seq);
        EXPECT_EQ(run(scan, lines), run(reference, lines)) << rule.def.id << " on " << source << ": " << e.line;
      }
    }
  }
}

// Lines near the patterns: examples cut, spliced, re-cased and mixed with noise,
// multi-byte and invalid UTF-8, on every source.
std::vector<LogLine> mixed_input(const rules::RulePack& pack, size_t count) {
  const auto examples = all_example_lines(pack);
  const std::vector<std::string> sources = {"kernel",     "syslog", "fabricmanager", "slurm",      "spank",
                                            "prometheus", "app",    "app.rank0",     "app.rank13", "bogus"};
  const std::vector<std::string> noise = {"",
                                          " ",
                                          "é",
                                          "\xff\xfe",
                                          "NVRM",
                                          "Xid",
                                          "(",
                                          ")",
                                          ": ",
                                          "\t",
                                          "[rank3]: ",
                                          "Traceback (most recent call last):",
                                          "\xe2\x82",
                                          "  File \"train.py\", line 1, in <module>",
                                          "RuntimeError: x"};
  std::mt19937_64 rng(20261130);  // fixed seed: the test is deterministic
  std::vector<LogLine> out;
  out.reserve(count);
  std::vector<uint64_t> seqs(sources.size() * 4, 0);
  for (size_t i = 0; i < count; ++i) {
    std::string text = examples[rng() % examples.size()].text;
    switch (rng() % 6) {
      case 0:
        break;  // as is
      case 1:
        text = text.substr(0, rng() % (text.size() + 1));
        break;
      case 2:
        text = text.substr(rng() % (text.size() + 1));
        break;
      case 3:
        text.insert(rng() % (text.size() + 1), noise[rng() % noise.size()]);
        break;
      case 4:
        if (!text.empty()) text[rng() % text.size()] = static_cast<char>(rng() % 256);
        break;
      case 5:
        text = noise[rng() % noise.size()] + examples[rng() % examples.size()].text;
        break;
    }
    const size_t s = rng() % sources.size();
    const size_t node = rng() % 4;
    LogLine line;
    line.node = "n" + std::to_string(node);
    line.source = sources[s];
    line.seq = seqs[s * 4 + node]++;
    line.time = (rng() % 3 == 0) ? std::nullopt : std::optional<TimeUs>(1'700'000'000'000'000 + static_cast<TimeUs>(i));
    line.trusted = rng() % 2 == 0;
    line.text = std::move(text);
    out.push_back(std::move(line));
  }
  return out;
}

TEST(CandidateScan, LargeMixedInputGivesExactlyTheRe2PathsEvents) {
  const auto scan = test::shipped_pack();
  const auto reference = shipped_reference();
  ASSERT_TRUE(scan && reference);
  const auto lines = mixed_input(*scan, 60000);
  const std::string expected = run(reference, lines);
  EXPECT_EQ(run(scan, lines), expected);
  EXPECT_GT(expected.size(), 1000u);  // the input does produce events
  // With a distinct-event bound the same events are kept and the same number dropped.
  EXPECT_EQ(run(scan, lines, 50), run(reference, lines, 50));
}

// Extractor::feed_lines (one scan over many lines, only candidate lines dated and fed)
// gives exactly what feed() gives line by line: on the mixed input grouped into streams,
// each cut into runs at random line boundaries, with a storm, a whole block with noise
// inside, lines the prefix leaves out, and the caps.
TEST(CandidateScan, FeedingWholeRunsGivesExactlyWhatFeedingEachLineGives) {
  const auto pack = test::shipped_pack();
  ASSERT_TRUE(pack);
  struct Stream {
    std::string node, source;
    bool trusted = false;
    std::vector<std::pair<std::optional<TimeUs>, std::string>> lines;  // (time, payload)
  };
  std::map<std::tuple<std::string, std::string, bool>, Stream> streams;
  auto stream = [&](const std::string& node, const std::string& source, bool trusted) -> Stream& {
    Stream& s = streams[{node, source, trusted}];
    s.node = node;
    s.source = source;
    s.trusted = trusted;
    return s;
  };
  for (const auto& line : mixed_input(*pack, 60000)) {
    if (line.text.find('\n') != std::string::npos) continue;  // a run's lines are '\n'-separated
    stream(line.node, line.source, line.trusted).lines.emplace_back(line.time, line.text);
  }
  Stream& kernel = stream("n1", "kernel", true);
  for (int i = 0; i < 2000; ++i)
    kernel.lines.emplace_back(TimeUs{1'700'000'000'000'000}, "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
  // A block (rules/pack/nvidia.yaml, nvidia.fallen_off_bus_probe) whose body no rule reads.
  for (const char* text : {"NVRM: The NVIDIA GPU 0000:b3:00.0", "usb 1-1: new high-speed USB device",
                           "NVRM: fallen off the bus and is not responding to commands."})
    kernel.lines.emplace_back(TimeUs{1'700'000'000'000'003}, text);
  // The same block with its end past max_lines (3) because of lines no rule reads: dropped.
  for (const char* text : {"NVRM: The NVIDIA GPU 0000:b4:00.0", "usb 1-1: new high-speed USB device", "EXT4-fs mounted",
                           "NVRM: (PCI ID: 10de:26b5) installed in this system has",
                           "NVRM: fallen off the bus and is not responding to commands."})
    kernel.lines.emplace_back(TimeUs{1'700'000'000'000'004}, text);

  // The payload behind a prefix "<time>|" ("-|": no time); a time divisible by 7 is outside
  // the window: left out by both ways (its seq is still used up).
  auto in_window = [](const std::optional<TimeUs>& time) { return !time || *time % 7 != 0; };
  auto prefix = [](std::string_view raw) -> std::optional<LineRun::Prefix> {
    const size_t bar = raw.find('|');
    LineRun::Prefix p;
    p.payload_offset = bar + 1;
    if (raw.substr(0, bar) != "-") p.time = std::stoll(std::string(raw.substr(0, bar)));
    if (p.time && *p.time % 7 == 0) return std::nullopt;
    return p;
  };
  for (const size_t cap : {rules::Extractor::kDefaultMaxDistinctEvents, size_t{50}}) {
    rules::Extractor by_line(pack, cap);
    rules::Extractor by_run(pack, cap);
    std::mt19937_64 rng(7);
    size_t runs = 0;
    for (const auto& [key, s] : streams) {
      std::string text;
      for (uint64_t seq = 0; seq < s.lines.size(); ++seq) {
        const auto& [time, payload] = s.lines[seq];
        if (in_window(time)) by_line.feed(LogLine{s.node, s.source, time, seq, s.trusted, payload});
        text += (time ? std::to_string(*time) : std::string("-")) + "|" + payload + "\n";
      }
      if (rng() % 2 == 0 && !text.empty()) text.pop_back();  // the last line without its '\n'
      uint64_t seq = 0;
      for (size_t from = 0; from < text.size(); ++runs) {
        size_t to = std::min(text.size(), from + 1 + static_cast<size_t>(rng() % 20000));
        const size_t nl = text.find('\n', to);
        to = nl == std::string::npos ? text.size() : nl + 1;  // whole lines
        LineRun run{s.node, s.source, s.trusted, seq, std::string_view(text).substr(from, to - from),
                    prefix, {}};
        seq += by_run.feed_lines(run);
        from = to;
      }
      EXPECT_EQ(seq, s.lines.size()) << s.node << " " << s.source;
    }
    EXPECT_GT(runs, streams.size());
    const std::string expected = events_json(by_line.finish());
    if (cap == rules::Extractor::kDefaultMaxDistinctEvents) {  // the complete block is there
      EXPECT_NE(expected.find("\"pci\":\"0000:b3:00.0\""), std::string::npos);
    }
    EXPECT_GT(expected.size(), 1000u);
    EXPECT_EQ(events_json(by_run.finish()), expected) << "cap " << cap;
    EXPECT_EQ(by_run.dropped_events(), by_line.dropped_events()) << "cap " << cap;
  }
}

TEST(CandidateScan, ExtractorsOnManyThreadsShareOnePack) {
  const auto pack = test::shipped_pack();
  ASSERT_TRUE(pack);
  const auto lines = mixed_input(*pack, 20000);
  const std::string expected = run(pack, lines);
  std::vector<std::string> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] { results[t] = run(pack, lines); });  // each thread: its own Extractor and scratch
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_EQ(r, expected);
}

// Rules without a prefilter: the regex goes to Hyperscan in prefilter mode when its
// meaning is the same there; otherwise RE2 runs on every line (recorded, not an error).
// Application sources: their lines are matched anywhere, as Hyperscan scans them.
constexpr const char* kRegexRules = R"(extract:
  - id: t.any_char
    kind: t.any
    sources: [app]
    regex: 'a.b(?P<n>\d+)'
    fields: {n: int}
    examples:
      match:
        - line: "x aéb12 y"
          fields: {n: 12}
        - line: "a-b7"
  - id: t.negated_class
    kind: t.neg
    sources: [app]
    regex: 'id=[^ ]{2} (?P<word>\w+)$'
    fields: {word: string}
    examples:
      match:
        - line: "id=éé done"
  - id: t.caseless
    kind: t.caseless
    sources: [app]
    regex: '(?i)kelvin (?P<v>\d+)'
    fields: {v: int}
    examples:
      match:
        - line: "KELVIN 3"
  - id: t.any_byte
    kind: t.byte
    sources: [app]
    regex: 'q\Cz'
    examples:
      match:
        - line: "qxz"
  - id: t.empty
    kind: t.empty
    sources: [app]
    regex: '(?P<d>\d*)'
    fields: {d: string}
    examples:
      match:
        - line: "anything"
  - id: t.literal
    kind: t.literal
    sources: [app]
    prefilter: ["GPU lost", "gpu lost"]
    regex: '(?:GPU|gpu) lost: (?P<pci>[0-9a-f:.]+)'
    fields: {pci: string}
    examples:
      match:
        - line: "NVRM: gpu lost: 0000:3b:00.0"
)";

TEST(CandidateScan, RegexRulesAndFallbacksMatchTheRe2Path) {
  test::TempPackDir dir("scan");
  dir.write_pack(kRegexRules);
  const auto scan = dir.load();
  const auto reference = reference_pack(dir.options());
  ASSERT_TRUE(scan && reference);

  const auto stats = rules::pack_stats(*scan);
  EXPECT_EQ(stats.scan_literal_rules, 1u);
  EXPECT_EQ(stats.scan_regex_rules, 2u);
  ASSERT_EQ(stats.scan_fallbacks.size(), 3u);
  EXPECT_EQ(stats.scan_fallbacks[0].rfind("t.caseless: ", 0), 0u) << stats.scan_fallbacks[0];
  EXPECT_EQ(stats.scan_fallbacks[1].rfind("t.any_byte: ", 0), 0u) << stats.scan_fallbacks[1];
  EXPECT_NE(stats.scan_fallbacks[2].find("t.empty: Hyperscan"), std::string::npos) << stats.scan_fallbacks[2];

  std::vector<LogLine> lines;
  const std::vector<std::string> texts = {"x aéb12 y",
                                          "a\xff"
                                          "b3",
                                          "a\xc3\xa9"
                                          "b4",
                                          "ab5",
                                          "a\xe2\x82\xac"
                                          "b6",
                                          "id=éé done",
                                          "id=\xff\xfe x",
                                          "id=ab cd",
                                          "KELVIN 3",
                                          "kelvin 4",
                                          "\xe2\x84\xaa"
                                          "elvin 5" /* KELVIN SIGN */,
                                          "qxz",
                                          "q\xffz",
                                          "",
                                          "1",
                                          "GPU lost: 0000:3b:00.0",
                                          "gpu lost: 0000:3b:00.0",
                                          "Gpu lost: 0000:3b:00.0"};
  uint64_t seq = 0;
  for (const auto& t : texts) {
    for (const char* source : {"kernel", "app"}) lines.push_back(LogLine{"n1", source, std::nullopt, seq++, true, t});
  }
  const std::string expected = run(reference, lines);
  EXPECT_EQ(run(scan, lines), expected);
  EXPECT_NE(expected.find("\"n\":4"), std::string::npos);  // "aéb4" matched through the scan
  EXPECT_NE(expected.find("\"v\":5"), std::string::npos);  // RE2 folds the Kelvin sign: scanned Always
}

}  // namespace
}  // namespace attrib
