// Helpers shared by the rules tests: the shipped pack, log lines, one-call attribution.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rules/engine.h"
#include "tests/support/test_paths.h"

namespace attrib::test {

inline std::shared_ptr<const rules::RulePack> shipped_pack() {
  static std::shared_ptr<const rules::RulePack> pack = [] {
    rules::LoadOptions options;
    options.pack_dir = attrib::test::rules_pack_dir();
    auto loaded = rules::load_rule_pack(options);
    if (!loaded.ok()) {
      ADD_FAILURE() << loaded.error().code << " " << loaded.error().message;
      return std::shared_ptr<const rules::RulePack>();
    }
    return *loaded;
  }();
  return pack;
}

inline TimeUs at(const std::string& iso) {
  auto t = parse_iso_time(iso);
  EXPECT_TRUE(t.has_value()) << iso;
  return t.value_or(0);
}

// Kernel ring / journald kernel transport: written by root, trusted.
inline LogLine kernel_line(const std::string& node, const std::string& text, std::optional<TimeUs> time, uint64_t seq) {
  return LogLine{node, "kernel", time, seq, true, text};
}

// The job's own output: written by the user, never trusted.
inline LogLine app_line(const std::string& node, const std::string& source, const std::string& text,
                        std::optional<TimeUs> time, uint64_t seq) {
  return LogLine{node, source, time, seq, false, text};
}

inline JobFacts job(const std::string& state, int exit_code, std::vector<std::string> nodes, int signal = 0) {
  JobFacts facts;
  facts.job_id = "4242";
  facts.cluster = "lab";
  facts.state = state;
  facts.exit_code = exit_code;
  facts.signal = signal;
  facts.start = at("2026-11-30T10:00:00Z");
  facts.end = at("2026-11-30T10:20:00Z");
  facts.nodes = std::move(nodes);
  return facts;
}

inline std::vector<Coverage> full_coverage(const std::vector<std::string>& nodes) {
  std::vector<Coverage> out;
  for (const auto& node : nodes) {
    for (const char* source : {"kernel", "app"}) {
      Coverage c;
      c.node = node;
      c.source = source;
      c.status = CoverageStatus::Ok;
      c.lines = 10;
      c.window_start = at("2026-11-30T09:55:00Z");
      c.window_end = at("2026-11-30T10:25:00Z");
      out.push_back(c);
    }
  }
  return out;
}

inline std::vector<Event> extract(const std::vector<LogLine>& lines) {
  rules::Extractor extractor(shipped_pack());
  for (const auto& line : lines) extractor.feed(line);
  return extractor.finish();
}

inline Verdict attribute(const JobFacts& facts, const std::vector<LogLine>& lines) {
  return rules::correlate(*shipped_pack(), facts, extract(lines), full_coverage(facts.nodes));
}

}  // namespace attrib::test
