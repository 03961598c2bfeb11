// The read-only web dashboard (docs/dashboard.md): recent verdicts with filters, counts
// per domain over time, repeat-offender nodes and one job's evidence chain, served by the
// head daemon on head.dashboard_listen from pages compiled into the binary.
//
// Routes (GET only; every other method is 405):
//   /                 the page (401 and how to log in, without a session)
//   /app.js /style.css
//   /login?cred=C     C: a MUNGE credential from `attrib-show --dashboard`; opens a session
//   /logout
//   /api/session      who is logged in, and whether as an admin
//   /api/verdicts     ?domain=&node=&user=&state=&since=&until=&limit= (times: epoch seconds)
//   /api/counts       the same filters and &bucket=hour|day
//   /api/offenders    repeat offenders and systemic events (admins only)
//   /api/jobs/<cluster>/<job_id>   the archived verdict v1
// Access: admins (root, the SlurmUser, auth.admin_group) see every job, others only their
// own, as with attrib-show. With auth.mode none there is no login and everyone is admin.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "attributiond/dashboard/dashboard_sessions.h"
#include "attributiond/fleet/offender_policy.h"
#include "attributiond/ops/http_server.h"
#include "attributiond/store/dashboard_queries.h"
#include "common/auth.h"
#include "core/result.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace attrib::dashboard {

struct DashboardOptions {
  std::string listen;    // head.dashboard_listen: host:port, or a bare port for 127.0.0.1
  std::string database;  // head.database, opened read-only
  int64_t session_ttl_s = 8 * 3600;
  fleet::FleetPolicy fleet;  // for the repeat-offender panel
  std::string cluster;       // the daemon's: the unexplained panel's job links
  std::shared_ptr<const common::Authenticator> authenticator;
};

class DashboardServer {
 public:
  // Port 0 binds a free port (see port()). Serves until destroyed. Errors LISTEN_E_ADDRESS,
  // LISTEN_E_BIND, DB_E_OPEN.
  static Result<std::unique_ptr<DashboardServer>> start(const DashboardOptions& options);
  ~DashboardServer();
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  int port() const { return server_->port(); }

 private:
  // Defined in the .cpp, where httplib::Server is complete.
  DashboardServer(DashboardOptions options, std::unique_ptr<store::DashboardQueries> queries);
  void routes(httplib::Server& server);

  // One handler per route; routes() holds the table of which method and path each serves.
  void serve_page(const httplib::Request& request, httplib::Response& response);
  void serve_asset(const httplib::Request& request, httplib::Response& response);
  void serve_no_icon(const httplib::Request& request, httplib::Response& response);
  void serve_login_page(const httplib::Request& request, httplib::Response& response);
  void log_in(const httplib::Request& request, httplib::Response& response);
  void log_out(const httplib::Request& request, httplib::Response& response);
  void api_session(const httplib::Request& request, httplib::Response& response);
  void api_verdicts(const httplib::Request& request, httplib::Response& response);
  void api_counts(const httplib::Request& request, httplib::Response& response);
  void api_offenders(const httplib::Request& request, httplib::Response& response);
  void api_unexplained(const httplib::Request& request, httplib::Response& response);
  void api_job(const httplib::Request& request, httplib::Response& response);
  void refuse_write(const httplib::Request& request, httplib::Response& response);

  // The viewer of a request, or nullopt with the 401 already set (html: the login page,
  // else a JSON error).
  std::optional<store::Viewer> viewer_of(const httplib::Request& request, httplib::Response& response, bool html);
  const common::Authenticator& authenticator() const { return *options_.authenticator; }

  DashboardOptions options_;
  std::unique_ptr<store::DashboardQueries> queries_;
  SessionStore sessions_;
  std::unique_ptr<ops::HttpServer> server_;  // last: stopped first, while the rest still serve
};

}  // namespace attrib::dashboard
