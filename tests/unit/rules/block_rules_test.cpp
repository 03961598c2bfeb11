// Multi-line extraction rules (`block:`, docs/rules.md): a Python traceback, kept per
// (node, source) stream, dated by its first line, captured from its first and last line.
#include <gtest/gtest.h>

#include "rules/pack_patterns.h"
#include "tests/support/rule_test_support.h"
#include "tests/support/temp_pack.h"

namespace attrib {
namespace {

constexpr const char* kTracebackRule = R"(extract:
  - id: t.traceback
    kind: python.exception
    sources: [app]
    prefilter: "Traceback (most recent call last):"
    regex: '^(?:\[rank(?P<rank>\d+)\]:\s*)?Traceback \(most recent call last\):'
    block:
      end: '^(?:\[rank(?P<rank>\d+)\]:\s*)?(?P<exception>(?:[a-z_][a-z0-9_]*\.)*[A-Z]\w*(?:Error|Exception)):(?: (?P<message>.*?))?\s*$'
      abort: '^(?:\[rank(?P<rank>\d+)\]:\s*)?(?:SystemExit|KeyboardInterrupt)\b'
      key: rank
      max_lines: 5
    fields: {rank: int, exception: string, message: string}
    set: {language: python}
    examples:
      match:
        - line: |
            Traceback (most recent call last):
              File "train.py", line 88, in <module>
                main()
            RuntimeError: CUDA error: an illegal memory access was encountered
          fields: {exception: RuntimeError, message: "CUDA error: an illegal memory access was encountered", language: python}
        - line: "[rank3]: Traceback (most recent call last):\n[rank3]:   File \"x.py\", line 1\n[rank3]: ValueError: bad"
          fields: {rank: 3, exception: ValueError, message: bad}
      no_match:
        - |
          Traceback (most recent call last):
            File "train.py", line 88, in <module>
          SystemExit: 3
        - "RuntimeError: no traceback before me"
)";

class BlockRules : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<test::TempPackDir>("block");
    dir_->write_pack(kTracebackRule);
    pack_ = dir_->load();
    ASSERT_TRUE(pack_);
  }

  std::vector<Event> extract(const std::vector<LogLine>& lines) const {
    rules::Extractor extractor(pack_);
    for (const auto& l : lines) extractor.feed(l);
    return extractor.finish();
  }

  static LogLine app(const std::string& node, const std::string& text, uint64_t seq, std::optional<TimeUs> time = {}) {
    return LogLine{node, "app", time, seq, false, text};
  }

  std::unique_ptr<test::TempPackDir> dir_;
  std::shared_ptr<const rules::RulePack> pack_;
};

TEST_F(BlockRules, TracebackBecomesOneEventDatedByItsFirstLine) {
  const TimeUs t0 = test::at("2026-11-30T10:05:00Z");
  const auto events = extract({
      app("n1", "epoch 3 loss 0.12", 0, t0),
      app("n1", "Traceback (most recent call last):", 1, t0 + 1),
      app("n1", "  File \"train.py\", line 88, in <module>", 2, t0 + 2),
      app("n1", "RuntimeError: CUDA error: an illegal memory access was encountered", 3, t0 + 3),
  });
  ASSERT_EQ(events.size(), 1u);
  const Event& e = events[0];
  EXPECT_EQ(e.kind, "python.exception");
  EXPECT_EQ(e.rule, "t.traceback");
  EXPECT_EQ(e.time, t0 + 1);
  EXPECT_EQ(e.seq, 1u);
  EXPECT_FALSE(e.trusted);
  EXPECT_EQ(e.fields["exception"], "RuntimeError");
  EXPECT_EQ(e.fields["message"], "CUDA error: an illegal memory access was encountered");
  EXPECT_EQ(e.fields["language"], "python");
  EXPECT_FALSE(e.fields.contains("rank"));
  EXPECT_EQ(e.line,
            "Traceback (most recent call last):\nRuntimeError: CUDA error: an illegal memory access was encountered");
}

TEST_F(BlockRules, InterleavedRanksAreToldApartByTheKey) {
  const auto events = extract({
      app("n1", "[rank0]: Traceback (most recent call last):", 0),
      app("n1", "[rank1]: Traceback (most recent call last):", 1), app("n1", "[rank1]:   File \"x.py\", line 1", 2),
      app("n1", "[rank1]: KeyError: 'w'", 3),
      app("n1", "[rank0]: ValueError: bad shape", 4),  // line 5 of rank 0's block: max_lines
  });
  ASSERT_EQ(events.size(), 2u);  // untimed: stream order, by the first line's seq
  EXPECT_EQ(events[0].fields["rank"], 0);
  EXPECT_EQ(events[0].fields["exception"], "ValueError");
  EXPECT_EQ(events[0].seq, 0u);
  EXPECT_EQ(events[1].fields["rank"], 1);
  EXPECT_EQ(events[1].fields["exception"], "KeyError");
  EXPECT_EQ(events[1].seq, 1u);
}

TEST_F(BlockRules, AnUnkeyedStartTakesAKeyedEnd) {
  const auto events = extract({
      app("n1", "Traceback (most recent call last):", 0),
      app("n1", "  File \"train.py\", line 118, in <module>", 1),
      app("n1", "[rank0]: ValueError: Expected input batch_size (16) to match target batch_size (8).", 2),
  });
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].fields["rank"], 0);
  EXPECT_EQ(events[0].seq, 0u);
}

TEST_F(BlockRules, AnAbortLineClosesTheBlockWithoutAnEvent) {
  const auto events = extract({
      app("n1", "[rank2]: Traceback (most recent call last):", 0),
      app("n1", "[rank1]: Traceback (most recent call last):", 1),
      app("n1", "[rank2]: SystemExit: 3", 2),              // ends rank 2's block: no event
      app("n1", "[rank2]: OSError: later, unrelated", 3),  // so this cannot complete it
      app("n1", "[rank1]: KeyError: 'w'", 4),
  });
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].fields["rank"], 1);
}

TEST_F(BlockRules, StateIsPerNodeAndSource) {
  const auto events = extract({
      app("n1", "Traceback (most recent call last):", 0),
      app("n2", "RuntimeError: not the end of n1's block", 0),
      LogLine{"n1", "app.rank2", std::nullopt, 0, false, "RuntimeError: another stream"},
  });
  EXPECT_TRUE(events.empty());
}

TEST_F(BlockRules, EndMustComeWithinMaxLinesAndOpenBlocksAreNotReported) {
  std::vector<LogLine> lines = {app("n1", "Traceback (most recent call last):", 0)};
  for (uint64_t i = 1; i <= 4; ++i) lines.push_back(app("n1", "  frame", i));
  lines.push_back(app("n1", "RuntimeError: too late", 5));              // line 6 of a 5-line block
  lines.push_back(app("n2", "Traceback (most recent call last):", 0));  // never ends
  EXPECT_TRUE(extract(lines).empty());

  lines.erase(lines.begin() + 4);  // now the end is line 5
  const auto events = extract(lines);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].fields["message"], "too late");
}

TEST_F(BlockRules, ARestartedBlockKeepsTheNewStart) {
  const auto events = extract({
      app("n1", "Traceback (most recent call last):", 0),
      app("n1", "  File \"a.py\"", 1),
      app("n1", "Traceback (most recent call last):", 2),
      app("n1", "OSError: gone", 3),
  });
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].seq, 2u);
}

TEST_F(BlockRules, AMultiLinePayloadIsItsLinesInOrder) {
  // A journald MESSAGE with embedded newlines, or a block event exported to a bundle.
  const auto one = extract({app("n1", "Traceback (most recent call last):\n  File \"a.py\"\nOSError: gone", 7)});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].seq, 7u);
  EXPECT_EQ(one[0].line, "Traceback (most recent call last):\nOSError: gone");
  // Re-feeding the event's own line gives the same event (export -> replay).
  const auto again = extract({app("n1", one[0].line, 7)});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(to_json(again[0]).dump(), to_json(one[0]).dump());
}

TEST_F(BlockRules, IdenticalBlocksFold) {
  std::vector<LogLine> lines;
  for (uint64_t i = 0; i < 3; ++i) {
    lines.push_back(app("n1", "Traceback (most recent call last):", 2 * i));
    lines.push_back(app("n1", "OSError: gone", 2 * i + 1));
  }
  const auto events = extract(lines);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].count, 3u);
  EXPECT_EQ(events[0].seq, 0u);
}

TEST_F(BlockRules, PatternsExportBothEnds) {
  const auto patterns = rules::extraction_patterns(*pack_);
  ASSERT_EQ(patterns.size(), 1u);
  EXPECT_EQ(patterns[0].regex.rfind("^(?:\\[rank", 0), 0u);
  EXPECT_NE(patterns[0].block_end.find("(?P<exception>"), std::string::npos);
  EXPECT_EQ(rules::pack_stats(*pack_).block_rules, 1u);
}

// --- load errors ---------------------------------------------------------------------

struct BadBlock {
  const char* name;
  const char* from;  // replaced in kTracebackRule
  const char* to;    // nullptr: delete the line holding `from`
  const char* code;
  const char* message;  // substring of "file:line: field: message"
};

class BlockLoadErrors : public ::testing::TestWithParam<BadBlock> {};

TEST_P(BlockLoadErrors, NameFileLineFieldAndCode) {
  const BadBlock& bad = GetParam();
  std::string rules = kTracebackRule;
  const size_t at = rules.find(bad.from);
  ASSERT_NE(at, std::string::npos) << bad.from;
  if (bad.to == nullptr) {
    rules.erase(at, rules.find('\n', at) + 1 - at);  // delete the whole line
  } else {
    rules.replace(at, std::string(bad.from).size(), bad.to);
  }
  test::TempPackDir dir("blockerr");
  dir.write_pack(rules);
  const Error error = dir.load_error();
  EXPECT_EQ(error.code, bad.code) << error.message;
  EXPECT_NE(error.message.find(bad.message), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("rules.yaml:"), std::string::npos) << error.message;
}

TEST(BlockLoadError, BlockMustBeAMap) {
  std::string rules = kTracebackRule;
  const size_t from = rules.find("    block:\n");
  const size_t to = rules.find("    fields:");
  rules.replace(from, to - from, "    block: yes\n");
  test::TempPackDir dir("blockmap");
  dir.write_pack(rules);
  const Error error = dir.load_error();
  EXPECT_EQ(error.code, "RULE_E_FIELD");
  EXPECT_NE(error.message.find("rules.yaml:7: extract[0].block: expected a map"), std::string::npos) << error.message;
}

INSTANTIATE_TEST_SUITE_P(
    Block, BlockLoadErrors,
    ::testing::Values(
        BadBlock{"UnknownKey", "      end: '", "      ending: '", "RULE_E_FIELD",
                 "extract[0].block.ending: unknown key"},
        BadBlock{"MissingEnd", "      end: '", nullptr, "RULE_E_FIELD", "extract[0].block.end: missing required key"},
        BadBlock{"BadEndRegex", "(?:Error|Exception)):", "(?:Error|Exception):", "RULE_E_REGEX",
                 "rules.yaml:8: extract.t.traceback.block.end: "},
        BadBlock{"UntypedEndGroup", "(?P<message>", "(?P<msg>", "RULE_E_REGEX",
                 "block.end: named group 'msg' has no type under fields"},
        BadBlock{"MaxLines", "max_lines: 5", "max_lines: 1", "RULE_E_FIELD",
                 "extract[0].block.max_lines: must be 2..10000"},
        BadBlock{"KeyNotCaptured", "key: rank", "key: exception", "RULE_E_FIELD",
                 "extract.t.traceback.block.key: 'exception' must be a named group of both regex and block.end"},
        BadBlock{"ExampleWithoutEnd", "            RuntimeError: CUDA error: an illegal",
                 "            CUDA error: an illegal", "RULE_E_EXAMPLE", "lines do not make a block: Traceback"},
        BadBlock{"NoMatchThatMatches", "          SystemExit: 3", "          SystemError: 3", "RULE_E_EXAMPLE",
                 "lines make a block but must not"}),
    [](const ::testing::TestParamInfo<BadBlock>& info) { return info.param.name; });

}  // namespace
}  // namespace attrib
