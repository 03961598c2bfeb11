#include "attributiond/dashboard/dashboard_server.h"

#include <pwd.h>

#include <chrono>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "attributiond/dashboard/dashboard_assets.h"
#include "attributiond/ops/http_server.h"
#include "attributiond/store/archive_queries.h"
#include "core/clock.h"
#include "core/json_text.h"

namespace attrib::dashboard {
namespace {

using nlohmann::json;

constexpr const char* kCookie = "attrib_session";

std::string user_name(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
    return std::to_string(uid);
  return found->pw_name;
}

void send_json(httplib::Response& response, int status, const json& body) {
  response.status = status;
  response.set_content(json_text(body), "application/json");
}

using ops::send_error;

std::string content_type(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

const WebAsset* find_asset(std::string_view name) {
  for (const auto& asset : web_assets())
    if (asset.name == name) return &asset;
  return nullptr;
}

std::string cookie_value(const httplib::Request& request, const std::string& name) {
  std::string header = request.get_header_value("Cookie");
  size_t at = 0;
  while (at < header.size()) {
    size_t end = header.find(';', at);
    if (end == std::string::npos) end = header.size();
    std::string pair = header.substr(at, end - at);
    pair.erase(0, pair.find_first_not_of(' '));
    if (pair.rfind(name + "=", 0) == 0) return pair.substr(name.size() + 1);
    at = end + 1;
  }
  return "";
}

// The page shown instead of the dashboard without a session: how to get one.
std::string login_page(const std::string& why) {
  std::string escaped;
  for (char c : why) {
    switch (c) {
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '&':
        escaped += "&amp;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      default:
        escaped += c;
    }
  }
  return "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>attrib: log in</title>"
         "<link rel=\"stylesheet\" href=\"/style.css\"><script src=\"/login.js\" defer></script></head>"
         "<body><main class=\"login\">"
         "<h1>attrib dashboard: log in</h1><p id=\"login-reason\">" +
         escaped +
         "</p><p>On any cluster node, run</p><pre>attrib-show --dashboard</pre>"
         "<p>and open the link it prints within a minute or two. The link is a MUNGE credential for your user: it "
         "works once, and shows you your own jobs (administrators: every job).</p></main></body></html>";
}

// Epoch seconds from a query parameter; nullopt when absent. false: not a number.
bool time_param(const httplib::Request& request, const char* name, std::optional<TimeUs>& out) {
  if (!request.has_param(name)) return true;
  std::string text = request.get_param_value(name);
  if (text.empty()) return true;
  if (text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::stoll(text) * 1000000;
  return true;
}

json summary_json(const store::VerdictSummary& row) {
  return json{{"cluster", row.cluster}, {"job_id", row.job_id},
              {"status", row.status},   {"time_us", row.time_us},
              {"user", row.user},       {"uid", row.uid},
              {"domain", row.domain},   {"state", row.state},
              {"rule", row.rule},       {"action", row.action},
              {"comment", row.comment}, {"exit_code", row.exit_code},
              {"nodes", row.nodes},     {"affected_nodes", row.affected_nodes},
              {"scheduler", row.scheduler}};
}

json offenders_json(const fleet::OffenderReport& report) {
  json offenders = json::array();
  for (const auto& o : report.offenders)
    offenders.push_back(json{{"node", o.node},
                             {"gpu", o.gpu},
                             {"verdicts", o.verdicts},
                             {"first_us", o.first_us},
                             {"last_us", o.last_us},
                             {"job_ids", o.job_ids},
                             {"basis", o.basis},
                             {"advisory", o.advisory}});
  json systemic = json::array();
  for (const auto& s : report.systemic)
    systemic.push_back(json{{"from_us", s.from_us}, {"to_us", s.to_us}, {"nodes", s.nodes}, {"domain", s.domain}});
  return json{{"offenders", offenders}, {"systemic", systemic}};
}

// The shared filters of /api/verdicts and /api/counts; false with a 400 already set.
bool filter_of(const httplib::Request& request, httplib::Response& response, store::VerdictFilter& filter) {
  filter.domain = request.get_param_value("domain");
  filter.node = request.get_param_value("node");
  filter.user = request.get_param_value("user");
  filter.state = request.get_param_value("state");
  if (!time_param(request, "since", filter.since_us) || !time_param(request, "until", filter.until_us)) {
    send_error(response, 400, "bad_time", "since and until are seconds since the epoch");
    return false;
  }
  return true;
}

// /api/verdicts' page size and where its page starts; false with a 400 already set.
bool page_of(const httplib::Request& request, httplib::Response& response, store::VerdictFilter& filter) {
  if (std::string limit = request.get_param_value("limit"); !limit.empty()) {
    if (limit.size() > 4 || limit.find_first_not_of("0123456789") != std::string::npos || std::stoi(limit) == 0) {
      send_error(response, 400, "bad_limit", "limit is 1..9999 (a page holds at most 1000)");
      return false;
    }
    filter.limit = std::stoi(limit);
  }
  // The next (older) page: the previous answer's `next`, as before_us, before_cluster, before_job.
  if (std::string before = request.get_param_value("before_us"); !before.empty()) {
    if (before.size() > 18 || before.find_first_not_of("0123456789") != std::string::npos) {
      send_error(response, 400, "bad_before", "before_us is microseconds since the epoch");
      return false;
    }
    filter.before = store::PageKey{std::stoll(before), request.get_param_value("before_cluster"),
                                   request.get_param_value("before_job")};
  }
  return true;
}

json verdict_page_json(const store::VerdictPage& page) {
  json rows = json::array();
  for (const auto& row : page.rows) rows.push_back(summary_json(row));
  json next = nullptr;
  if (page.next)
    next = json{{"time_us", page.next->time_us}, {"cluster", page.next->cluster}, {"job_id", page.next->job_id}};
  return json{{"verdicts", rows}, {"truncated", page.truncated}, {"next", next}};
}

json mined_templates_json(const std::vector<store::MinedTemplateRow>& rows) {
  json templates = json::array();
  for (const auto& row : rows)
    templates.push_back(json{{"rank", row.rank},
                             {"template", row.text},
                             {"attempts", row.attempts},
                             {"nodes", row.nodes},
                             {"lines", row.lines},
                             {"before_end", row.before_end},
                             {"successful_attempts", row.successful},
                             {"attempt_ids", row.attempt_ids},
                             {"example", row.example},
                             {"rule_skeleton", row.skeleton}});
  return templates;
}

// Every response: nothing but this origin's own files may run or load (no inline script,
// no CDN), no framing, and no Referer.
void add_security_headers(const httplib::Request&, httplib::Response& response) {
  response.set_header("Content-Security-Policy",
                      "default-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'");
  response.set_header("X-Content-Type-Options", "nosniff");
  response.set_header("Referrer-Policy", "no-referrer");
  response.set_header("Cache-Control", "no-store");
}

enum class Method { kGet, kPost, kPut, kPatch, kDelete, kOptions };

struct Route {
  Method method;
  const char* pattern;
  void (DashboardServer::*handler)(const httplib::Request&, httplib::Response&);
};

void add_route(httplib::Server& server, Method method, const std::string& pattern, httplib::Server::Handler handler) {
  switch (method) {
    case Method::kGet:
      server.Get(pattern, std::move(handler));
      break;
    case Method::kPost:
      server.Post(pattern, std::move(handler));
      break;
    case Method::kPut:
      server.Put(pattern, std::move(handler));
      break;
    case Method::kPatch:
      server.Patch(pattern, std::move(handler));
      break;
    case Method::kDelete:
      server.Delete(pattern, std::move(handler));
      break;
    case Method::kOptions:
      server.Options(pattern, std::move(handler));
      break;
  }
}

}  // namespace

Result<std::unique_ptr<DashboardServer>> DashboardServer::start(const DashboardOptions& options) {
  if (!options.authenticator) return Error{kDashConfig, "dashboard started without an authenticator"};
  auto queries = store::DashboardQueries::open(options.database);
  if (!queries) return queries.error();
  std::unique_ptr<DashboardServer> out(new DashboardServer(options, std::move(*queries)));
  // A few people reading pages: a small pool bounds what a burst of requests can cost.
  // Only the login posts anything (a credential of a few hundred bytes).
  ops::HttpServerOptions http{
      .what = "dashboard", .threads = 4, .timeout = std::chrono::seconds(10), .max_payload = 16 * 1024};
  DashboardServer* self = out.get();
  auto server = ops::HttpServer::start(common::loopback_default_address(options.listen), http,
                                       [self](httplib::Server& routes) { self->routes(routes); });
  if (!server) return server.error();
  out->server_ = std::move(*server);
  return out;
}

DashboardServer::DashboardServer(DashboardOptions options, std::unique_ptr<store::DashboardQueries> queries)
    : options_(std::move(options)), queries_(std::move(queries)), sessions_(options_.session_ttl_s) {}

DashboardServer::~DashboardServer() = default;

void DashboardServer::routes(httplib::Server& server) {
  server.set_post_routing_handler(add_security_headers);
  // httplib tries a method's routes in this order: POST /login comes before the refusals.
  const Route table[] = {
      {Method::kGet, "/", &DashboardServer::serve_page},
      {Method::kGet, "/(app\\.js|login\\.js|style\\.css)", &DashboardServer::serve_asset},
      {Method::kGet, "/favicon.ico", &DashboardServer::serve_no_icon},
      {Method::kGet, "/login", &DashboardServer::serve_login_page},
      {Method::kPost, "/login", &DashboardServer::log_in},
      {Method::kGet, "/logout", &DashboardServer::log_out},
      {Method::kGet, "/api/session", &DashboardServer::api_session},
      {Method::kGet, "/api/verdicts", &DashboardServer::api_verdicts},
      {Method::kGet, "/api/counts", &DashboardServer::api_counts},
      {Method::kGet, "/api/offenders", &DashboardServer::api_offenders},
      {Method::kGet, "/api/unexplained", &DashboardServer::api_unexplained},
      {Method::kGet, "/api/jobs/([^/]+)/([^/]+)", &DashboardServer::api_job},
      // Read-only: every other method on every path is refused (POST /login is the one exception).
      {Method::kPost, ".*", &DashboardServer::refuse_write},
      {Method::kPut, ".*", &DashboardServer::refuse_write},
      {Method::kPatch, ".*", &DashboardServer::refuse_write},
      {Method::kDelete, ".*", &DashboardServer::refuse_write},
      {Method::kOptions, ".*", &DashboardServer::refuse_write},
  };
  for (const Route& route : table)
    add_route(server, route.method, route.pattern,
              [this, handler = route.handler](const httplib::Request& request, httplib::Response& response) {
                (this->*handler)(request, response);
              });
}

std::optional<store::Viewer> DashboardServer::viewer_of(const httplib::Request& request, httplib::Response& response,
                                                        bool html) {
  if (!authenticator().enabled()) return store::Viewer{true, 0};
  std::string token = cookie_value(request, kCookie);
  auto caller = token.empty() ? std::nullopt : sessions_.find(token, wall_clock_us());
  if (!caller) {
    const std::string why = "You are not logged in, or your session has expired.";
    if (html) {
      response.status = 401;
      response.set_content(login_page(why), "text/html; charset=utf-8");
    } else {
      send_error(response, 401, "login_required", why + " Run `attrib-show --dashboard` and open its link.");
    }
    return std::nullopt;
  }
  return store::Viewer{authenticator().is_admin(*caller), caller->uid};
}

void DashboardServer::serve_page(const httplib::Request& request, httplib::Response& response) {
  if (!viewer_of(request, response, true)) return;
  response.set_content(std::string(find_asset("index.html")->body), content_type("index.html"));
}

void DashboardServer::serve_asset(const httplib::Request& request, httplib::Response& response) {
  const WebAsset* asset = find_asset(request.matches[1].str());
  response.set_content(std::string(asset->body), content_type(asset->name));
}

// Browsers ask for it on their own; no icon, and no 404 in their console.
void DashboardServer::serve_no_icon(const httplib::Request&, httplib::Response& response) { response.status = 204; }

// The login page: login.js posts the credential from the link's fragment. A credential
// in the query (an older attrib-show) is refused unread: it has been in logs already.
void DashboardServer::serve_login_page(const httplib::Request& request, httplib::Response& response) {
  if (!authenticator().enabled()) {  // nothing to log in to
    response.set_redirect("/", 303);
    return;
  }
  if (request.has_param("cred")) {
    response.status = 400;
    response.set_content(login_page("A credential in the address is not accepted (addresses end up in logs): "
                                    "run attrib-show --dashboard again and open the link it prints now."),
                         "text/html; charset=utf-8");
    return;
  }
  response.set_content(login_page("Open the link from attrib-show --dashboard to log in."), "text/html; charset=utf-8");
}

// The credential arrives in a JSON body from this origin's own page. JSON and the
// origin checks stop login CSRF: another site's form cannot send JSON, and its script
// cannot without a CORS preflight, which is refused (OPTIONS answers 405).
void DashboardServer::log_in(const httplib::Request& request, httplib::Response& response) {
  if (!authenticator().enabled()) return send_error(response, 404, "no_login", "this dashboard has no login");
  if (request.get_header_value("Content-Type").rfind("application/json", 0) != 0)
    return send_error(response, 415, "json_required", "post the credential as {\"cred\": \"...\"}");
  const std::string site = request.get_header_value("Sec-Fetch-Site");
  const std::string origin = request.get_header_value("Origin");
  if ((!site.empty() && site != "same-origin") ||
      (!origin.empty() && origin != "http://" + request.get_header_value("Host")))
    return send_error(response, 403, "cross_site", "a login is accepted only from the dashboard's own page");
  json body = json::parse(request.body, nullptr, false);
  if (!body.is_object() || !body.contains("cred") || !body["cred"].is_string())
    return send_error(response, 400, "bad_request", "post the credential as {\"cred\": \"...\"}");
  auto caller = authenticator().verify_dashboard_login(body["cred"].get<std::string>());
  if (!caller) {
    spdlog::warn("dashboard login from {} rejected: {}", request.remote_addr, caller.error().message);
    return send_error(response, caller.error().code == kAuthMunged ? 503 : 401, "login_rejected",
                      caller.error().message);
  }
  auto token = sessions_.open(*caller, wall_clock_us());
  if (!token) return send_error(response, 500, token.error().code, token.error().message);
  spdlog::info("dashboard login: uid {} ({}){} from {}", caller->uid, user_name(caller->uid),
               authenticator().is_admin(*caller) ? " as admin" : "", request.remote_addr);
  response.set_header("Set-Cookie",
                      std::string(kCookie) + "=" + *token +
                          "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" + std::to_string(options_.session_ttl_s));
  send_json(response, 200, json{{"uid", caller->uid}, {"admin", authenticator().is_admin(*caller)}});
}

void DashboardServer::log_out(const httplib::Request& request, httplib::Response& response) {
  sessions_.close(cookie_value(request, kCookie));
  response.set_header("Set-Cookie", std::string(kCookie) + "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
  response.set_redirect("/", 303);
}

void DashboardServer::api_session(const httplib::Request& request, httplib::Response& response) {
  auto viewer = viewer_of(request, response, false);
  if (!viewer) return;
  send_json(response, 200,
            json{{"auth", authenticator().enabled() ? "munge" : "none"},
                 {"uid", viewer->uid},
                 {"user", authenticator().enabled() ? user_name(viewer->uid) : ""},
                 {"admin", viewer->admin}});
}

void DashboardServer::api_verdicts(const httplib::Request& request, httplib::Response& response) {
  auto viewer = viewer_of(request, response, false);
  if (!viewer) return;
  store::VerdictFilter filter;
  if (!filter_of(request, response, filter) || !page_of(request, response, filter)) return;
  auto page = queries_->verdicts(filter, *viewer);
  if (!page) return send_error(response, 500, page.error().code, page.error().message);
  send_json(response, 200, verdict_page_json(*page));
}

void DashboardServer::api_counts(const httplib::Request& request, httplib::Response& response) {
  auto viewer = viewer_of(request, response, false);
  if (!viewer) return;
  store::VerdictFilter filter;
  if (!filter_of(request, response, filter)) return;
  std::string bucket = request.has_param("bucket") ? request.get_param_value("bucket") : "day";
  if (bucket != "hour" && bucket != "day") return send_error(response, 400, "bad_bucket", "bucket is hour or day");
  int64_t bucket_s = bucket == "hour" ? 3600 : 86400;
  TimeUs now = wall_clock_us();
  if (!filter.until_us) filter.until_us = now;
  if (!filter.since_us) filter.since_us = *filter.until_us - (bucket == "hour" ? 48 : 14) * bucket_s * 1000000;
  auto counts = queries_->counts(filter, bucket_s, *viewer);
  if (!counts) return send_error(response, 400, counts.error().code, counts.error().message);
  json buckets = json::array();
  for (const auto& b : *counts) buckets.push_back(json{{"start_us", b.start_us}, {"domains", b.domains}});
  send_json(response, 200, json{{"bucket_s", bucket_s}, {"buckets", buckets}});
}

void DashboardServer::api_offenders(const httplib::Request& request, httplib::Response& response) {
  auto viewer = viewer_of(request, response, false);
  if (!viewer) return;
  // Node reputation is about the fleet, built from every user's jobs: admins only.
  if (!viewer->admin)
    return send_error(response, 403, "admins_only", "repeat offenders are shown to administrators only");
  auto lock = queries_->lock();
  auto report = fleet::repeat_offenders(queries_->database(), options_.fleet, wall_clock_us());
  lock.unlock();
  if (!report) return send_error(response, 500, report.error().code, report.error().message);
  json body = offenders_json(*report);
  body["policy"] = json{{"threshold", options_.fleet.offender_threshold},
                        {"window_s", options_.fleet.offender_window_s},
                        {"domains", options_.fleet.offender_domains}};
  send_json(response, 200, body);
}

// What no rule explains, as `attrib-rules mine --save` last found it. The lines come from
// every user's jobs: admins only.
void DashboardServer::api_unexplained(const httplib::Request& request, httplib::Response& response) {
  auto viewer = viewer_of(request, response, false);
  if (!viewer) return;
  if (!viewer->admin)
    return send_error(response, 403, "admins_only", "unexplained messages are shown to administrators only");
  auto lock = queries_->lock();
  auto rows = store::mined_templates(queries_->database());
  lock.unlock();
  if (!rows) return send_error(response, 500, rows.error().code, rows.error().message);
  send_json(response, 200,
            json{{"mined_us", rows->empty() ? json(nullptr) : json(rows->front().mined)},
                 {"cluster", options_.cluster},
                 {"templates", mined_templates_json(*rows)}});
}

void DashboardServer::api_job(const httplib::Request& request, httplib::Response& response) {
  auto viewer = viewer_of(request, response, false);
  if (!viewer) return;
  auto detail = queries_->job(request.matches[1].str(), request.matches[2].str(), *viewer);
  if (!detail) {
    if (detail.error().code == kDashForbidden) return send_error(response, 403, "forbidden", detail.error().message);
    return send_error(response, 500, detail.error().code, detail.error().message);
  }
  if (!detail->has_value())
    return send_error(response, 404, "not_found", "no archived verdict for job " + request.matches[2].str());
  json verdict = json::parse((*detail)->verdict_json, nullptr, false);
  send_json(response, 200, json{{"job", summary_json((*detail)->summary)}, {"verdict", verdict}});
}

void DashboardServer::refuse_write(const httplib::Request&, httplib::Response& response) {
  response.set_header("Allow", "GET, HEAD");
  send_error(response, 405, "method_not_allowed", "the dashboard is read-only");
}

}  // namespace attrib::dashboard
