#include "tools/attrib-show/fleet_text.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace attrib::show {
namespace {

using Row = std::vector<std::string>;

// Columns padded to their widest cell, two spaces apart, indented by two.
std::string table(const Row& header, const std::vector<Row>& rows) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const Row& row : rows)
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  auto line = [&](const Row& row) {
    std::string out = " ";
    for (size_t i = 0; i < row.size(); ++i) {
      out += " " + row[i];
      if (i + 1 < row.size()) out += std::string(width[i] - row[i].size() + 1, ' ');
    }
    return out + "\n";
  };
  std::string out = line(header);
  for (const Row& row : rows) out += line(row);
  return out;
}

std::string text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "-";
  return value.dump();
}

// "2026-11-30T10:03:12.123456Z" -> "2026-11-30 10:03:12": seconds are enough to read.
std::string short_time(const nlohmann::json& value) {
  if (!value.is_string()) return "-";
  std::string t = value.get<std::string>();
  if (t.size() >= 19) {
    t = t.substr(0, 19);
    t[10] = ' ';
  }
  return t;
}

std::string dash(const std::string& s) { return s.empty() ? "-" : s; }

std::string window(int64_t seconds) {
  if (seconds % 86400 == 0) return std::to_string(seconds / 86400) + "d";
  if (seconds % 3600 == 0) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds) + "s";
}

std::string plural(int64_t n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

std::string join(const nlohmann::json& list) {
  std::string out;
  for (const auto& item : list) out += (out.empty() ? "" : ", ") + text(item);
  return out;
}

std::string since_text(const nlohmann::json& report) {
  return report["since"].is_null() ? std::string("ever") : "since " + short_time(report["since"]) + " UTC";
}

}  // namespace

std::string render_node_history_text(const nlohmann::json& report) {
  const auto& policy = report["policy"];
  std::string win = window(policy.value("offender_window_s", int64_t{0}));
  int threshold = policy.value("offender_threshold", 0);
  std::string out = "Node " + text(report["node"]) + ": ";
  int64_t counted = report.value("counted", int64_t{0});
  if (report.value("offender", false))
    out += "REPEAT OFFENDER: " + plural(counted, "counted verdict") + " in " + win + " (threshold " +
           std::to_string(threshold) + ")\n";
  else
    out += "not a repeat offender: " + plural(counted, "counted verdict") + " in " + win + " (threshold " +
           std::to_string(threshold) + ")\n";
  for (const auto& o : report["offenders"]) {
    if (text(o["gpu"]).empty()) continue;
    out += "  GPU " + text(o["gpu"]) + ": " + (o.value("offender", false) ? "REPEAT OFFENDER, " : "") +
           plural(o.value("verdicts", int64_t{0}), "counted verdict") + " (jobs " + join(o["job_ids"]) + ")" +
           (o.value("basis", "") == "app_class_xid" ? ": application-class Xids from several users' jobs" : "") +
           (o.value("advisory", false) ? " (advisory: no hardware evidence on this GPU, never acted on)" : "") + "\n";
  }
  out += "  Counted: trusted root causes in " + join(policy["offender_domains"]) + "\n";
  for (const auto& e : report["systemic"])
    out += "  Systemic event " + short_time(e["from"]) + " .. " + short_time(e["to"]) + ": " +
           std::to_string(e.value("nodes", 0)) + " nodes blamed (" + text(e["domain"]) +
           "); its verdicts mark no node\n";

  const auto& verdicts = report["verdicts"];
  out += "\nVerdicts blaming " + text(report["node"]) + " " + since_text(report) + ": " +
         std::to_string(verdicts.size()) +
         (report.value("truncated", false) ? " (the newest; older ones: narrow --since)" : "") + "\n";
  if (!verdicts.empty()) {
    std::vector<Row> rows;
    for (const auto& v : verdicts)
      rows.push_back({short_time(v["time"]), text(v["job_id"]), dash(text(v["user"])), text(v["state"]),
                      text(v["domain"]), text(v["rule"]), dash(text(v["gpu"])), text(v["action"]),
                      v.value("counts", false) ? "yes" : (v.value("trusted", false) ? "no" : "no (untrusted)")});
    out += table({"TIME (UTC)", "JOB", "USER", "STATE", "DOMAIN", "RULE", "GPU", "ACTION", "COUNTS"}, rows);
  }
  const auto& actions = report["remediation"];
  out += "\nRemediation " + since_text(report) + ": " + std::to_string(actions.size()) + "\n";
  if (!actions.empty()) {
    std::vector<Row> rows;
    for (const auto& a : actions)
      rows.push_back({short_time(a["time"]), text(a["job_id"]), text(a["action"]), "\"" + text(a["reason"]) + "\"",
                      text(a["detail"])});
    out += table({"TIME (UTC)", "JOB", "ACTION", "REASON", "DETAIL"}, rows);
  }
  return out;
}

std::string render_verdict_list_text(const nlohmann::json& report) {
  std::string domain = text(report["domain"]);
  const auto& verdicts = report["verdicts"];
  std::string out =
      "Verdicts " + since_text(report) + (domain.empty() ? " (every domain but NONE)" : " in " + domain) +
      (report.value("own_jobs_only", false) ? ", your jobs only" : "") + ": " + std::to_string(verdicts.size()) +
      (report.value("truncated", false) ? " (the first; more follow: narrow --since or --domain)" : "") + "\n";
  if (!verdicts.empty()) {
    std::vector<Row> rows;
    for (const auto& v : verdicts) {
      std::string node = text(v["node"]);
      if (node.empty()) node = join(v["affected_nodes"]);
      rows.push_back({short_time(v["time"]), text(v["job_id"]), dash(text(v["user"])), text(v["state"]),
                      text(v["domain"]), dash(node), dash(text(v["rule"])), text(v["action"])});
    }
    out += table({"TIME (UTC)", "JOB", "USER", "STATE", "DOMAIN", "NODE", "RULE", "ACTION"}, rows);
  }
  out += "\nBy domain:\n";
  std::vector<Row> rows;
  for (const auto& c : report["counts"]) rows.push_back({text(c["domain"]), std::to_string(c.value("jobs", 0))});
  if (rows.empty())
    out += "  (no verdicts)\n";
  else
    out += table({"DOMAIN", "JOBS"}, rows);
  return out;
}

std::string render_failed_list_text(const nlohmann::json& report) {
  const auto& jobs = report["jobs"];
  std::string out = "Jobs given up after repeated failures" +
                    std::string(report.value("own_jobs_only", false) ? ", your jobs only" : "") + ": " +
                    std::to_string(jobs.size()) + "\n";
  if (jobs.empty()) return out;
  std::vector<Row> rows;
  for (const auto& j : jobs)
    rows.push_back({short_time(j["failed"]), text(j["job_id"]), dash(text(j["user"])),
                    std::to_string(j.value("failures", 0)), text(j["last_error"])});
  return out + table({"GIVEN UP (UTC)", "JOB", "USER", "FAILURES", "LAST ERROR"}, rows);
}

std::string render_array_rollup_text(const nlohmann::json& report) {
  auto counts = [](const nlohmann::json& by) {
    std::vector<std::pair<int64_t, std::string>> sorted;
    for (const auto& [name, count] : by.items()) sorted.emplace_back(count.get<int64_t>(), name);
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string out;
    for (const auto& [count, name] : sorted) out += (out.empty() ? "" : ", ") + name + " " + std::to_string(count);
    return dash(out);
  };
  const int64_t waiting = report.value("waiting", int64_t{0});
  std::string out = "Array job " + text(report["array_job_id"]) + " on " + text(report["cluster"]) + ": " +
                    plural(report.value("tasks", int64_t{0}), "task") + " judged" +
                    (waiting > 0 ? ", " + std::to_string(waiting) + " waiting" : "") + "\n";
  out += "  Domains: " + counts(report["domains"]) + "\n";
  out += "  States:  " + counts(report["states"]) + "\n";
  for (const char* kind : {"recurring_nodes", "recurring_gpus"})
    for (const auto& r : report[kind]) {
      const std::string where = text(r["node"]) + (r.contains("gpu") ? " GPU " + text(r["gpu"]) : "");
      out += "  Recurs:  " + where + " blamed by " + plural(r.value("tasks", int64_t{0}), "task") + " (" +
             counts(r["domains"]) + "): " + join(r["task_ids"]) + "\n";
    }
  const auto& failed = report["failed_tasks"];
  if (failed.empty()) return out;
  std::vector<Row> rows;
  for (const auto& t : failed)
    rows.push_back({text(t["job_id"]), text(t["state"]), text(t["domain"]), dash(text(t["rule"])),
                    dash(text(t["node"])), dash(text(t["gpu"]))});
  out += "Tasks that did not succeed:\n" + table({"TASK", "STATE", "DOMAIN", "RULE", "NODE", "GPU"}, rows);
  if (const int64_t omitted = report.value("failed_tasks_omitted", int64_t{0}); omitted > 0)
    out += "  ... and " + std::to_string(omitted) + " more (attrib-show --since ... lists them)\n";
  return out + "One task: attrib-show " + text(report["array_job_id"]) + "_<task>\n";
}

std::string render_archive_stats_text(const nlohmann::json& report) {
  const auto mib = [](const nlohmann::json& bytes) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f MiB", bytes.is_number() ? bytes.get<double>() / (1024 * 1024) : 0.0);
    return std::string(buffer);
  };
  const auto number = [](const nlohmann::json& value) { return value.is_number() ? value.dump() : "-"; };
  const auto days = [&](const nlohmann::json& value, const char* none) {
    return value.is_number() && value.get<int64_t>() > 0 ? value.dump() + " days" : std::string(none);
  };
  // A member the daemon did not send reads as null (an older daemon), never as a throw.
  const auto at = [](const nlohmann::json& object, const char* key) {
    return object.is_object() && object.contains(key) ? object[key] : nlohmann::json();
  };
  const nlohmann::json evidence = at(report, "evidence");
  const nlohmann::json retention = at(report, "retention");
  std::string out;
  out += "Archive:   " + mib(at(report, "used_bytes")) + " in use, file " + mib(at(report, "file_bytes")) + "\n";
  out += "Runs:      " + number(at(report, "runs")) + " (" + number(at(report, "queued")) + " not done, " +
         number(at(report, "dead_lettered")) + " given up), oldest " + short_time(at(report, "oldest_run")) + ", newest " +
         short_time(at(report, "newest_run")) + "\n";
  out += "Evidence:  raw evidence of " + number(at(evidence, "runs")) + " runs, " + mib(at(evidence, "stored_bytes")) +
         " stored (" + mib(at(evidence, "raw_bytes")) + " raw), oldest " + short_time(at(evidence, "oldest")) + "; pruned from " +
         number(at(evidence, "pruned_runs")) + " runs\n";
  const nlohmann::json cap = at(retention, "max_bytes");
  const bool capped = cap.is_number() && cap.get<double>() > 0;
  out += "Retention: raw evidence " + days(at(retention, "evidence_retention_days"), "kept") + ", runs " +
         days(at(retention, "retention_days"), "kept") + ", cap " + (capped ? mib(cap) : "none") +
         ", applied every " + number(at(retention, "prune_interval_s")) + " s\n";
  return out;
}

}  // namespace attrib::show
