// Many lines of one stream at once, as a file read holds them: how file collectors hand
// what they read to the rules engine (rules::Extractor::feed_lines, the fast path of
// docs/benchmarks.md) without cutting every line into its own LogLine.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/types.h"

namespace attrib {

struct LineRun {
  std::string node;
  std::string source;
  bool trusted = false;
  uint64_t first_seq = 0;  // the first line's seq; each next line's is one more
  std::string_view text;   // whole lines, each ended by '\n' (the last one may lack it)
  // Where a line's payload starts and when it was written; nullopt leaves the line out
  // (before the job's window, say). The engine calls it only for lines that may yield an
  // event, so a source dates the lines that matter, not every line.
  struct Prefix {
    std::optional<TimeUs> time;
    size_t payload_offset = 0;
  };
  std::function<std::optional<Prefix>(std::string_view line)> prefix;
  // Where each line starts in `text` and when it was written, in order, when whoever built
  // the run knows it (collectors/run_builder.h): then every line's payload is the whole
  // line, prefix says the same for each, and a walk over every line (for_each_payload_of:
  // the archive keeps every line of a job's window) reads this instead of searching for
  // each '\n' and asking prefix. Empty: not known.
  struct LineStart {
    size_t offset = 0;
    std::optional<TimeUs> time;
  };
  std::span<const LineStart> starts;
};

// One line of the run (`raw`, without its '\n') as the LogLine feed() gets, at `seq`:
// dated and its prefix cut off by run.prefix. False when the prefix reader leaves it out.
bool line_of(const LineRun& run, std::string_view raw, uint64_t seq, LogLine& line);

// Every line of the run in order as its seq, time and payload (a view into run.text), the
// ones `prefix` leaves out skipped (they still take their seq): what for_each_line_of
// hands on without a LogLine per line. Returns the number of lines in the run.
uint64_t for_each_payload_of(
    const LineRun& run,
    const std::function<void(uint64_t seq, std::optional<TimeUs> time, std::string_view payload)>& each);

// Every line of the run in order, as the LogLine feed() would get (the ones `prefix`
// leaves out skipped; they still take their seq), for consumers that need each line (the
// archive's raw evidence, tests). Returns the number of lines in the run.
uint64_t for_each_line_of(const LineRun& run, const std::function<void(const LogLine&)>& each);

}  // namespace attrib
