#include "tools/attrib-reattribute/reattribution.h"

#include <algorithm>
#include <set>

#include "attributiond/store/archive_queries.h"
#include "common/evidence_archive.h"
#include "core/json_text.h"
#include "rules/evidence/bundle.h"
#include "rules/evidence/bundle_export.h"
#include "rules/engine.h"

namespace attrib::reattribute {
namespace {

Result<std::vector<store::ArchivedRun>> candidates(store::JobStore& store, const Selection& selection) {
  store::RunFilter filter;
  filter.since = selection.since;
  if (!selection.domain.empty()) filter.domains = {selection.domain};
  filter.cluster = selection.cluster;
  auto runs = store.with_read_db([&](store::Database& db) { return store::archived_runs(db, filter); });
  if (!runs || selection.jobs.empty()) return runs;
  const std::set<std::string> jobs(selection.jobs.begin(), selection.jobs.end());
  std::erase_if(*runs, [&](const store::ArchivedRun& run) { return jobs.count(run.key.job_id) == 0; });
  return runs;
}

std::string rule_of(const Verdict& v) { return v.root_cause ? v.root_cause->rule : ""; }
std::string node_of(const Verdict& v) { return v.root_cause ? v.root_cause->event.node : ""; }

// What an admin reads as a different verdict: the domain, the root cause (rule and
// node), the confidence or the action. Counts and symptom lists alone are not a change.
bool differs(const Verdict& a, const Verdict& b) {
  return a.domain != b.domain || rule_of(a) != rule_of(b) || node_of(a) != node_of(b) || a.confidence != b.confidence ||
         a.recommended_action != b.recommended_action;
}

// The run's raw evidence replayed under `pack`, in memory.
Result<Verdict> replay(const store::ArchivedEvidence& evidence, const std::shared_ptr<const rules::RulePack>& pack) {
  auto files = common::unpack_evidence(evidence.blob);
  if (!files) return files.error();
  auto bundle = rules::open_archived_bundle(std::move(*files));
  if (!bundle) return bundle.error();
  return rules::replay_bundle(*bundle, pack);
}

void judge(store::JobStore& store, const store::ArchivedRun& c, const std::shared_ptr<const rules::RulePack>& pack,
           Rejudged& out) {
  auto old = verdict_from_json(nlohmann::json::parse(c.verdict_json, nullptr, false));
  if (!old) {
    out.outcome = Outcome::Failed;
    out.detail = "the archived verdict does not parse: " + old.error().message;
    return;
  }
  out.old_domain = old->domain;
  out.old_rule = rule_of(*old);
  out.old_confidence = old->confidence;
  if (c.status != "done") {
    out.outcome = Outcome::NotFinished;
    out.detail = "its comment is not written yet (status " + c.status + ")";
    return;
  }
  auto evidence = store.evidence(c.key);
  if (!evidence) {
    out.outcome = Outcome::Failed;
    out.detail = evidence.error().message;
    return;
  }
  if (!evidence->has_value()) {
    out.outcome = c.evidence_pruned ? Outcome::Pruned : Outcome::NoEvidence;
    out.detail = c.evidence_pruned
                     ? "its raw evidence was pruned (archive retention)"
                     : "archived without raw evidence (before it was kept, or head.raw_evidence_max_kib 0)";
    return;
  }
  if (!(*evidence)->complete) {
    out.outcome = Outcome::Incomplete;
    out.detail = "its raw evidence is incomplete (" + (*evidence)->note + "): a replay would not see what the head saw";
    return;
  }
  auto verdict = replay(**evidence, pack);
  if (!verdict) {
    out.outcome = Outcome::Failed;
    out.detail = verdict.error().message;
    return;
  }
  out.new_domain = verdict->domain;
  out.new_rule = rule_of(*verdict);
  out.new_confidence = verdict->confidence;
  out.outcome = differs(*old, *verdict) ? Outcome::Changed : Outcome::Unchanged;
  if (out.outcome == Outcome::Changed) out.verdict = std::move(*verdict);
}

}  // namespace

std::string to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::Changed:
      return "changed";
    case Outcome::Unchanged:
      return "unchanged";
    case Outcome::Pruned:
      return "pruned";
    case Outcome::NoEvidence:
      return "no_evidence";
    case Outcome::Incomplete:
      return "incomplete";
    case Outcome::NotFinished:
      return "not_finished";
    case Outcome::Failed:
      return "failed";
  }
  return "failed";
}

Result<Report> rejudge(store::JobStore& store, const Selection& selection,
                       const std::shared_ptr<const rules::RulePack>& pack) {
  auto selected = candidates(store, selection);
  if (!selected) return selected.error();
  Report report;
  report.pack_version = rules::pack_version(*pack);
  report.pack_hash = rules::pack_hash(*pack);
  for (const store::ArchivedRun& c : *selected) {
    Rejudged out;
    out.key = c.key;
    judge(store, c, pack, out);
    ++report.counts[out.outcome];
    if (out.outcome == Outcome::Changed) ++report.transitions[out.old_domain + " -> " + out.new_domain];
    report.runs.push_back(std::move(out));
  }
  return report;
}

Result<int> apply(store::JobStore& store, Report& report, TimeUs now) {
  int stored = 0;
  const std::string why = "re-attributed under " + report.pack_version + " (" + report.pack_hash + ")";
  for (Rejudged& run : report.runs) {
    if (run.outcome != Outcome::Changed || !run.verdict) continue;
    auto revised = store.revise(run.key, *run.verdict, rules::events_of_verdict(*run.verdict), why, now);
    if (!revised) return revised.error();
    if (!*revised) {
      --report.counts[Outcome::Changed];
      ++report.counts[Outcome::NotFinished];
      run.outcome = Outcome::NotFinished;
      run.detail = "attributed again while this ran: not revised";
      continue;
    }
    run.applied = true;
    ++stored;
  }
  return stored;
}

nlohmann::json report_json(const Report& report) {
  nlohmann::json runs = nlohmann::json::array();
  for (const Rejudged& r : report.runs) {
    nlohmann::json row = {{"cluster", r.key.cluster},
                          {"job_id", r.key.job_id},
                          {"run", r.key.run},
                          {"outcome", to_string(r.outcome)},
                          {"old", {{"domain", r.old_domain}, {"rule", r.old_rule}, {"confidence", r.old_confidence}}}};
    if (r.outcome == Outcome::Changed || r.outcome == Outcome::Unchanged)
      row["new"] = {{"domain", r.new_domain}, {"rule", r.new_rule}, {"confidence", r.new_confidence}};
    if (!r.detail.empty()) row["detail"] = r.detail;
    if (r.applied) row["applied"] = true;
    runs.push_back(std::move(row));
  }
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& [outcome, n] : report.counts) counts[to_string(outcome)] = n;
  nlohmann::json transitions = nlohmann::json::array();
  for (const auto& [t, n] : report.transitions) transitions.push_back({{"transition", t}, {"runs", n}});
  return {{"schema", "attrib.reattribution.v1"}, {"pack_version", report.pack_version},
          {"pack_hash", report.pack_hash},       {"counts", counts},
          {"transitions", transitions},          {"runs", runs}};
}

std::string report_text(const Report& report) {
  auto count = [&](Outcome o) {
    auto it = report.counts.find(o);
    return it == report.counts.end() ? 0 : it->second;
  };
  std::string out = "Re-judged under pack " + report.pack_version + " (" + report.pack_hash +
                    "): " + std::to_string(report.runs.size()) + " runs, " + std::to_string(count(Outcome::Changed)) +
                    " changed, " + std::to_string(count(Outcome::Unchanged)) + " unchanged\n";
  std::vector<std::vector<std::string>> rows;
  for (const Rejudged& r : report.runs) {
    if (!r.verdict) continue;  // only the changed ones (also those found unfinished at --apply)
    rows.push_back({r.key.job_id, std::to_string(r.key.run), r.old_domain + " -> " + r.new_domain,
                    (r.old_rule.empty() ? "-" : r.old_rule) + " -> " + (r.new_rule.empty() ? "-" : r.new_rule),
                    (r.old_confidence.empty() ? "-" : r.old_confidence) + " -> " +
                        (r.new_confidence.empty() ? "-" : r.new_confidence),
                    r.applied ? "applied" : (r.outcome == Outcome::Changed ? "" : to_string(r.outcome))});
  }
  if (!rows.empty()) {
    const std::vector<std::string> header = {"JOB", "RUN", "DOMAIN", "RULE", "CONFIDENCE", ""};
    std::vector<size_t> width(header.size());
    for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
    for (const auto& row : rows)
      for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    auto line = [&](const std::vector<std::string>& row) {
      std::string l = " ";
      for (size_t i = 0; i < row.size(); ++i) l += " " + row[i] + std::string(width[i] - row[i].size() + 1, ' ');
      while (!l.empty() && l.back() == ' ') l.pop_back();
      return l + "\n";
    };
    out += line(header);
    for (const auto& row : rows) out += line(row);
  }
  if (!report.transitions.empty()) {
    out += "Transitions:\n";
    for (const auto& [t, n] : report.transitions) out += "  " + t + ": " + std::to_string(n) + "\n";
  }
  for (Outcome o : {Outcome::Pruned, Outcome::NoEvidence, Outcome::Incomplete, Outcome::NotFinished, Outcome::Failed}) {
    if (count(o) == 0) continue;
    out += "Not re-judged, " + to_string(o) + ": " + std::to_string(count(o)) + " runs";
    std::string first;
    for (const Rejudged& r : report.runs)
      if (r.outcome == o) {
        first = r.key.job_id + " run " + std::to_string(r.key.run) + ": " + r.detail;
        break;
      }
    out += " (e.g. job " + first + ")\n";
  }
  return out;
}

}  // namespace attrib::reattribute
