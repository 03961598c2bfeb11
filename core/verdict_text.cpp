#include "core/verdict_text.h"

#include <algorithm>
#include <sstream>

#include "core/terminal_text.h"

namespace attrib {
namespace {

std::string time_or_dash(const std::optional<TimeUs>& t) { return t ? format_time(*t) : "-"; }

std::string shorten(const std::string& text, size_t max) {
  return text.size() <= max ? text : text.substr(0, max - 3) + "...";
}

std::string event_line(const Event& e) {
  std::ostringstream out;
  out << e.node << " " << e.source << (e.trusted ? "" : " (untrusted)") << " " << time_or_dash(e.time);
  if (e.count > 1) out << " x" << e.count;
  out << "\n      " << shorten(e.line, 200);
  return out.str();
}

// Left-aligned columns sized to their widest cell.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::ostringstream out;
  for (const auto& row : rows) {
    out << "  ";
    for (size_t i = 0; i < row.size(); ++i) {
      out << row[i];
      if (i + 1 < row.size()) out << std::string(width[i] - row[i].size() + 2, ' ');
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace

std::string render_verdict_text(const Verdict& v) {
  std::ostringstream out;
  out << "Job " << v.job_id << " on cluster " << v.cluster << ": " << v.terminal_state << " (exit " << v.exit_code
      << ", signal " << v.signal << ")";
  if (v.attempt > 0) out << ", attempt " << v.attempt;
  out << "\n";
  if (!v.scheduler.empty())
    out << "Run by " << v.scheduler << ", judged from the observations its caller handed in (attribution API)\n";
  if (v.restarts > 0)
    out << "Restarted " << v.restarts << (v.restarts == 1 ? " time" : " times")
        << " inside the allocation after failing; the first failure is judged\n";
  if (!v.components.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const JobComponent& c : v.components) {
      std::string nodes;
      for (const auto& n : c.nodes) nodes += (nodes.empty() ? "" : ",") + n;
      rows.push_back({c.job_id, c.state, "exit " + std::to_string(c.exit_code) + ":" + std::to_string(c.signal),
                      nodes.empty() ? "-" : nodes});
    }
    out << "Heterogeneous job, one verdict for its " << v.components.size() << " components:\n" << table(rows);
  }
  out << "Domain:       " << v.domain << "\n";
  if (v.root_cause) {
    out << "Root cause:   " << v.root_cause->summary << "\n";
    out << "Rule:         " << v.root_cause->rule << "\n";
  }
  // A node is named once: with its GPU when the verdict names one.
  std::string where;
  for (const auto& n : v.affected_nodes) {
    bool has_gpu =
        std::any_of(v.affected_gpus.begin(), v.affected_gpus.end(), [&](const auto& g) { return g.node == n; });
    if (!has_gpu) where += (where.empty() ? "" : ", ") + n;
  }
  for (const auto& g : v.affected_gpus) where += (where.empty() ? "" : ", ") + g.node + " GPU " + g.pci;
  out << "Node/GPU:     " << (where.empty() ? "-" : where) << "\n";
  out << "Action:       " << v.recommended_action << "\n";
  if (!v.confidence.empty()) out << "Confidence:   " << v.confidence << "\n";
  if (v.root_cause) out << "Evidence:\n    " << event_line(v.root_cause->event) << "\n";

  if (!v.candidates.empty()) {
    out << "Candidates (" << v.candidates.size() << "):\n";
    for (const auto& c : v.candidates) out << "    " << c.domain << "  " << c.rule << ": " << c.summary << "\n";
  }
  if (!v.missing_sources.empty()) {
    out << "Missing (" << v.missing_sources.size() << "):\n";
    for (const auto& m : v.missing_sources) {
      out << "    " << m.note;
      if (!m.named_by.empty()) {
        out << " (named by";
        for (const auto& id : m.named_by) out << " " << id;
        out << ")";
      }
      out << "\n";
    }
  }
  uint64_t symptom_count = 0;
  for (const auto& s : v.symptoms) symptom_count += s.count;
  out << "Symptoms (" << v.symptoms.size() << " events, " << symptom_count << " lines):\n";
  for (const auto& s : v.symptoms)
    out << "    [" << s.event.kind << ", explained by " << s.explained_by << "] " << event_line(s.event) << "\n";
  if (v.symptoms_omitted > 0) out << "    ... and " << v.symptoms_omitted << " more events, not listed\n";
  if (!v.unexplained.empty()) {
    out << "Unexplained (" << v.unexplained.size() << "):\n";
    for (const auto& e : v.unexplained) out << "    [" << e.kind << "] " << event_line(e) << "\n";
    if (v.unexplained_omitted > 0) out << "    ... and " << v.unexplained_omitted << " more events, not listed\n";
  }

  if (v.hung_rank) out << "Hung rank:    " << v.hung_rank->summary << "\n";

  if (!v.neighbours.empty()) {
    out << "Neighbours (" << v.neighbours.size() << ", context, not this job's evidence):\n";
    for (const auto& n : v.neighbours) out << "    " << n.summary << "\n        " << event_line(n.event) << "\n";
    if (v.neighbours_omitted > 0) out << "    ... and " << v.neighbours_omitted << " more, not listed\n";
  }

  out << "Coverage:\n";
  std::vector<std::vector<std::string>> rows = {{"NODE", "SOURCE", "STATUS", "LINES", "EVENTS", "DETAIL"}};
  for (const auto& c : v.coverage)
    rows.push_back(
        {c.node, c.source, to_string(c.status), std::to_string(c.lines), std::to_string(c.events), c.detail});
  out << table(rows);
  out << "Ruleset:      " << v.ruleset_version << " " << v.ruleset_hash << "\n";
  out << "Comment:      " << v.comment << "\n";
  return terminal_safe(out.str());
}

}  // namespace attrib
