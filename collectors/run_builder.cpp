#include "collectors/run_builder.h"

#include <algorithm>

namespace attrib::collectors {
RunBuilder::RunBuilder(CoverageReport& report, const LineSink& sink)
    : report_(report), sink_(sink), buffers_([]() -> Buffers& {
        thread_local Buffers buffers;
        return buffers;
      }()) {
  buffers_.text.clear();
  buffers_.starts.clear();
}

std::string& RunBuilder::begin_line(const std::string& node, const std::string& source, bool trusted,
                                    std::optional<TimeUs> time) {
  if (source_ != source || node_ != node || trusted_ != trusted) {
    hand_over();
    node_ = node;
    source_ = source;
    trusted_ = trusted;
  }
  line_start_ = buffers_.text.size();
  line_time_ = time;
  return buffers_.text;
}

void RunBuilder::end_line(bool may_hold_newline) {
  std::string& text = buffers_.text;
  if (may_hold_newline && text.find('\n', line_start_) != std::string::npos) {
    LogLine line{node_, source_, line_time_, 0, trusted_, text.substr(line_start_)};
    text.resize(line_start_);
    hand_over();
    line.seq = report_.next_seq(node_, source_);
    sink_(line);
    return;
  }
  text += '\n';
  buffers_.starts.push_back({line_start_, line_time_});
}

void RunBuilder::finish() {
  hand_over();
  if (buffers_.text.capacity() > kKeptBufferBytes) buffers_.text = std::string();
  if (buffers_.starts.capacity() * sizeof(buffers_.starts[0]) > kKeptBufferBytes) buffers_.starts = {};
}

void RunBuilder::hand_over() {
  std::string& text = buffers_.text;
  std::vector<LineRun::LineStart>& starts = buffers_.starts;
  if (text.empty()) return;
  LineRun run;
  run.node = node_;
  run.source = source_;
  run.trusted = trusted_;
  run.text = text;
  run.starts = starts;
  // Lines are asked for in order (every one of them when the raw evidence is kept): the
  // line after the last one asked is tried before a search.
  run.prefix = [&text, &starts, next = size_t{0}](std::string_view line) mutable -> std::optional<LineRun::Prefix> {
    const size_t offset = static_cast<size_t>(line.data() - text.data());
    auto at = next < starts.size() && starts[next].offset == offset
                  ? starts.begin() + static_cast<ptrdiff_t>(next)
                  : std::lower_bound(starts.begin(), starts.end(), offset,
                                     [](const auto& start, size_t o) { return start.offset < o; });
    next = static_cast<size_t>(at - starts.begin()) + 1;
    return LineRun::Prefix{at->time, 0};
  };
  report_.hand_over(std::move(run), sink_);
  text.clear();
  starts.clear();
}

}  // namespace attrib::collectors
