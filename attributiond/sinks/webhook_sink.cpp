#include "attributiond/sinks/webhook_sink.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include <spdlog/spdlog.h>

#include "collectors/http_client.h"
#include "common/spool_file.h"
#include "core/clock.h"

namespace attrib::sinks {
namespace fs = std::filesystem;

namespace {

constexpr const char* kVerdictSuffix = ".verdict.json";

// The spooled verdicts, oldest first (their names start with the time they were spooled).
std::vector<fs::path> spooled(const fs::path& dir) { return common::list_files_with_suffix(dir, kVerdictSuffix); }

bool retried(long status) { return status >= 500 || status == 408 || status == 429; }

}  // namespace

Result<std::vector<std::string>> webhook_headers(const common::SinksConfig& config) {
  std::vector<std::string> headers = {"Content-Type: application/json"};
  if (config.webhook_token_file.empty()) return headers;
  auto text = common::read_file_bytes(config.webhook_token_file);
  if (!text) return Error{kSinkConfig, "sinks.webhook_token_file: " + text.error().message};
  std::string token = std::move(*text);
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  if (token.empty() || token.find_first_of("\r\n") != std::string::npos)
    return Error{kSinkConfig, "sinks.webhook_token_file: " + config.webhook_token_file + " must hold one line"};
  headers.push_back("Authorization: Bearer " + token);
  return headers;
}

Result<std::unique_ptr<WebhookSink>> WebhookSink::start(const common::SinksConfig& config) {
  if (!config.webhook_url.starts_with("http://") && !config.webhook_url.starts_with("https://"))
    return Error{kSinkConfig, "sinks.webhook_url: not an http(s) URL: '" + config.webhook_url + "'"};
  std::error_code ec;
  fs::create_directories(fs::path(config.webhook_spool_dir) / "rejected", ec);
  if (ec)
    return Error{kSinkIo, "sinks.webhook_spool_dir: cannot create " + config.webhook_spool_dir + ": " + ec.message()};
  auto headers = webhook_headers(config);
  if (!headers) return headers.error();
  std::unique_ptr<WebhookSink> sink(new WebhookSink(config, std::move(*headers)));
  sink->sender_ = std::thread([raw = sink.get()] { raw->send_loop(); });
  return sink;
}

WebhookSink::WebhookSink(const common::SinksConfig& config, std::vector<std::string> headers)
    : url_(config.webhook_url),
      spool_(config.webhook_spool_dir),
      headers_(std::move(headers)),
      timeout_ms_(config.webhook_timeout_ms),
      max_backoff_s_(config.webhook_max_backoff_s) {}

WebhookSink::~WebhookSink() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (sender_.joinable()) sender_.join();
}

Status WebhookSink::deliver(const store::JobKey& key, const std::string& verdict_json) {
  const std::string name = std::to_string(wall_clock_us()) + "_" + common::safe_file_name(key.cluster) + "_" +
                           common::safe_file_name(key.job_id) + "_" + std::to_string(key.run) + kVerdictSuffix;
  auto written = common::write_file_durably(spool_, name, verdict_json);
  if (!written) return Error{kSinkIo, "webhook spool: " + written.error().message};
  {
    std::lock_guard lock(mutex_);
    spooled_ = true;
  }
  wake_.notify_all();
  return ok_status();
}

size_t WebhookSink::pending() const { return spooled(spool_).size(); }

bool WebhookSink::send(const fs::path& file) {
  auto body = common::read_file_bytes(file);
  if (!body) {  // unreadable: set aside like a refused verdict (a file gone meanwhile stays gone)
    std::error_code ec;
    fs::rename(file, spool_ / "rejected" / file.filename(), ec);
    spdlog::error("webhook: {}; set aside in {}", body.error().message, (spool_ / "rejected").string());
    return true;
  }
  auto answer = collectors::http_post(url_, *body, headers_, timeout_ms_);
  if (!answer) {
    spdlog::warn("webhook: {} not delivered, tried again later: {}", file.filename().string(), answer.error().message);
    return false;
  }
  if (answer->status >= 200 && answer->status < 300) {
    std::error_code ec;
    fs::remove(file, ec);
    return true;
  }
  if (retried(answer->status)) {
    spdlog::warn("webhook: {} answered {} for {}, tried again later: {}", url_, answer->status,
                 file.filename().string(), collectors::body_excerpt(answer->body));
    return false;
  }
  std::error_code ec;
  fs::rename(file, spool_ / "rejected" / file.filename(), ec);
  spdlog::error("webhook: {} refused {} with {} ({}); kept in {}", url_, file.filename().string(), answer->status,
                collectors::body_excerpt(answer->body), (spool_ / "rejected").string());
  return true;
}

void WebhookSink::send_loop() {
  using namespace std::chrono_literals;
  std::chrono::seconds backoff = 1s;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      if (stopping_) return;
      spooled_ = false;
    }
    bool failed = false;
    for (const fs::path& file : spooled(spool_)) {
      if (!send(file)) {
        failed = true;
        break;  // oldest first: the rest wait for this one
      }
      backoff = 1s;
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    std::unique_lock lock(mutex_);
    if (failed) {
      // A new verdict does not cut the wait short: the receiver is down for it too.
      wake_.wait_for(lock, backoff, [this] { return stopping_; });
      backoff = std::min<std::chrono::seconds>(backoff * 2, std::chrono::seconds(max_backoff_s_));
    } else {
      // A rescan now and then also sends files another process put into the spool.
      wake_.wait_for(lock, 60s, [this] { return stopping_ || spooled_; });
    }
  }
}

}  // namespace attrib::sinks
