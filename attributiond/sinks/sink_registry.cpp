// The registry of verdict sinks: each enabled by its own key in the sinks section.
#include "attributiond/sinks/jsonl_sink.h"
#include "attributiond/sinks/verdict_sink.h"
#include "attributiond/sinks/webhook_sink.h"

namespace attrib::sinks {

Result<std::vector<std::unique_ptr<VerdictSink>>> make_verdict_sinks(const common::SinksConfig& sinks_config) {
  std::vector<std::unique_ptr<VerdictSink>> sinks;
  if (!sinks_config.jsonl_path.empty()) {
    auto jsonl = JsonlSink::open(sinks_config.jsonl_path);
    if (!jsonl) return jsonl.error();
    sinks.push_back(std::move(*jsonl));
  }
  if (!sinks_config.webhook_url.empty()) {
    auto webhook = WebhookSink::start(sinks_config);
    if (!webhook) return webhook.error();
    sinks.push_back(std::move(*webhook));
  }
  return sinks;
}

}  // namespace attrib::sinks
