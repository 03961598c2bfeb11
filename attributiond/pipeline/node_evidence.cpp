#include "attributiond/pipeline/node_evidence.h"

#include <algorithm>
#include <unordered_map>

#include "attributiond/ops/log_context.h"
#include "collectors/app_output_collector.h"
#include "core/json_text.h"
#include "core/utf8.h"

namespace attrib::pipeline {
namespace {

CoverageStatus status_from_string(const std::string& text) {
  // An agent speaking a newer protocol: do not claim coverage.
  return coverage_status_from(text).value_or(CoverageStatus::Failed);
}

bool was_read(CoverageStatus s) {
  return s == CoverageStatus::Ok || s == CoverageStatus::Empty || s == CoverageStatus::Partial;
}

// Rank of a status when nothing was read: the first in this list says the most.
int failure_rank(CoverageStatus s) {
  switch (s) {
    case CoverageStatus::Failed:
      return 0;
    case CoverageStatus::Timeout:
      return 1;
    case CoverageStatus::Refused:
      return 2;
    case CoverageStatus::Unavailable:
      return 3;
    default:
      return 4;
  }
}

void merge_into(Coverage& into, const Coverage& row) {
  const bool into_read = was_read(into.status), row_read = was_read(row.status);
  if (into_read && row_read) {
    if (into.status == CoverageStatus::Partial || row.status == CoverageStatus::Partial)
      into.status = CoverageStatus::Partial;
    else if (row.status == CoverageStatus::Ok)
      into.status = CoverageStatus::Ok;
  } else if (into_read || row_read) {
    CoverageStatus missing = into_read ? row.status : into.status;
    CoverageStatus read = into_read ? into.status : row.status;
    bool lost = missing == CoverageStatus::Failed || missing == CoverageStatus::Timeout;
    into.status = lost ? CoverageStatus::Partial : read;
  } else if (failure_rank(row.status) < failure_rank(into.status)) {
    into.status = row.status;
  }
  into.lines += row.lines;
  into.events += row.events;
  if (row.window_start && (!into.window_start || *row.window_start < *into.window_start))
    into.window_start = row.window_start;
  if (row.window_end && (!into.window_end || *row.window_end > *into.window_end)) into.window_end = row.window_end;
  if (!row.detail.empty()) into.detail += (into.detail.empty() ? "" : "; ") + row.detail;
}

// A (node, source) as one hash key: node names hold no NUL.
std::string row_key(const std::string& node, const std::string& source) { return node + '\0' + source; }

}  // namespace

std::vector<Coverage> merge_coverage_rows(std::vector<Coverage> rows) {
  // Linear in the rows (a job's output can name many rank streams): one hash lookup each.
  std::vector<Coverage> merged;
  std::unordered_map<std::string, size_t> index;
  index.reserve(rows.size());
  for (Coverage& row : rows) {
    auto [at, inserted] = index.try_emplace(row_key(row.node, row.source), merged.size());
    if (inserted)
      merged.push_back(std::move(row));
    else
      merge_into(merged[at->second], row);
  }
  return merged;
}

NodeEvidence collect_node(const std::shared_ptr<const rules::RulePack>& pack,
                          const std::vector<std::unique_ptr<collectors::Collector>>& collectors,
                          const collectors::CollectRequest& request, const std::vector<std::string>& only,
                          uint64_t* raw_budget_bytes) {
  NodeEvidence evidence;
  rules::Extractor extractor(pack);
  // The job's own output last: were the node's event cap reached, what is lost is the
  // user's noise, not the kernel's report (each (node, source) also has its own cap).
  std::vector<collectors::Collector*> ordered;
  for (const auto& collector : collectors)
    if (only.empty() || std::find(only.begin(), only.end(), collector->name()) != only.end())
      ordered.push_back(collector.get());
  std::stable_partition(ordered.begin(), ordered.end(), [](const collectors::Collector* c) {
    return c->name() != collectors::AppOutputCollector::kName;
  });
  const auto fits_raw_budget = [&](std::string_view text) {
    if (text.size() > *raw_budget_bytes) {
      ++evidence.raw_dropped;
      return false;
    }
    *raw_budget_bytes -= text.size();
    return true;
  };
  // A run's lines go into its stream as views of the run: no LogLine, no copy but the
  // records' own. The stream is made at the first line kept, as add() does for a line.
  const auto keep_run = [&](const LineRun& run) {
    rules::RawStream* stream = nullptr;
    for_each_payload_of(run, [&](uint64_t seq, std::optional<TimeUs> time, std::string_view text) {
      if (!fits_raw_budget(text)) return;
      if (stream == nullptr) {
        stream = &evidence.raw_lines.stream(run.node, run.source);
        stream->reserve(std::min<uint64_t>(run.text.size(), text.size() + *raw_budget_bytes));
      }
      stream->add(seq, time, run.trusted, text);
    });
  };
  for (collectors::Collector* collector : ordered) {
    ops::LogScope log_scope(request.job_id, request.node, collector->name());
    auto reported = collector->collect(request, collectors::LineSink(
                                                    [&](const LogLine& line) {
                                                      if (raw_budget_bytes != nullptr && fits_raw_budget(line.text))
                                                        evidence.raw_lines.add(line);
                                                      extractor.feed(line);
                                                    },
                                                    [&](const LineRun& run) {
                                                      if (raw_budget_bytes != nullptr) keep_run(run);
                                                      return extractor.feed_lines(run);
                                                    }));
    evidence.coverage.insert(evidence.coverage.end(), reported.begin(), reported.end());
  }
  evidence.events = extractor.finish();
  for (const auto& lost : extractor.dropped_by_stream()) {
    Coverage row;
    row.node = lost.node;
    row.source = lost.source;
    row.status = CoverageStatus::Partial;
    row.detail = std::to_string(lost.events) + " distinct events dropped: over the cap of " +
                 std::to_string(rules::Extractor::kDefaultMaxDistinctEventsPerStream) + " per source or " +
                 std::to_string(rules::Extractor::kDefaultMaxDistinctEvents) + " per node";
    evidence.coverage.push_back(std::move(row));  // merged below: the source's row becomes partial
  }
  std::unordered_map<std::string, uint64_t> events_of;
  for (const Event& e : evidence.events) events_of[row_key(e.node, e.source)] += 1;
  for (Coverage& c : evidence.coverage) c.events = 0;  // counted here, once per (node, source)
  evidence.coverage = merge_coverage_rows(std::move(evidence.coverage));
  for (Coverage& c : evidence.coverage) {
    make_valid_utf8(c.detail);  // names files and paths, which may hold any bytes
    auto it = events_of.find(row_key(c.node, c.source));
    c.events = it == events_of.end() ? 0 : it->second;
  }
  return evidence;
}

v1::CollectResponse to_proto(const NodeEvidence& evidence, const std::string& ruleset_hash) {
  v1::CollectResponse response;
  response.set_ruleset_hash(ruleset_hash);
  for (const Event& e : evidence.events) {
    v1::Event* out = response.add_events();
    out->set_kind(e.kind);
    out->set_rule(e.rule);
    out->set_node(e.node);
    out->set_source(e.source);
    out->set_has_time(e.time.has_value());
    out->set_time_us(e.time.value_or(0));
    out->set_seq(e.seq);
    out->set_trusted(e.trusted);
    out->set_line(e.line);
    out->set_fields_json(json_text(e.fields));
    out->set_count(e.count);
  }
  evidence.raw_lines.for_each([&](const LogLine& line) {
    v1::RawLine* out = response.add_raw_lines();
    out->set_source(line.source);
    out->set_has_time(line.time.has_value());
    out->set_time_us(line.time.value_or(0));
    out->set_seq(line.seq);
    out->set_trusted(line.trusted);
    out->set_text(line.text);
  });
  response.set_raw_dropped(evidence.raw_dropped);
  for (const Coverage& c : evidence.coverage) {
    v1::Coverage* out = response.add_coverage();
    out->set_node(c.node);
    out->set_source(c.source);
    out->set_status(to_string(c.status));
    out->set_lines(c.lines);
    out->set_events(c.events);
    out->set_window_start_us(c.window_start.value_or(0));
    out->set_window_end_us(c.window_end.value_or(0));
    out->set_detail(c.detail);
  }
  return response;
}

NodeEvidence from_proto(const v1::CollectResponse& response, const std::string& node) {
  NodeEvidence evidence;
  for (const v1::Event& in : response.events()) {
    Event e;
    e.kind = in.kind();
    e.rule = in.rule();
    e.node = in.node();
    e.source = in.source();
    if (in.has_time()) e.time = in.time_us();
    e.seq = in.seq();
    e.trusted = in.trusted();
    e.line = in.line();
    e.fields = nlohmann::json::parse(in.fields_json(), nullptr, /*allow_exceptions=*/false);
    if (!e.fields.is_object()) e.fields = nlohmann::json::object();
    e.count = in.count();
    evidence.events.push_back(std::move(e));
  }
  for (const v1::Coverage& in : response.coverage()) {
    Coverage c;
    c.node = in.node();
    c.source = in.source();
    c.status = status_from_string(in.status());
    c.lines = in.lines();
    c.events = in.events();
    if (in.window_start_us() != 0) c.window_start = in.window_start_us();
    if (in.window_end_us() != 0) c.window_end = in.window_end_us();
    c.detail = in.detail();
    evidence.coverage.push_back(std::move(c));
  }
  rules::RawStream* stream = nullptr;
  const std::string* stream_source = nullptr;
  for (const v1::RawLine& in : response.raw_lines()) {
    if (stream == nullptr || *stream_source != in.source()) {
      stream = &evidence.raw_lines.stream(node, in.source());
      stream_source = &in.source();
    }
    stream->add(in.seq(), in.has_time() ? std::optional<TimeUs>(in.time_us()) : std::nullopt, in.trusted(), in.text());
  }
  evidence.raw_dropped = response.raw_dropped();
  return evidence;
}

}  // namespace attrib::pipeline
