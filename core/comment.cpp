// The Slurm comment segment. Format (docs/verdict-reference.md):
//   attrib: <DOMAIN> [candidates=D/rule,...] [node=a,b] [gpu=pci,...] [rule=id] action=A
//           symptoms=N [unexplained=M] coverage=C/T [attempt=K] [restarts=R] [conf=medium|low]
//           [missing=node:source,...]
// symptoms is the number of distinct symptom events (each may carry a fold count);
// coverage is C nodes whose every collected source is ok or empty, of T allocated nodes.
#include "core/comment.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace attrib {

namespace {

constexpr size_t kMaxCommentLength = 1000;
constexpr const char* kSegmentPrefix = "attrib:";
constexpr const char* kSeparator = " | ";

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += separator;
    out += items[i];
  }
  return out;
}

// Cuts at a UTF-8 character boundary so the comment stays valid text.
std::string truncate_utf8(std::string text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text;
}

std::string coverage_ratio(const Verdict& verdict) {
  std::vector<std::string> allocated = verdict.nodes;
  if (allocated.empty()) {
    for (const auto& c : verdict.coverage) allocated.push_back(c.node);
  }
  std::sort(allocated.begin(), allocated.end());
  allocated.erase(std::unique(allocated.begin(), allocated.end()), allocated.end());

  // A node counts as covered when it has at least one coverage row and every row
  // says the source was read completely (ok) or had nothing in the window (empty).
  std::map<std::string, bool> complete;
  for (const auto& c : verdict.coverage) {
    const bool good = c.status == CoverageStatus::Ok || c.status == CoverageStatus::Empty;
    auto [it, inserted] = complete.emplace(c.node, good);
    if (!inserted) it->second = it->second && good;
  }
  size_t covered = 0;
  for (const auto& node : allocated) {
    auto it = complete.find(node);
    if (it != complete.end() && it->second) ++covered;
  }
  return std::to_string(covered) + "/" + std::to_string(allocated.size());
}

// Where the attrib segment starts in comment: at the very start, or right after a
// separator; npos when there is none.
size_t segment_start(const std::string& comment) {
  if (comment.rfind(kSegmentPrefix, 0) == 0) return 0;
  const std::string marker = std::string(kSeparator) + kSegmentPrefix;
  const size_t at = comment.find(marker);
  return at == std::string::npos ? std::string::npos : at + std::string(kSeparator).size();
}

}  // namespace

std::string sanitize_for_comment(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    out += (byte < 0x20 || byte == 0x7F) ? ' ' : c;
  }
  return out;
}

std::string render_comment(const Verdict& verdict) {
  std::vector<std::string> parts;
  parts.push_back(std::string(kSegmentPrefix) + " " + verdict.domain);

  if (verdict.domain == "AMBIGUOUS" && !verdict.candidates.empty()) {
    std::set<std::string> names;
    for (const auto& c : verdict.candidates) names.insert(c.domain + "/" + c.rule);
    parts.push_back("candidates=" + join({names.begin(), names.end()}, ","));
  }
  if (verdict.domain != "NONE") {
    std::vector<std::string> nodes = verdict.affected_nodes;
    std::sort(nodes.begin(), nodes.end());
    if (!nodes.empty()) parts.push_back("node=" + join(nodes, ","));
    std::set<std::string> gpus;
    for (const auto& g : verdict.affected_gpus) gpus.insert(g.pci);
    if (!gpus.empty()) parts.push_back("gpu=" + join({gpus.begin(), gpus.end()}, ","));
    if (verdict.root_cause) parts.push_back("rule=" + verdict.root_cause->rule);
    parts.push_back("action=" + verdict.recommended_action);
    parts.push_back("symptoms=" + std::to_string(verdict.symptoms.size() + verdict.symptoms_omitted));
    if (verdict.domain == "UNATTRIBUTED" || verdict.domain == "AMBIGUOUS") {
      parts.push_back("unexplained=" + std::to_string(verdict.unexplained.size() + verdict.unexplained_omitted));
    }
  }
  parts.push_back("coverage=" + coverage_ratio(verdict));
  // A requeued job has one Comment for all its attempts (slurmdbd keeps it on the newest
  // row): which attempt's verdict it shows, from the second on.
  if (verdict.attempt > 0) parts.push_back("attempt=" + std::to_string(verdict.attempt));
  // The application was started again inside the allocation after it failed: the verdict
  // judges the first failure (later ones are its symptoms).
  if (verdict.restarts > 0) parts.push_back("restarts=" + std::to_string(verdict.restarts));
  // How sure: said only when it is not high (a low verdict names a domain but acts on nothing).
  if (verdict.confidence == "medium" || verdict.confidence == "low") parts.push_back("conf=" + verdict.confidence);
  // After coverage= so that the established prefix of the segment is unchanged.
  if (!verdict.missing_sources.empty()) {
    std::set<std::string> missing;
    for (const auto& m : verdict.missing_sources) missing.insert(m.node + ":" + m.source);
    parts.push_back("missing=" + join({missing.begin(), missing.end()}, ","));
  }
  return truncate_utf8(sanitize_for_comment(join(parts, " ")), kMaxCommentLength);
}

std::string comment_segment(const std::string& comment) {
  const size_t start = segment_start(comment);
  if (start == std::string::npos) return "";
  return comment.substr(start, comment.find(kSeparator, start) - start);
}

int comment_attempt(const std::string& comment) {
  const std::string segment = comment_segment(comment);
  if (segment.empty()) return -1;
  const size_t at = segment.find(" attempt=");
  if (at == std::string::npos) return 0;
  return std::atoi(segment.c_str() + at + 9);
}

std::string merge_comment(const std::string& existing, const std::string& segment) {
  const size_t start = segment_start(existing);
  if (start != std::string::npos) {
    const size_t end = existing.find(kSeparator, start);
    std::string merged = existing.substr(0, start) + segment;
    if (end != std::string::npos) merged += existing.substr(end);
    return merged;
  }
  const bool blank = std::all_of(existing.begin(), existing.end(), [](char c) { return c == ' ' || c == '\t'; });
  if (blank) return segment;
  return existing + kSeparator + segment;
}

}  // namespace attrib
