// The verdict sinks against real files and a real HTTP receiver (cpp-httplib on loopback):
// lines appended, POSTs with their headers, retries while the receiver is down, the spool
// kept across a restart, verdicts refused for good set aside.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attributiond/ops/http_server.h"
#include "attributiond/sinks/jsonl_sink.h"
#include "attributiond/sinks/verdict_sink.h"
#include "attributiond/sinks/webhook_sink.h"

namespace fs = std::filesystem;
using namespace attrib;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A webhook receiver: answers each POST with `status` and keeps what it received.
struct Receiver {
  std::mutex mutex;
  std::vector<std::string> bodies;
  std::vector<std::string> content_types;
  std::vector<std::string> authorizations;
  std::atomic<int> status{200};
  std::unique_ptr<ops::HttpServer> server;

  void start(const std::string& address) {
    auto started = ops::HttpServer::start(address, {.what = "test receiver"}, [this](httplib::Server& s) {
      s.Post("/verdicts", [this](const httplib::Request& request, httplib::Response& response) {
        std::lock_guard lock(mutex);
        bodies.push_back(request.body);
        content_types.push_back(request.get_header_value("Content-Type"));
        authorizations.push_back(request.get_header_value("Authorization"));
        response.status = status;
      });
    });
    ASSERT_TRUE(started) << started.error().message;
    server = std::move(*started);
  }
  size_t received() {
    std::lock_guard lock(mutex);
    return bodies.size();
  }
};

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = 10s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return condition();
}

std::string verdict_of(const std::string& job_id) {
  return nlohmann::json{{"schema", "attrib.verdict.v1"}, {"job_id", job_id}, {"domain", "NONE"}}.dump();
}

class SinksTest : public ::testing::Test {
 protected:
  fs::path dir_ = fs::temp_directory_path() / ("attrib-sinks-" + std::to_string(::getpid()) + "-" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  common::SinksConfig webhook_config(int port) {
    common::SinksConfig config;
    config.webhook_url = "http://127.0.0.1:" + std::to_string(port) + "/verdicts";
    config.webhook_spool_dir = (dir_ / "webhook").string();
    config.webhook_timeout_ms = 2000;
    config.webhook_max_backoff_s = 1;
    return config;
  }
};

}  // namespace

TEST_F(SinksTest, TheVerdictLogAppendsOneLinePerVerdictAfterWhatWasThere) {
  const fs::path log = dir_ / "verdicts.jsonl";
  std::ofstream(log) << "{\"earlier\":true}\n";
  auto sink = sinks::JsonlSink::open(log.string());
  ASSERT_TRUE(sink) << sink.error().message;
  ASSERT_TRUE((*sink)->deliver({"lab", "41", 0}, verdict_of("41")).ok());
  ASSERT_TRUE((*sink)->deliver({"lab", "42", 1}, verdict_of("42")).ok());
  const auto lines = lines_of(log);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "{\"earlier\":true}");
  EXPECT_EQ(nlohmann::json::parse(lines[1])["job_id"], "41");
  EXPECT_EQ(nlohmann::json::parse(lines[2])["job_id"], "42");
}

TEST_F(SinksTest, AnUnwritableVerdictLogIsAnErrorNamingTheKeyAndTheFile) {
  auto sink = sinks::JsonlSink::open((dir_ / "missing-dir" / "verdicts.jsonl").string());
  ASSERT_FALSE(sink);
  EXPECT_EQ(sink.error().code, std::string(kSinkIo));
  EXPECT_NE(sink.error().message.find("sinks.jsonl_path"), std::string::npos) << sink.error().message;
  EXPECT_NE(sink.error().message.find("missing-dir/verdicts.jsonl"), std::string::npos) << sink.error().message;
}

TEST_F(SinksTest, TheWebhookPostsEachVerdictAsJsonWithTheTokenAndEmptiesItsSpool) {
  Receiver receiver;
  receiver.start("127.0.0.1:0");
  auto config = webhook_config(receiver.server->port());
  config.webhook_token_file = (dir_ / "token").string();
  std::ofstream(config.webhook_token_file) << "s3cret\n";
  auto sink = sinks::WebhookSink::start(config);
  ASSERT_TRUE(sink) << sink.error().message;
  ASSERT_TRUE((*sink)->deliver({"lab", "7", 0}, verdict_of("7")).ok());
  ASSERT_TRUE((*sink)->deliver({"lab", "8", 0}, verdict_of("8")).ok());
  ASSERT_TRUE(eventually([&] { return receiver.received() == 2 && (*sink)->pending() == 0; }));
  std::lock_guard lock(receiver.mutex);
  EXPECT_EQ(receiver.bodies[0], verdict_of("7")) << "oldest first, byte for byte";
  EXPECT_EQ(receiver.bodies[1], verdict_of("8"));
  EXPECT_EQ(receiver.content_types[0], "application/json");
  EXPECT_EQ(receiver.authorizations[0], "Bearer s3cret");
}

TEST_F(SinksTest, VerdictsWaitInTheSpoolWhileTheReceiverIsDownAndArriveWhenItIsBack) {
  // A port nothing listens on yet: bind a server, note its port, stop it.
  int port = 0;
  {
    Receiver probe;
    probe.start("127.0.0.1:0");
    port = probe.server->port();
  }
  auto sink = sinks::WebhookSink::start(webhook_config(port));
  ASSERT_TRUE(sink) << sink.error().message;
  ASSERT_TRUE((*sink)->deliver({"lab", "9", 0}, verdict_of("9")).ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ((*sink)->pending(), 1u) << "kept while nobody answers";
  Receiver receiver;
  receiver.start("127.0.0.1:" + std::to_string(port));
  ASSERT_TRUE(eventually([&] { return receiver.received() == 1 && (*sink)->pending() == 0; }));
}

TEST_F(SinksTest, AHeadThatRestartsSendsWhatTheLastOneLeftInTheSpool) {
  Receiver receiver;
  receiver.start("127.0.0.1:0");
  receiver.status = 503;  // the receiver is unwell: nothing is taken
  auto config = webhook_config(receiver.server->port());
  {
    auto sink = sinks::WebhookSink::start(config);
    ASSERT_TRUE(sink) << sink.error().message;
    ASSERT_TRUE((*sink)->deliver({"lab", "10", 0}, verdict_of("10")).ok());
    ASSERT_TRUE(eventually([&] { return receiver.received() >= 1; }));
    EXPECT_EQ((*sink)->pending(), 1u) << "a 503 is tried again, not dropped";
  }  // the head stops
  receiver.status = 204;
  const size_t before = receiver.received();
  auto sink = sinks::WebhookSink::start(config);
  ASSERT_TRUE(sink) << sink.error().message;
  ASSERT_TRUE(eventually([&] { return receiver.received() > before && (*sink)->pending() == 0; }));
  std::lock_guard lock(receiver.mutex);
  EXPECT_EQ(receiver.bodies.back(), verdict_of("10"));
}

TEST_F(SinksTest, AVerdictTheReceiverRefusesForGoodIsSetAsideAndTheNextOneSent) {
  Receiver receiver;
  receiver.start("127.0.0.1:0");
  receiver.status = 400;
  auto config = webhook_config(receiver.server->port());
  auto sink = sinks::WebhookSink::start(config);
  ASSERT_TRUE(sink) << sink.error().message;
  ASSERT_TRUE((*sink)->deliver({"lab", "11", 0}, verdict_of("11")).ok());
  ASSERT_TRUE(eventually([&] { return (*sink)->pending() == 0; }));
  size_t rejected = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(config.webhook_spool_dir) / "rejected")) {
    ++rejected;
    std::ifstream in(entry.path());
    std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(body, verdict_of("11"));
  }
  EXPECT_EQ(rejected, 1u);
  receiver.status = 200;
  ASSERT_TRUE((*sink)->deliver({"lab", "12", 0}, verdict_of("12")).ok());
  ASSERT_TRUE(eventually([&] { return receiver.received() == 2 && (*sink)->pending() == 0; }));
}

TEST_F(SinksTest, TheRegistryMakesWhatTheConfigurationEnablesAndNamesWhatIsWrong) {
  auto none = sinks::make_verdict_sinks({});
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty()) << "no sink unless configured";
  common::SinksConfig config;
  config.jsonl_path = (dir_ / "verdicts.jsonl").string();
  auto one = sinks::make_verdict_sinks(config);
  ASSERT_TRUE(one) << one.error().message;
  ASSERT_EQ(one->size(), 1u);
  EXPECT_STREQ((*one)[0]->name(), "jsonl");
  config.webhook_url = "ftp://receiver/verdicts";
  auto bad = sinks::make_verdict_sinks(config);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, std::string(kSinkConfig));
  EXPECT_NE(bad.error().message.find("sinks.webhook_url"), std::string::npos) << bad.error().message;
}
