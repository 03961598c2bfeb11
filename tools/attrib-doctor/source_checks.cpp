#include "tools/attrib-doctor/source_checks.h"

#include "attributiond/sinks/webhook_sink.h"
#include "collectors/http_client.h"
#include "collectors/registry.h"

namespace attrib::doctor {

void check_metric_sources(const common::Config& config, const std::string& node, TimeUs now, Findings& out) {
  constexpr TimeUs kFiveMinutes = 300LL * 1000 * 1000;
  for (const common::CollectorConfig& entry : config.collectors) {
    if (entry.kind != "prometheus" && entry.kind != "loki") continue;
    const std::string check = entry.kind + " (" + config.path + ":" + std::to_string(entry.line) + ")";
    auto collector = collectors::create_collector(entry.kind, entry.options);
    if (!collector) {
      out.fail("source", check, collector.error().message, "fix that entry of collectors");
      continue;
    }
    uint64_t lines = 0;
    const auto coverage = (*collector)
                              ->collect({.job_id = "attrib-doctor",
                                         .node = node,
                                         .window_start = now - kFiveMinutes,
                                         .window_end = now,
                                         .cluster = config.cluster},
                                        [&](const LogLine&) { ++lines; });
    bool failed = false;
    for (const Coverage& row : coverage) {
      if (row.status == CoverageStatus::Failed || row.status == CoverageStatus::Timeout) {
        failed = true;
        out.fail("source", check, std::string(to_string(row.status)) + ": " + row.detail,
                 "check the URL and queries of that entry against the server (it answered the daemon's query so)");
      }
    }
    if (!failed)
      out.ok("source", check,
             "answered for node " + node + " over the last 5 min: " + std::to_string(lines) + " lines");
  }
}

void check_webhook(const common::Config& config, bool send_test, Findings& out) {
  const common::SinksConfig& sinks = config.sinks;
  if (sinks.webhook_url.empty()) return;
  auto headers = sinks::webhook_headers(sinks);
  if (!headers) {
    out.fail("source", "webhook", headers.error().message, "fix sinks.webhook_token_file in " + config.path);
    return;
  }
  if (!send_test) {
    out.ok("source", "webhook", sinks.webhook_url + " configured (not tried: --send-test sends one test POST)");
    return;
  }
  const std::string body = R"({"schema":"attrib.doctor_test.v1","cluster":)" + nlohmann::json(config.cluster).dump() +
                           R"(,"message":"attrib-doctor --send-test: not a verdict"})";
  auto answer = collectors::http_post(sinks.webhook_url, body, *headers, sinks.webhook_timeout_ms);
  if (!answer) {
    out.fail("source", "webhook", sinks.webhook_url + ": " + answer.error().message,
             "check sinks.webhook_url and that the receiver runs");
  } else if (answer->status < 200 || answer->status >= 300) {
    out.fail(
        "source", "webhook",
        sinks.webhook_url + " answered HTTP " + std::to_string(answer->status) + ": " + answer->body.substr(0, 120),
        answer->status == 401 || answer->status == 403 ? "check sinks.webhook_token_file against the receiver"
                                                       : "check the receiver's log");
  } else {
    out.ok("source", "webhook", sinks.webhook_url + " took a test POST (HTTP " + std::to_string(answer->status) + ")");
  }
}

}  // namespace attrib::doctor
