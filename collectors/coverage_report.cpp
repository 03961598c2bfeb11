#include "collectors/coverage_report.h"

namespace attrib::collectors {

CoverageReport::CoverageReport(const CollectRequest& request, const std::vector<std::string>& sources)
    : node_(request.node), window_start_(request.window_start), window_end_(request.window_end) {
  for (const std::string& source : sources) row(node_, source);
}

Coverage& CoverageReport::row(const std::string& node, const std::string& source) {
  auto [at, added] = index_.try_emplace({node, source}, rows_.size());
  if (!added) return rows_[at->second];
  Coverage& c = rows_.emplace_back();
  c.node = node;
  c.source = source;
  c.window_start = window_start_;
  c.window_end = window_end_;
  return c;
}

uint64_t CoverageReport::next_seq(const std::string& node, const std::string& source) {
  return row(node, source).lines++;
}

void CoverageReport::hand_over(LineRun run, const LineSink& sink) {
  Coverage& c = row(run.node, run.source);
  run.first_seq = c.lines;
  c.lines += sink.run(run);
}

uint64_t CoverageReport::lines() const {
  uint64_t total = 0;
  for (const Coverage& c : rows_) total += c.lines;
  return total;
}

std::vector<Coverage> CoverageReport::finish(std::optional<CoverageStatus> status, const std::string& detail) const {
  std::vector<Coverage> out = rows_;
  for (Coverage& c : out) {
    c.status = status ? *status : (c.lines > 0 ? CoverageStatus::Ok : CoverageStatus::Empty);
    c.detail = detail;
  }
  return out;
}

std::string join_notes(const std::vector<std::string>& notes) {
  std::string out;
  for (const std::string& note : notes)
    if (!note.empty()) out += (out.empty() ? "" : "; ") + note;
  return out;
}

}  // namespace attrib::collectors
