// The lines an attempt read, as the archive keeps them (its raw evidence): per
// (node, source) stream one byte string of compact records, not a LogLine with its own
// heap-allocated text per line. Keeping a 10,000-line window is then a few appends and no
// allocation per line, and the archive packs the records as they are
// (rules/bundle_export.h archive_files), 3x smaller than the bundle's journal JSON
// they become again when read (docs/benchmarks.md, the burst).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/types.h"

namespace attrib::rules {

// One stream's lines in the order read. A record is: the zigzag varint of seq minus the
// previous record's seq, a flags byte (1: trusted, 2: dated), when dated the zigzag
// varint of time minus the previous dated record's time, the varint text length, the text.
class RawStream {
 public:
  void add(uint64_t seq, std::optional<TimeUs> time, bool trusted, std::string_view text);
  // Room for about this many bytes of text (and their records' few bytes each).
  void reserve(uint64_t text_bytes) { records_.reserve(records_.size() + text_bytes + text_bytes / 16); }
  // Every record of `records` in order. Error code EVIDENCE_E_UNPACK when one is cut short
  // or malformed (a damaged archive), naming the record.
  using Each = std::function<void(uint64_t seq, std::optional<TimeUs> time, bool trusted, std::string_view text)>;
  static Status decode(std::string_view records, const Each& each);
  Status for_each(const Each& each) const { return decode(records_, each); }

  const std::string& records() const { return records_; }
  std::string release_records() && { return std::move(records_); }  // for the archive, without a copy
  uint64_t lines() const { return lines_; }

 private:
  std::string records_;
  uint64_t lines_ = 0;
  uint64_t last_seq_ = 0;
  TimeUs last_time_ = 0;
};

class RawLines {
 public:
  using Key = std::pair<std::string, std::string>;  // (node, source)

  // The stream of (node, source), created empty when new: a read that returned nothing
  // still says the source was read. The reference stays valid while this object lives
  // (and is moved, not copied): a run's lines are added to it without a lookup each.
  RawStream& stream(const std::string& node, const std::string& source);
  void add(const LogLine& line);  // stream(line.node, line.source).add(...)
  // The other's lines after this one's, stream by stream.
  void append(RawLines&& other);

  uint64_t size() const;
  bool empty() const { return size() == 0; }
  const std::map<Key, RawStream>& streams() const { return streams_; }
  std::map<Key, RawStream> release_streams() && { return std::move(streams_); }
  // Every line as a LogLine, stream by stream in (node, source) order, each stream's in
  // the order added (for the node agent's answer and tests; the archive reads records).
  void for_each(const std::function<void(const LogLine&)>& each) const;

 private:
  std::map<Key, RawStream> streams_;
};

RawLines raw_lines_of(const std::vector<LogLine>& lines);

}  // namespace attrib::rules
