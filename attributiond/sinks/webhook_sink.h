// The verdict webhook (sinks.webhook_url): each verdict v1 is POSTed to the receiver as
// application/json. deliver() only writes the verdict into the webhook's spool directory
// (durably); a sender thread POSTs the spooled verdicts oldest first and removes each one
// the receiver takes (2xx). A receiver that is down or answers 5xx, 408 or 429 is tried
// again after a doubling delay (1 s up to sinks.webhook_max_backoff_s); a verdict it
// refuses for good (another 4xx) moves to <spool>/rejected/, kept for the admin. Files
// left by an earlier head are sent at start: no verdict is lost to a receiver outage or a
// restart, and one may arrive twice (at least once).
#pragma once

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "attributiond/sinks/verdict_sink.h"

namespace attrib::sinks {

// The headers of every POST to the receiver: JSON, and the bearer token of
// sinks.webhook_token_file when set (read here: one line). Errors name the file.
Result<std::vector<std::string>> webhook_headers(const common::SinksConfig& config);

class WebhookSink final : public VerdictSink {
 public:
  // Creates the spool directory if missing, reads the token file, starts the sender.
  static Result<std::unique_ptr<WebhookSink>> start(const common::SinksConfig& config);
  ~WebhookSink() override;  // stops the sender (a POST in flight ends within its timeout)
  const char* name() const override { return "webhook"; }
  Status deliver(const store::JobKey& key, const std::string& verdict_json) override;
  // Verdicts spooled and not yet taken by the receiver.
  size_t pending() const;

 private:
  WebhookSink(const common::SinksConfig& config, std::vector<std::string> headers);
  void send_loop();
  // Sends one spooled verdict: true when it left the spool (taken, or rejected for good).
  bool send(const std::filesystem::path& file);

  const std::string url_;
  const std::filesystem::path spool_;
  const std::vector<std::string> headers_;
  const int timeout_ms_;
  const int max_backoff_s_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool spooled_ = false;  // deliver() added a file since the sender last looked
  std::thread sender_;
};

}  // namespace attrib::sinks
