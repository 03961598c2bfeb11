// A run's lines walked one by one (core/line_run.h for_each_payload_of): a run that says
// where its lines start gives exactly what searching its text and asking its prefix
// reader gives, empty lines and a last line without its '\n' included.
#include "core/line_run.h"

#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace attrib {
namespace {

using Walked = std::vector<std::tuple<uint64_t, std::optional<TimeUs>, std::string>>;

Walked walk(const LineRun& run, uint64_t* lines) {
  Walked out;
  *lines = for_each_payload_of(run, [&](uint64_t seq, std::optional<TimeUs> time, std::string_view payload) {
    out.emplace_back(seq, time, std::string(payload));
  });
  return out;
}

TEST(LineRun, KnownLineStartsGiveWhatTheSearchGives) {
  for (const std::string text : {"first\n\nthird line\nlast", "first\n\nthird line\nlast\n"}) {
    const std::vector<LineRun::LineStart> starts = {{0, 10}, {6, std::nullopt}, {7, 30}, {18, 40}};
    LineRun run;
    run.first_seq = 5;
    run.text = text;
    run.prefix = [&](std::string_view line) -> std::optional<LineRun::Prefix> {
      const size_t offset = static_cast<size_t>(line.data() - text.data());
      for (const auto& start : starts)
        if (start.offset == offset) return LineRun::Prefix{start.time, 0};
      return std::nullopt;
    };
    uint64_t searched_lines = 0, known_lines = 0;
    const Walked searched = walk(run, &searched_lines);
    run.starts = starts;
    const Walked known = walk(run, &known_lines);

    const Walked expected = {{5, 10, "first"}, {6, std::nullopt, ""}, {7, 30, "third line"}, {8, 40, "last"}};
    EXPECT_EQ(searched, expected) << text;
    EXPECT_EQ(known, expected) << text;
    EXPECT_EQ(searched_lines, 4u);
    EXPECT_EQ(known_lines, 4u);
  }
}

}  // namespace
}  // namespace attrib
