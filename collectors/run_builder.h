// Runs of lines (core/line_run.h) built from records read one at a time, as the
// collectors read them: consecutive lines of one stream (node, source, trust) go into one
// buffer, handed to the sink as one run when the stream changes or the read ends, so
// the engine scans them at once and dates a line only if a rule may match it. The sink
// gets the lines in the order they were read, with the seqs one line at a time would get.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/coverage_report.h"
#include "core/line_run.h"
#include "core/types.h"

namespace attrib::collectors {

// A buffer a thread keeps for its next read (RunBuilder's, kmsg's file buffer) is let go
// once it has grown past this (a window of a huge ring or journal).
constexpr size_t kKeptBufferBytes = 16u << 20;

class RunBuilder {
 public:
  // Each line is counted in `report`'s (node, source) row.
  RunBuilder(CoverageReport& report, const LineSink& sink);
  RunBuilder(const RunBuilder&) = delete;
  RunBuilder& operator=(const RunBuilder&) = delete;

  // Begins a line of the stream (node, source, trusted) written at `time` (none: a line
  // without a stamp, ordered by its seq); its text is appended to the buffer returned,
  // then end_line() ends it.
  std::string& begin_line(const std::string& node, const std::string& source, bool trusted, std::optional<TimeUs> time);
  // A whole line at once.
  void add_line(const std::string& node, const std::string& source, bool trusted, std::optional<TimeUs> time,
                std::string_view text) {
    begin_line(node, source, trusted, time).append(text);
    end_line();
  }
  // A line whose text holds a newline (an escaped one in a kernel record, a multi-line
  // journal message) is one line all the same: it goes to the sink alone. A caller that
  // knows its text cannot hold one says so, and the text is not searched.
  void end_line(bool may_hold_newline = true);
  // Hands over the lines not yet handed over; call once the read is done.
  void finish();

 private:
  void hand_over();

  CoverageReport& report_;
  const LineSink& sink_;
  std::string node_, source_;  // the stream of the lines in the buffer
  bool trusted_ = false;
  size_t line_start_ = 0;
  std::optional<TimeUs> line_time_;
  // Kept by each thread between reads (a head's workers and the node agents read a window
  // per job): fresh buffers of a megabyte each time cost more in page faults than the
  // scan. The builder of a thread is not nested in another's.
  struct Buffers {
    std::string text;
    std::vector<LineRun::LineStart> starts;  // each line's offset in text and time
  };
  Buffers& buffers_;
};

}  // namespace attrib::collectors
