// Raw lines as compact per-stream records (attrib/rules/raw_lines.h).
#include "rules/evidence/raw_lines.h"

namespace attrib::rules {
namespace {

constexpr unsigned char kTrusted = 1, kDated = 2;

// Writes `value` as a varint at `out`; returns the end. At most 10 bytes.
char* put_varint(char* out, uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<char>(value);
  return out;
}

uint64_t zigzag(int64_t value) { return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63); }
int64_t unzigzag(uint64_t value) { return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1); }

// Reads one varint at `pos`; false when the bytes end first or it runs past 64 bits.
bool get_varint(std::string_view in, size_t& pos, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && pos < in.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace

void RawStream::add(uint64_t seq, std::optional<TimeUs> time, bool trusted, std::string_view text) {
  // The record's head in a local buffer, then head and text appended: two appends per
  // line, not one per field (a 10,000-line window is kept for every job).
  char head[31];  // seq, flags, time, length: at most 10 + 1 + 10 + 10 bytes
  // Wrapping differences: the decoder adds them back modulo 2^64, so any order round-trips.
  char* end = put_varint(head, zigzag(static_cast<int64_t>(seq - last_seq_)));
  last_seq_ = seq;
  *end++ = static_cast<char>((trusted ? kTrusted : 0) | (time ? kDated : 0));
  if (time) {
    end =
        put_varint(end, zigzag(static_cast<int64_t>(static_cast<uint64_t>(*time) - static_cast<uint64_t>(last_time_))));
    last_time_ = *time;
  }
  end = put_varint(end, text.size());
  records_.append(head, static_cast<size_t>(end - head));
  records_.append(text);
  ++lines_;
}

Status RawStream::decode(std::string_view records, const Each& each) {
  uint64_t seq = 0, time = 0;
  for (size_t pos = 0, record = 1; pos < records.size(); ++record) {
    const auto damaged = [&](const char* what) {
      return Error{kEvidenceUnpack, "archived lines: record " + std::to_string(record) + ": " + what};
    };
    uint64_t delta = 0, length = 0;
    if (!get_varint(records, pos, delta)) return damaged("seq cut short");
    seq += static_cast<uint64_t>(unzigzag(delta));
    if (pos >= records.size()) return damaged("flags cut short");
    const auto flags = static_cast<unsigned char>(records[pos++]);
    if ((flags & ~(kTrusted | kDated)) != 0) return damaged("unknown flags");
    std::optional<TimeUs> when;
    if ((flags & kDated) != 0) {
      if (!get_varint(records, pos, delta)) return damaged("time cut short");
      time += static_cast<uint64_t>(unzigzag(delta));
      when = static_cast<TimeUs>(time);
    }
    if (!get_varint(records, pos, length) || length > records.size() - pos) return damaged("text cut short");
    each(seq, when, (flags & kTrusted) != 0, records.substr(pos, length));
    pos += length;
  }
  return ok_status();
}

RawStream& RawLines::stream(const std::string& node, const std::string& source) {
  return streams_.try_emplace(Key{node, source}).first->second;
}

void RawLines::add(const LogLine& line) {
  stream(line.node, line.source).add(line.seq, line.time, line.trusted, line.text);
}

void RawLines::append(RawLines&& other) {
  for (auto& [key, theirs] : other.streams_) {
    auto [at, inserted] = streams_.try_emplace(key, std::move(theirs));
    if (inserted) continue;
    // Both read this stream (the head's collector and the node's agent): re-encoded
    // after ours, as the records' differences continue from our last line.
    RawStream& ours = at->second;
    (void)theirs.for_each([&](uint64_t seq, std::optional<TimeUs> time, bool trusted, std::string_view text) {
      ours.add(seq, time, trusted, text);
    });
  }
  other.streams_.clear();
}

uint64_t RawLines::size() const {
  uint64_t lines = 0;
  for (const auto& [key, stream] : streams_) lines += stream.lines();
  return lines;
}

void RawLines::for_each(const std::function<void(const LogLine&)>& each) const {
  LogLine line;
  for (const auto& [key, stream] : streams_) {
    line.node = key.first;
    line.source = key.second;
    // Our own records: they decode (a failure would be a bug in add, caught by the tests).
    (void)stream.for_each([&](uint64_t seq, std::optional<TimeUs> time, bool trusted, std::string_view text) {
      line.seq = seq;
      line.time = time;
      line.trusted = trusted;
      line.text.assign(text);
      each(line);
    });
  }
}

RawLines raw_lines_of(const std::vector<LogLine>& lines) {
  RawLines raw;
  for (const LogLine& line : lines) raw.add(line);
  return raw;
}

}  // namespace attrib::rules
