#include "core/line_run.h"

#include <algorithm>
#include <utility>

namespace attrib {

namespace {

// The line's time and payload as run.prefix reads them; nullopt when it leaves the line out.
std::optional<std::pair<std::optional<TimeUs>, std::string_view>> payload_of(const LineRun& run, std::string_view raw) {
  auto prefix = run.prefix(raw);
  if (!prefix) return std::nullopt;
  return std::pair{prefix->time, raw.substr(std::min(prefix->payload_offset, raw.size()))};
}

}  // namespace

bool line_of(const LineRun& run, std::string_view raw, uint64_t seq, LogLine& line) {
  auto payload = payload_of(run, raw);
  if (!payload) return false;
  line.time = payload->first;
  line.seq = seq;
  line.text.assign(payload->second);
  return true;
}

uint64_t for_each_payload_of(
    const LineRun& run,
    const std::function<void(uint64_t seq, std::optional<TimeUs> time, std::string_view payload)>& each) {
  uint64_t seq = run.first_seq;
  const std::string_view text = run.text;
  if (!run.starts.empty()) {
    for (size_t i = 0; i < run.starts.size(); ++i, ++seq) {
      const size_t begin = run.starts[i].offset;
      size_t end = i + 1 < run.starts.size() ? run.starts[i + 1].offset : text.size();
      if (end > begin && text[end - 1] == '\n') --end;
      each(seq, run.starts[i].time, text.substr(begin, end - begin));
    }
    return seq - run.first_seq;
  }
  for (size_t pos = 0; pos < text.size(); ++seq) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    if (auto payload = payload_of(run, text.substr(pos, end - pos))) each(seq, payload->first, payload->second);
    pos = end + 1;
  }
  return seq - run.first_seq;
}

uint64_t for_each_line_of(const LineRun& run, const std::function<void(const LogLine&)>& each) {
  LogLine line;
  line.node = run.node;
  line.source = run.source;
  line.trusted = run.trusted;
  return for_each_payload_of(run, [&](uint64_t seq, std::optional<TimeUs> time, std::string_view payload) {
    line.seq = seq;
    line.time = time;
    line.text.assign(payload);
    each(line);
  });
}

}  // namespace attrib
