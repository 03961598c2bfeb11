// The coverage rows of one collect() call: one row per (node, source) stream it reads,
// each over the request's window. A collector counts every line it hands to the sink
// with next_seq() (the count is also the line's position in its stream) and returns one
// of the finish calls on every path out, so no collector reports a stream twice or forgets
// a window.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collectors/collector.h"
#include "core/types.h"

namespace attrib::collectors {

class CoverageReport {
 public:
  // One row for each of `sources` on the request's node, in that order.
  CoverageReport(const CollectRequest& request, const std::vector<std::string>& sources);

  // The next line's position in the (node, source) stream; counts it. A stream without a
  // row yet (e.g. a rank's lines placed on another node) gets one, after the others.
  uint64_t next_seq(const std::string& node, const std::string& source);
  uint64_t next_seq(const std::string& source) { return next_seq(node_, source); }
  // Hands a run of the stream (run.node, run.source) to the sink, its first line at the
  // stream's next position, and counts every line of it.
  void hand_over(LineRun run, const LineSink& sink);
  // Lines counted over every stream.
  uint64_t lines() const;

  // Every row gets `status` and `detail`; with no status, each row is ok when it counted a
  // line and empty otherwise.
  std::vector<Coverage> finish(std::optional<CoverageStatus> status, const std::string& detail = "") const;

 private:
  Coverage& row(const std::string& node, const std::string& source);

  std::string node_;
  TimeUs window_start_, window_end_;
  std::vector<Coverage> rows_;                                   // in the order their streams were first seen
  std::map<std::pair<std::string, std::string>, size_t> index_;  // (node, source) -> row
};

// Joins notes with "; ", the separator of every coverage detail.
std::string join_notes(const std::vector<std::string>& notes);

}  // namespace attrib::collectors
