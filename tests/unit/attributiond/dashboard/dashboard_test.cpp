// The web dashboard's queries and HTTP API over a real archive: verdicts made by the real
// rules engine from golden fixtures, stored by the real JobStore (tests/support/
// dashboard_archive.h). Its login against a private, real munged: credentials of root
// and of an ordinary user (made in a child that dropped to uid 65534), expired,
// replayed, forged and made-for-an-RPC ones. The page itself is driven in a real browser
// by tests/browser/.
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "attributiond/dashboard/dashboard_server.h"
#include "attributiond/store/archive_queries.h"
#include "attributiond/store/dashboard_queries.h"
#include "common/auth.h"
#include "core/clock.h"
#include "tests/support/dashboard_archive.h"
#include "tests/support/history_rows.h"
#include "tests/support/private_munged.h"
#include "tests/support/run_as.h"
#include "tests/support/test_paths.h"


namespace fs = std::filesystem;
using namespace attrib;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

constexpr uid_t kNobody = 65534;
constexpr TimeUs kHourUs = 3600LL * 1000000;

std::set<std::string> ids(const store::VerdictPage& page) {
  std::set<std::string> out;
  for (const auto& row : page.rows) out.insert(row.job_id);
  return out;
}

std::set<std::string> ids(const json& body) {
  std::set<std::string> out;
  for (const auto& row : body["verdicts"]) out.insert(row["job_id"].get<std::string>());
  return out;
}

// A filter without designated initializers (-Wmissing-field-initializers).
store::VerdictFilter Filter(std::string domain, std::string node = "", std::string user = "", std::string state = "",
                            std::optional<TimeUs> since = {}, std::optional<TimeUs> until = {}) {
  store::VerdictFilter filter;
  filter.domain = std::move(domain);
  filter.node = std::move(node);
  filter.user = std::move(user);
  filter.state = std::move(state);
  filter.since_us = since;
  filter.until_us = until;
  return filter;
}

store::VerdictFilter Since(TimeUs since, std::optional<TimeUs> until = {}) {
  return Filter("", "", "", "", since, until);
}

}  // namespace

// ---- queries and the API without authentication -----------------------------------------

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attrib-dashboard-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    database_ = (dir_ / "attrib.db").string();
    now_ = wall_clock_us();
    auto written = test::write_archive(database_, fs::path(attrib::test::source_dir()) / "tests/fixtures", attrib::test::rules_pack_dir(),
                                       test::known_jobs(now_, users_));
    ASSERT_TRUE(written) << written.error().code << " " << written.error().message;
  }
  void TearDown() override {
    server_.reset();
    fs::remove_all(dir_);
  }

  void StartServer(std::shared_ptr<const common::Authenticator> authenticator) {
    dashboard::DashboardOptions options;
    options.listen = "127.0.0.1:0";
    options.database = database_;
    options.authenticator = std::move(authenticator);
    auto server = dashboard::DashboardServer::start(options);
    ASSERT_TRUE(server) << server.error().message;
    server_ = std::move(*server);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }

  std::unique_ptr<store::DashboardQueries> Queries() {
    auto opened = store::DashboardQueries::open(database_);
    EXPECT_TRUE(opened) << opened.error().message;
    return opened ? std::move(*opened) : nullptr;
  }

  json GetJson(const std::string& path, int expected_status = 200, const httplib::Headers& headers = {}) {
    auto response = client_->Get(path, headers);
    EXPECT_TRUE(response) << path;
    if (!response) return json();
    EXPECT_EQ(response->status, expected_status) << path << ": " << response->body;
    return json::parse(response->body, nullptr, false);
  }

  fs::path dir_;
  std::string database_;
  TimeUs now_ = 0;
  test::ArchiveUsers users_;
  std::unique_ptr<dashboard::DashboardServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(DashboardTest, AdminSeesEveryVerdictNewestFirst) {
  auto queries = Queries();
  ASSERT_TRUE(queries);
  auto page = queries->verdicts({}, store::Viewer{true, 0});
  ASSERT_TRUE(page) << page.error().message;
  ASSERT_EQ(page->rows.size(), 9u);
  EXPECT_FALSE(page->truncated);
  EXPECT_EQ(page->rows.front().job_id, "5006");  // 1 h ago
  EXPECT_EQ(page->rows.back().job_id, "5009");   // 40 days ago
  const auto& first = page->rows[1];             // 5001, 2 h ago
  EXPECT_EQ(first.job_id, "5001");
  EXPECT_EQ(first.domain, "GPU_HARDWARE");
  EXPECT_EQ(first.state, "FAILED");
  EXPECT_EQ(first.rule, "gpu.fallen_off_bus");
  EXPECT_EQ(first.action, "DRAIN_NODE");
  EXPECT_EQ(first.user, "alice");
  EXPECT_EQ(first.uid, 2001u);
  EXPECT_EQ(first.status, "done");
  EXPECT_EQ(first.affected_nodes, std::vector<std::string>{"gpu017"});
  EXPECT_EQ(first.nodes, (std::vector<std::string>{"gpu001", "gpu002", "gpu017"}));
}

TEST_F(DashboardTest, FiltersNarrowTheList) {
  auto queries = Queries();
  store::Viewer admin{true, 0};
  auto by = [&](store::VerdictFilter filter) { return ids(*queries->verdicts(filter, admin)); };
  EXPECT_EQ(by(Filter("GPU_HARDWARE")), (std::set<std::string>{"5001", "5002", "5008"}));
  EXPECT_EQ(by(Filter("", "gpu017")), (std::set<std::string>{"5001", "5002", "5007"}));
  EXPECT_EQ(by(Filter("", "", "bob")), (std::set<std::string>{"5002", "5004", "5006", "5008"}));
  EXPECT_EQ(by(Filter("", "", "2002")), by(Filter("", "", "bob")));
  EXPECT_EQ(by(Filter("", "", "", "TIMEOUT")), (std::set<std::string>{"5005"}));
  EXPECT_EQ(by(Filter("GPU_HARDWARE", "gpu007")), (std::set<std::string>{"5008"}));
  EXPECT_EQ(by(Since(now_ - 4 * kHourUs)), (std::set<std::string>{"5001", "5003", "5006"}));
  EXPECT_EQ(by(Since(now_ - 31 * kHourUs, now_ - 4 * kHourUs)), (std::set<std::string>{"5002", "5004", "5005"}));
  EXPECT_TRUE(by(Filter("NVLINK_FABRIC")).empty());
  // A filter is a bound value, never SQL.
  EXPECT_TRUE(by(Filter("' OR 1=1 --")).empty());
  store::VerdictFilter two;
  two.limit = 2;
  auto limited = *queries->verdicts(two, admin);
  EXPECT_EQ(limited.rows.size(), 2u);
  EXPECT_TRUE(limited.truncated);
}

TEST_F(DashboardTest, OrdinaryUserSeesOnlyTheirOwnJobs) {
  auto queries = Queries();
  store::Viewer alice{false, 2001};
  EXPECT_EQ(ids(*queries->verdicts({}, alice)), (std::set<std::string>{"5001", "5003", "5005", "5007", "5009"}));
  EXPECT_TRUE(ids(*queries->verdicts(Filter("", "", "bob"), alice)).empty());
  auto own = queries->job("lab", "5001", alice);
  ASSERT_TRUE(own && own->has_value());
  EXPECT_NE((*own)->verdict_json.find("gpu.fallen_off_bus"), std::string::npos);
  auto other = queries->job("lab", "5002", alice);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, kDashForbidden);
  auto missing = queries->job("lab", "404", alice);
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
  // Counts are over what the viewer may see.
  auto counts = queries->counts(Since(now_ - 7 * 24 * kHourUs, now_), 86400, alice);
  ASSERT_TRUE(counts) << counts.error().message;
  int64_t total = 0;
  for (const auto& bucket : *counts)
    for (const auto& [domain, n] : bucket.domains) total += n;
  EXPECT_EQ(total, 4);  // 5001 5003 5005 5007; 5009 is 40 days old
}

// Pages continue by key: every verdict once, newest first, for an admin and for a user;
// no page holds more than kMaxPageRows, however large the limit asked.
TEST_F(DashboardTest, PagesFollowEachOtherAndAreCapped) {
  auto queries = Queries();
  auto all_pages = [&](const store::Viewer& viewer) {
    store::VerdictFilter filter;
    filter.limit = 2;
    std::vector<std::string> listed;
    while (true) {
      auto page = queries->verdicts(filter, viewer);
      EXPECT_TRUE(page) << page.error().message;
      if (!page) break;
      for (const auto& row : page->rows) listed.push_back(row.job_id);
      EXPECT_EQ(page->truncated, page->next.has_value());
      if (!page->next) break;
      filter.before = page->next;
    }
    return listed;
  };
  EXPECT_EQ(all_pages({true, 0}),
            (std::vector<std::string>{"5006", "5001", "5003", "5004", "5002", "5005", "5007", "5008", "5009"}));
  EXPECT_EQ(all_pages({false, 2001}), (std::vector<std::string>{"5001", "5003", "5005", "5007", "5009"}));

  StartServer(common::Authenticator::none());
  json first = GetJson("/api/verdicts?limit=4");
  ASSERT_EQ(first["verdicts"].size(), 4u);
  ASSERT_TRUE(first["next"].is_object());
  const json& next = first["next"];
  json second = GetJson("/api/verdicts?limit=100&before_us=" + std::to_string(next["time_us"].get<int64_t>()) +
                        "&before_cluster=" + next["cluster"].get<std::string>() +
                        "&before_job=" + next["job_id"].get<std::string>());
  EXPECT_EQ(ids(second), (std::set<std::string>{"5002", "5005", "5007", "5008", "5009"}));
  EXPECT_TRUE(second["next"].is_null());
  EXPECT_EQ(second["truncated"], false);
  GetJson("/api/verdicts?before_us=soon", 400);

  // 2,500 more archived jobs: an admin asking for a million gets one capped page.
  {
    auto store = store::JobStore::open(database_);
    ASSERT_TRUE(store) << store.error().message;
    test::write_history_rows(**store, 2500, now_ - 1000 * kHourUs);
  }
  store::VerdictFilter huge;
  huge.limit = 1000000;
  auto page = queries->verdicts(huge, {true, 0});
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_EQ(page->rows.size(), store::kMaxPageRows);
  EXPECT_TRUE(page->truncated);
}

TEST_F(DashboardTest, CountsPerDomainPerBucket) {
  auto queries = Queries();
  auto counts = queries->counts(Since(now_ - 7 * 24 * kHourUs, now_), 86400, {true, 0});
  ASSERT_TRUE(counts) << counts.error().message;
  EXPECT_GE(counts->size(), 8u);
  std::map<std::string, int64_t> totals;
  for (size_t i = 0; i < counts->size(); ++i) {
    EXPECT_EQ((*counts)[i].start_us % (86400LL * 1000000), 0) << "buckets start at UTC midnight";
    if (i > 0) {
      EXPECT_EQ((*counts)[i].start_us - (*counts)[i - 1].start_us, 86400LL * 1000000);
    }
    for (const auto& [domain, n] : (*counts)[i].domains) totals[domain] += n;
  }
  EXPECT_EQ(
      totals,
      (std::map<std::string, int64_t>{
          {"AMBIGUOUS", 1}, {"APPLICATION", 1}, {"GPU_HARDWARE", 3}, {"NETWORK", 1}, {"NONE", 1}, {"SCHEDULER", 1}}));
  auto too_many = queries->counts(Since(0, now_), 3600, {true, 0});
  EXPECT_FALSE(too_many);
}

TEST_F(DashboardTest, ApiServesVerdictsJobsAndThePageWithAStrictPolicy) {
  StartServer(common::Authenticator::none());
  auto page = client_->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<script src=\"/app.js\""), std::string::npos);
  EXPECT_EQ(page->get_header_value("Content-Security-Policy").rfind("default-src 'self'", 0), 0u);
  EXPECT_EQ(page->get_header_value("Referrer-Policy"), "no-referrer");
  for (const char* asset : {"/app.js", "/style.css"}) {
    auto response = client_->Get(asset);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200) << asset;
    EXPECT_GT(response->body.size(), 1000u) << asset;
    // Nothing from elsewhere: no absolute URL is ever fetched by the page.
    EXPECT_EQ(response->body.find("https://"), std::string::npos) << asset;
  }

  json session = GetJson("/api/session");
  EXPECT_EQ(session["auth"], "none");
  EXPECT_EQ(session["admin"], true);
  EXPECT_EQ(ids(GetJson("/api/verdicts?domain=GPU_HARDWARE")), (std::set<std::string>{"5001", "5002", "5008"}));
  EXPECT_EQ(ids(GetJson("/api/verdicts?node=gpu002&state=FAILED")),
            (std::set<std::string>{"5001", "5002", "5003", "5004"}));
  EXPECT_EQ(GetJson("/api/verdicts?since=" + std::to_string(now_ / 1000000 - 4 * 3600))["verdicts"].size(), 3u);
  GetJson("/api/verdicts?since=yesterday", 400);
  GetJson("/api/counts?bucket=week", 400);
  json counts = GetJson("/api/counts?bucket=hour");
  EXPECT_EQ(counts["bucket_s"], 3600);
  EXPECT_GE(counts["buckets"].size(), 48u);

  json job = GetJson("/api/jobs/lab/5001");
  EXPECT_EQ(job["job"]["user"], "alice");
  EXPECT_EQ(job["verdict"]["root_cause"]["rule"], "gpu.fallen_off_bus");
  EXPECT_FALSE(job["verdict"]["symptoms"].empty());
  EXPECT_FALSE(job["verdict"]["coverage"].empty());
  GetJson("/api/jobs/lab/404", 404);

  // Read-only: nothing but GET.
  auto post = client_->Post("/api/verdicts", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  auto del = client_->Delete("/api/jobs/lab/5001");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
}

// The Unexplained panel's API: what attrib-rules mine --save stored, best first; empty
// before anything was mined.
TEST_F(DashboardTest, UnexplainedServesTheSavedTemplates) {
  StartServer(common::Authenticator::none());
  EXPECT_TRUE(GetJson("/api/unexplained")["templates"].empty());
  {
    auto db = store::Database::open(database_);
    ASSERT_TRUE(db);
    store::MinedTemplateRow first{1, now_, "widget controller <NUM> stopped responding", 50, 3, 50, 50, 0,
                                  {"16 run 0", "17 run 0"}, "widget controller 7 stopped responding", "extract: []"};
    store::MinedTemplateRow second{2, now_, "heartbeat <NUM> ok", 50, 3, 50, 50, 5, {"16 run 0"}, "heartbeat 1 ok", ""};
    ASSERT_TRUE(store::save_mined_templates(*db, {first, second}));
  }
  json body = GetJson("/api/unexplained");
  ASSERT_EQ(body["templates"].size(), 2u);
  EXPECT_EQ(body["mined_us"], now_);
  EXPECT_EQ(body["templates"][0]["template"], "widget controller <NUM> stopped responding");
  EXPECT_EQ(body["templates"][0]["attempt_ids"], json({"16 run 0", "17 run 0"}));
  EXPECT_EQ(body["templates"][1]["successful_attempts"], 5);
}

TEST_F(DashboardTest, BarePortBindsLoopback) {
  EXPECT_EQ(common::loopback_default_address("8470"), "127.0.0.1:8470");
  EXPECT_EQ(common::loopback_default_address(":8470"), "127.0.0.1:8470");
  EXPECT_EQ(common::loopback_default_address("0.0.0.0:8470"), "0.0.0.0:8470");
  dashboard::DashboardOptions options;
  options.listen = "not an address";
  options.database = database_;
  options.authenticator = common::Authenticator::none();
  auto server = dashboard::DashboardServer::start(options);
  ASSERT_FALSE(server);
  EXPECT_EQ(server.error().code, "LISTEN_E_ADDRESS");
}

TEST(DashboardSessions, ExpireAndAreUnguessable) {
  dashboard::SessionStore sessions(/*ttl_s=*/60, /*max_sessions=*/2);
  common::Caller caller{1234, 1234, true};
  auto a = sessions.open(caller, 0);
  auto b = sessions.open(caller, 0);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->size(), 32u);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(sessions.find(*a, 59 * 1000000)->uid, 1234u);
  EXPECT_FALSE(sessions.find(*a, 60 * 1000000));  // expired
  EXPECT_FALSE(sessions.find("0123456789abcdef0123456789abcdef", 0));
  auto c = sessions.open(caller, 1);
  auto d = sessions.open(caller, 2);  // over max_sessions: the oldest goes
  EXPECT_LE(sessions.size(), 2u);
  EXPECT_TRUE(sessions.find(*d, 3));
  sessions.close(*d);
  EXPECT_FALSE(sessions.find(*d, 3));
}

// ---- login with MUNGE -------------------------------------------------------------------

// A private munged (its own key and socket), as in test_auth.cpp; uid 65534 is the
// ordinary user and owns the jobs of the archive's first user.
class DashboardLoginTest : public DashboardTest {
 protected:
  static void SetUpTestSuite() {
    munged_ = std::make_unique<test::PrivateMunged>("attrib-dashboard-munge");
    socket_ = munged_->socket();
  }
  static void TearDownTestSuite() { munged_.reset(); }

  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (private munged, credentials of other uids)";
    ASSERT_TRUE(munged_->started()) << "private munged did not start: " << munged_->output();
    users_.first = "nobody";
    users_.first_uid = kNobody;
    DashboardTest::SetUp();
    common::AuthConfig auth;
    auth.mode = "munge";
    auth.munge_socket = socket_;
    passwd* slurm = getpwnam("slurm");
    auth.slurm_user = slurm != nullptr ? "slurm" : "daemon";
    auto authenticator = common::Authenticator::create(auth);
    ASSERT_TRUE(authenticator) << authenticator.error().message;
    StartServer(*authenticator);
    client_->set_follow_location(false);
  }

  // A login credential made by uid: directly as root, else by munge(1) run as uid.
  std::string LoginCredential(uid_t uid, int ttl_s = 0) {
    if (uid == 0) return *common::encode_dashboard_login(socket_, ttl_s);
    auto [cred, status] = test::munge_as(uid, socket_, std::string(common::kDashboardLoginPayload), ttl_s);
    EXPECT_EQ(status, 0) << cred;
    return status == 0 ? cred : "";
  }

  // POST /login as the login page does; the session cookie's header on success, "" otherwise.
  std::string Login(const std::string& cred, int expected_status = 200, const httplib::Headers& headers = {}) {
    auto response = client_->Post("/login", headers, json{{"cred", cred}}.dump(), "application/json");
    EXPECT_TRUE(response);
    if (!response) return "";
    EXPECT_EQ(response->status, expected_status) << response->body;
    std::string cookie = response->get_header_value("Set-Cookie");
    if (response->status != 200) {
      EXPECT_TRUE(cookie.empty()) << cookie;
      return "";
    }
    EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
    EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos) << cookie;
    return cookie.substr(0, cookie.find(';'));
  }

  static inline std::unique_ptr<test::PrivateMunged> munged_;
  static inline std::string socket_;
};

TEST_F(DashboardLoginTest, WithoutASessionThePageSaysHowToLogIn) {
  auto page = client_->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 401);
  EXPECT_NE(page->body.find("attrib-show --dashboard"), std::string::npos);
  GetJson("/api/verdicts", 401);
  GetJson("/api/jobs/lab/5001", 401);
  GetJson("/api/verdicts", 401, {{"Cookie", "attrib_session=0123456789abcdef0123456789abcdef"}});
}

TEST_F(DashboardLoginTest, RootLogsInAndSeesEveryJob) {
  std::string cookie = Login(LoginCredential(0));
  ASSERT_FALSE(cookie.empty());
  httplib::Headers headers{{"Cookie", cookie}};
  json session = GetJson("/api/session", 200, headers);
  EXPECT_EQ(session["uid"], 0);
  EXPECT_EQ(session["admin"], true);
  EXPECT_EQ(GetJson("/api/verdicts", 200, headers)["verdicts"].size(), 9u);
  GetJson("/api/jobs/lab/5002", 200, headers);
  GetJson("/api/offenders", 200, headers);
  auto page = client_->Get("/", headers);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  // Logging out ends the session.
  auto out = client_->Get("/logout", headers);
  ASSERT_TRUE(out);
  GetJson("/api/verdicts", 401, headers);
}

TEST_F(DashboardLoginTest, OrdinaryUserSeesOnlyOwnJobs) {
  std::string cookie = Login(LoginCredential(kNobody));
  ASSERT_FALSE(cookie.empty());
  httplib::Headers headers{{"Cookie", cookie}};
  json session = GetJson("/api/session", 200, headers);
  EXPECT_EQ(session["uid"], kNobody);
  EXPECT_EQ(session["user"], "nobody");
  EXPECT_EQ(session["admin"], false);
  EXPECT_EQ(ids(GetJson("/api/verdicts", 200, headers)),
            (std::set<std::string>{"5001", "5003", "5005", "5007", "5009"}));
  EXPECT_TRUE(ids(GetJson("/api/verdicts?user=bob", 200, headers)).empty());
  EXPECT_EQ(GetJson("/api/jobs/lab/5001", 200, headers)["job"]["user"], "nobody");
  json denied = GetJson("/api/jobs/lab/5002", 403, headers);  // bob's
  EXPECT_EQ(denied["error"], "forbidden");
  GetJson("/api/offenders", 403, headers);  // the fleet's reputation is for admins
  GetJson("/api/unexplained", 403, headers);  // lines of every user's jobs
}

TEST_F(DashboardLoginTest, BadExpiredReplayedAndForeignCredentialsAreRejected) {
  Login("garbage", 401);
  Login("", 401);
  // Replayed: munged remembers a decoded credential until it expires.
  std::string cred = LoginCredential(0);
  ASSERT_FALSE(Login(cred).empty());
  Login(cred, 401);
  // Made for an RPC: another payload, no session.
  v1::GetVerdictRequest request;
  request.set_job_id("5001");
  Login(*common::encode_credential(socket_, common::kGetVerdict, request), 401);
  // Expired.
  std::string short_lived = LoginCredential(0, /*ttl_s=*/1);
  std::this_thread::sleep_for(2500ms);
  auto response = client_->Post("/login", json{{"cred", short_lived}}.dump(), "application/json");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 401);
  EXPECT_NE(response->body.find("expired"), std::string::npos) << response->body;
  EXPECT_TRUE(response->get_header_value("Set-Cookie").empty());
}

// The credential never travels in an address (logs, Referer), and another site cannot
// log a visitor in as someone else (login CSRF): only a JSON post from this origin counts.
TEST_F(DashboardLoginTest, LoginIsAJsonPostFromTheDashboardsOwnPage) {
  // A credential in the query is refused unread: it stays valid for no one's session.
  std::string cred = LoginCredential(0);
  auto in_url = client_->Get("/login?cred=" + httplib::detail::encode_query_param(cred));
  ASSERT_TRUE(in_url);
  EXPECT_EQ(in_url->status, 400);
  EXPECT_TRUE(in_url->get_header_value("Set-Cookie").empty());
  EXPECT_NE(in_url->body.find("not accepted"), std::string::npos) << in_url->body;
  // The plain login page loads the script that posts the fragment's credential.
  auto page = client_->Get("/login");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<script src=\"/login.js\""), std::string::npos) << page->body;
  auto script = client_->Get("/login.js");
  ASSERT_TRUE(script);
  EXPECT_NE(script->body.find("location.hash"), std::string::npos);

  // What another site's form can send: a form body, or JSON with a foreign origin.
  auto form = client_->Post("/login", "cred=" + httplib::detail::encode_query_param(cred),
                            "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415);
  Login(cred, 403, {{"Origin", "http://evil.example"}});
  Login(cred, 403, {{"Sec-Fetch-Site", "cross-site"}});
  // Unused by any of those: the same credential still logs in from the page's origin.
  const std::string host = "127.0.0.1:" + std::to_string(server_->port());
  EXPECT_FALSE(Login(cred, 200, {{"Origin", "http://" + host}, {"Sec-Fetch-Site", "same-origin"}}).empty());
}
