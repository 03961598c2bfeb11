// attrib-show <jobid>: a job's verdict from attributiond, readable or as verdict v1 JSON.
// --export-bundle DIR writes the archived evidence as a bundle (attrib-replay DIR): for
// admins the raw evidence as collected, else (or when none was kept) the verdict's events.
// --run N / --all: the runs of a job id (each attempt of a requeued job); --attribute JOB
// and --backfill --since T (admins): queue from slurmdbd what no hook reported.
// attrib-show --node NAME: the node's blame history, offender status and remediation
// (admins only); attrib-show --since TIME [--domain D]: verdicts and per-domain counts
// (docs/fleet.md). --json prints each answer's JSON document as is.
// Exit codes: 0 verdict shown, 1 job known but not attributed yet, 2 unknown job, not
// permitted (another user's job) or error.
//
// Each call carries a MUNGE credential (auth.h): the daemon learns the caller's uid from
// it and shows ordinary users only their own jobs.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string_view>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "attrib/v1/attrib.grpc.pb.h"
#include "common/auth.h"
#include "common/command_line.h"
#include "common/config.h"
#include "common/evidence_archive.h"
#include "common/grpc_limits.h"
#include "common/time_spec.h"
#include "core/clock.h"
#include "core/json_text.h"
#include "core/terminal_text.h"
#include "core/verdict_text.h"
#include "rules/evidence/bundle_export.h"
#include "tools/attrib-show/fleet_text.h"

namespace {

// Everything the command line says; main fills it, checks the combination and runs one mode.
struct ShowOptions {
  std::string job_id;
  std::string config_path = "/etc/attrib/attrib.yaml";
  std::string server;
  std::string cluster;
  bool json = false;
  std::string node, since, domain;
  bool failed = false;
  bool stats = false;
  bool dashboard = false;
  std::string dashboard_url;
  std::string munge_socket;
  int64_t run = 0;
  bool all_runs = false;
  bool attribute = false;
  bool backfill = false;
  std::string export_dir;
  // Whether they were given: an explicit config must load, --munge-socket overrides the
  // config's, and without --run the newest run is shown.
  CLI::Option* config_option = nullptr;
  CLI::Option* munge_socket_option = nullptr;
  CLI::Option* run_option = nullptr;

  // --node, --since, --failed, --stats: a listing from the archive (with --backfill, --since
  // says what to queue instead).
  bool fleet_query() const { return (!node.empty() || !since.empty() || failed || stats) && !backfill; }
};

// The options in the order --help lists them.
void add_options(CLI::App& app, ShowOptions& o) {
  app.add_option("jobid", o.job_id, "Slurm job id (4242, 4242_7, 4242+1)");
  app.add_option("--node", o.node, "list the verdicts that blamed this node, its offender status and drains (admins)");
  app.add_option("--since", o.since,
                 "list verdicts since an age (7d, 24h, 30m) or an ISO 8601 date/time (UTC unless zoned); "
                 "with --node: its history since then");
  app.add_option("--domain", o.domain, "with --since: only this domain (e.g. GPU_HARDWARE; NONE lists successes)");
  app.add_flag("--failed", o.failed,
               "list the jobs given up after head.max_failures failed attempts, with their last error (your own "
               "unless you are an admin)");
  app.add_flag("--stats", o.stats,
               "admins: the archive's size and age, its raw evidence, and the retention that prunes it");
  app.add_flag("--dashboard", o.dashboard, "print a one-time login link for the web dashboard instead of a verdict");
  app.add_option("--dashboard-url", o.dashboard_url,
                 "the dashboard's address (default: the config's head.dashboard_listen)");
  o.config_option =
      app.add_option("-c,--config", o.config_path, "configuration file (for the daemon address and auth settings)")
          ->capture_default_str();
  o.munge_socket_option =
      app.add_option("--munge-socket", o.munge_socket, "munged socket for the credential (overrides auth.munge_socket)")
          ->envname("ATTRIB_MUNGE_SOCKET");
  app.add_option("--server", o.server, "attributiond address (overrides the config): unix:///path or host:port");
  app.add_option("--cluster", o.cluster, "cluster name (default: the daemon's)");
  app.add_flag("--json", o.json, "print the verdict v1 JSON exactly as archived");
  o.run_option = app.add_option(
      "--run", o.run,
      "which run of the job id: each attempt of a requeued job, and each job that reused the id, is one run, "
      "counted from 0 (default: the newest)");
  app.add_flag("--all", o.all_runs, "show every run of the job id, oldest first");
  app.add_flag("--attribute", o.attribute,
               "admins: queue the job's attempts that the archive lacks, read from slurmdbd (its hook never "
               "reported them)");
  app.add_flag("--backfill", o.backfill,
               "admins, with --since: queue every attempt that ended since then and that the archive lacks");
  app.add_option(
      "--export-bundle", o.export_dir,
      "write the job's archived evidence as an evidence bundle into this (new) directory, for attrib-replay: "
      "the raw evidence as collected (admins), else the verdict's events");
}

// The combinations the modes accept; false with the reason printed (and the help, when
// nothing says what to show).
bool usage_ok(const ShowOptions& o, const CLI::App& app) {
  if (o.attribute && o.job_id.empty()) {
    std::fprintf(stderr, "attrib-show: --attribute needs a job id\n");
    return false;
  }
  if (o.backfill && (o.since.empty() || !o.job_id.empty() || !o.node.empty())) {
    std::fprintf(stderr, "attrib-show: --backfill goes with --since alone\n");
    return false;
  }
  if (o.job_id.empty() && !o.dashboard && !o.fleet_query() && !o.backfill) {
    std::fprintf(stderr,
                 "attrib-show: a job id is required (or --node, --since, --failed, --stats, --backfill, "
                 "--dashboard)\n%s",
                 app.help().c_str());
    return false;
  }
  if (!o.job_id.empty() && o.fleet_query()) {
    std::fprintf(stderr, "attrib-show: a job id goes alone, without --node or --since\n");
    return false;
  }
  if (!o.domain.empty() && (!o.node.empty() || o.since.empty())) {
    std::fprintf(stderr, "attrib-show: --domain filters --since listings only\n");
    return false;
  }
  return true;
}

// The config gives the address (unless --server) and the auth settings. With --server
// and no config file (a workstation, the test cluster) the auth defaults apply. Fills in
// o.server and o.dashboard_url where the command line left them empty; nullopt with the
// reason printed when the config cannot be read.
std::optional<attrib::common::AuthConfig> load_settings(ShowOptions& o) {
  attrib::common::AuthConfig auth;
  bool config_needed = (o.server.empty() && o.dashboard_url.empty()) || o.config_option->count() > 0;
  std::error_code ignored;
  if (config_needed || std::filesystem::exists(o.config_path, ignored)) {
    auto config = attrib::common::load_config(o.config_path);
    if (!config) {
      std::fprintf(stderr, "attrib-show: %s%s\n", config.error().message.c_str(),
                   o.server.empty() ? " (or pass --server)" : "");
      return std::nullopt;
    }
    if (o.server.empty()) o.server = config->epilog.server;
    if (o.dashboard_url.empty() && !config->head.dashboard_listen.empty())
      o.dashboard_url = attrib::common::loopback_default_address(config->head.dashboard_listen);
    auth = config->auth;
  }
  if (o.munge_socket_option->count() > 0) auth.munge_socket = o.munge_socket;
  return auth;
}

// --since as microseconds since the epoch; nullopt with the reason printed.
std::optional<int64_t> since_us_of(const std::string& since) {
  auto parsed = attrib::common::parse_time_spec(since, attrib::wall_clock_us());
  if (!parsed) {
    std::fprintf(stderr, "attrib-show: --since: %s\n", parsed.error().message.c_str());
    return std::nullopt;
  }
  return *parsed;
}

// The head daemon every mode but --dashboard asks: server names it in messages, cluster
// goes into each request ("": the daemon's).
struct Daemon {
  attrib::v1::Attribution::Stub& stub;
  const attrib::common::AuthConfig& auth;
  const std::string& server;
  const std::string& cluster;
};

// Adds the call's credential (one per call); false with the reason printed.
bool sign_call(grpc::ClientContext& context, const attrib::common::AuthConfig& auth, std::string_view method,
               const google::protobuf::Message& request) {
  if (auto signed_ = attrib::common::attach_credential(context, auth, method, request); !signed_) {
    std::fprintf(stderr, "attrib-show: %s\n", signed_.error().message.c_str());
    return false;
  }
  return true;
}

// --dashboard: a one-time login link for the web dashboard (docs/dashboard.md). The
// credential says who runs this command; the dashboard opens a session for that uid.
int print_dashboard_login(const attrib::common::AuthConfig& auth, std::string url) {
  if (url.empty()) {
    std::fprintf(stderr, "attrib-show: no dashboard configured (head.dashboard_listen); pass --dashboard-url\n");
    return 2;
  }
  if (url.find("://") == std::string::npos) url = "http://" + url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  // A wildcard bind is no address to browse to: this host's name is (attrib-show runs
  // where attributiond's config is, usually the head node itself).
  for (std::string wildcard : {"http://0.0.0.0:", "http://[::]:"}) {
    char host[256] = {};
    if (url.rfind(wildcard, 0) == 0 && gethostname(host, sizeof host - 1) == 0)
      url = "http://" + std::string(host) + ":" + url.substr(wildcard.size());
  }
  if (!auth.enabled()) {  // no login to make: everyone is an admin
    std::printf("%s/\n", url.c_str());
    return 0;
  }
  auto cred = attrib::common::encode_dashboard_login(auth.munge_socket);
  if (!cred) {
    std::fprintf(stderr, "attrib-show: %s\n", cred.error().message.c_str());
    return 2;
  }
  std::string encoded;  // a credential is base64 with ':' framing: escape all but unreserved
  static const char* hex = "0123456789ABCDEF";
  for (unsigned char c : *cred) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      encoded += static_cast<char>(c);
    } else {
      encoded += '%';
      encoded += hex[c >> 4];
      encoded += hex[c & 0xf];
    }
  }
  // In the fragment: browsers never send it, so the credential is in no server or proxy log;
  // the login page posts it (attributiond/dashboard/web/login.js).
  std::printf("%s/login#cred=%s\n", url.c_str(), encoded.c_str());
  std::fprintf(stderr, "attrib-show: open this link within a few minutes; it works once.\n");
  return 0;
}

// The most verdicts --since gathers, page after page: the daemon serves pages of at most
// 1,000 (docs/fleet.md); past this the listing says it is truncated.
constexpr size_t kMaxListed = 5000;

// ListVerdicts, page after page (each call its own credential), into one report: the first
// page's, with the later pages' verdicts appended; "truncated" when more than kMaxListed.
grpc::Status list_verdicts(attrib::v1::Attribution::Stub& stub, const attrib::common::AuthConfig& auth,
                           attrib::v1::VerdictListRequest request, attrib::v1::FleetReport& report) {
  request.set_limit(1000);
  nlohmann::json merged;
  while (true) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (auto signed_ = attrib::common::attach_credential(context, auth, attrib::common::kListVerdicts, request);
        !signed_)
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, signed_.error().message);
    attrib::v1::FleetReport page;
    grpc::Status status = stub.ListVerdicts(&context, request, &page);
    if (!status.ok()) return status;
    auto json = nlohmann::json::parse(page.json(), nullptr, false);
    if (!json.is_object() || !json["verdicts"].is_array())
      return grpc::Status(grpc::StatusCode::INTERNAL, "attributiond sent an unreadable report");
    // A daemon without pages sends no next: its one answer is the whole listing.
    const bool more = page.has_next();
    const bool truncated = more || json.value("truncated", false);
    if (merged.is_null()) {
      merged = std::move(json);
    } else {
      for (auto& verdict : json["verdicts"]) merged["verdicts"].push_back(std::move(verdict));
    }
    merged["truncated"] = truncated;
    if (!more || merged["verdicts"].size() >= kMaxListed) break;
    *request.mutable_after() = page.next();
  }
  report.set_json(attrib::json_text(merged));
  return grpc::Status::OK;
}

// A fleet report's JSON printed as is, or rendered as text; a failed call as attrib-show's
// message. Returns attrib-show's exit code.
int print_fleet_report(const Daemon& daemon, const grpc::Status& status, const attrib::v1::FleetReport& response,
                       bool json, std::string (*render_text)(const nlohmann::json&)) {
  if (status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    std::fprintf(stderr, "attrib-show: not permitted: %s\n", status.error_message().c_str());
    return 2;
  }
  if (!status.ok()) {
    std::fprintf(stderr, "attrib-show: attributiond at %s: %s\n", daemon.server.c_str(),
                 attrib::common::describe_grpc_failure(status).c_str());
    return 2;
  }
  if (json) {
    std::cout << response.json() << "\n";
    return 0;
  }
  auto report = nlohmann::json::parse(response.json(), nullptr, false);
  if (report.is_discarded()) {
    std::fprintf(stderr, "attrib-show: attributiond sent an unreadable report\n");
    return 2;
  }
  // Reports quote job names and log lines: shown with their control characters escaped.
  std::cout << attrib::terminal_safe(render_text(report));
  return 0;
}

// --stats: the archive's size, age and retention.
int run_archive_stats(const Daemon& daemon, const ShowOptions& o) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  attrib::v1::ArchiveStatsRequest request;
  if (!sign_call(context, daemon.auth, attrib::common::kGetArchiveStats, request)) return 2;
  attrib::v1::FleetReport response;
  grpc::Status status = daemon.stub.GetArchiveStats(&context, request, &response);
  return print_fleet_report(daemon, status, response, o.json, attrib::show::render_archive_stats_text);
}

// --failed: the jobs given up after repeated failures.
int run_failed_list(const Daemon& daemon, const ShowOptions& o) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  attrib::v1::FailedListRequest request;
  request.set_cluster(daemon.cluster);
  if (!sign_call(context, daemon.auth, attrib::common::kListFailed, request)) return 2;
  attrib::v1::FleetReport response;
  grpc::Status status = daemon.stub.ListFailed(&context, request, &response);
  return print_fleet_report(daemon, status, response, o.json, attrib::show::render_failed_list_text);
}

// --node: the node's blame history since since_us, its offender status and drains.
int run_node_history(const Daemon& daemon, const ShowOptions& o, int64_t since_us) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  attrib::v1::NodeHistoryRequest request;
  request.set_node(o.node);
  request.set_since_us(since_us);
  request.set_cluster(daemon.cluster);
  if (!sign_call(context, daemon.auth, attrib::common::kGetNodeHistory, request)) return 2;
  attrib::v1::FleetReport response;
  grpc::Status status = daemon.stub.GetNodeHistory(&context, request, &response);
  return print_fleet_report(daemon, status, response, o.json, attrib::show::render_node_history_text);
}

// --since [--domain D]: the verdicts since since_us, one RPC per page.
int run_verdict_list(const Daemon& daemon, const ShowOptions& o, int64_t since_us) {
  attrib::v1::VerdictListRequest request;
  request.set_since_us(since_us);
  request.set_domain(o.domain);
  request.set_cluster(daemon.cluster);
  attrib::v1::FleetReport response;
  grpc::Status status = list_verdicts(daemon.stub, daemon.auth, request, response);
  return print_fleet_report(daemon, status, response, o.json, attrib::show::render_verdict_list_text);
}

// --node, --since, --failed and --stats; the first of --stats, --failed, --node given wins.
int run_fleet_query(const Daemon& daemon, const ShowOptions& o) {
  int64_t since_us = 0;
  if (!o.since.empty()) {
    auto parsed = since_us_of(o.since);
    if (!parsed) return 2;
    since_us = *parsed;
  }
  if (o.stats) return run_archive_stats(daemon, o);
  if (o.failed) return run_failed_list(daemon, o);
  if (!o.node.empty()) return run_node_history(daemon, o, since_us);
  return run_verdict_list(daemon, o, since_us);
}

// Asks the head to queue, from slurmdbd, the attempts its archive lacks: the job's
// (job_id), or all that ended since since_us. Returns attrib-show's exit code.
int queue_from_accounting(const Daemon& daemon, const std::string& job_id, int64_t since_us) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  attrib::v1::BackfillRequest request;
  request.set_cluster(daemon.cluster);
  request.set_job_id(job_id);
  request.set_since_us(since_us);
  if (!sign_call(context, daemon.auth, attrib::common::kBackfill, request)) return 2;
  attrib::v1::BackfillResponse response;
  grpc::Status status = daemon.stub.Backfill(&context, request, &response);
  if (!status.ok()) {
    std::fprintf(stderr, "attrib-show: attributiond at %s: %s\n", daemon.server.c_str(),
                 attrib::common::describe_grpc_failure(status).c_str());
    return 2;
  }
  const std::string what = job_id.empty() ? "attempts that ended since then" : "attempts of job " + job_id;
  std::printf("attrib-show: %lld %s queued for attribution; %lld already in the archive\n",
              static_cast<long long>(response.queued()), what.c_str(), static_cast<long long>(response.known()));
  return 0;
}

// --attribute JOB: queue the job's attempts that no hook reported.
int run_attribute(const Daemon& daemon, const ShowOptions& o) { return queue_from_accounting(daemon, o.job_id, 0); }

// --backfill --since T: queue every attempt that ended since then and that no hook reported.
int run_backfill(const Daemon& daemon, const ShowOptions& o) {
  auto since_us = since_us_of(o.since);
  if (!since_us) return 2;
  return queue_from_accounting(daemon, "", *since_us);
}

// GetVerdict for one run of the job (the newest without run), with its raw evidence when
// include_evidence. Returns 0, or 2 with the reason printed.
int fetch_verdict(const Daemon& daemon, const std::string& job_id, std::optional<int64_t> run, bool include_evidence,
                  attrib::v1::GetVerdictResponse& response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  attrib::v1::GetVerdictRequest request;
  request.set_job_id(job_id);
  request.set_cluster(daemon.cluster);
  if (run) request.set_run(*run);
  request.set_include_evidence(include_evidence);
  if (!sign_call(context, daemon.auth, attrib::common::kGetVerdict, request)) return 2;
  grpc::Status status = daemon.stub.GetVerdict(&context, request, &response);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    std::fprintf(stderr, "attrib-show: unknown job %s: %s\n", job_id.c_str(), status.error_message().c_str());
    return 2;
  }
  if (status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    std::fprintf(stderr, "attrib-show: not permitted: %s\n", status.error_message().c_str());
    return 2;
  }
  if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
    std::fprintf(stderr, "attrib-show: attributiond at %s rejected the credential: %s\n", daemon.server.c_str(),
                 status.error_message().c_str());
    return 2;
  }
  if (!status.ok()) {
    std::fprintf(stderr, "attrib-show: cannot fetch from attributiond at %s: %s\n", daemon.server.c_str(),
                 attrib::common::describe_grpc_failure(status).c_str());
    return 2;
  }
  return 0;
}

// A job array: the roll-up of its tasks.
int print_array_rollup(const attrib::v1::GetVerdictResponse& response, bool json) {
  if (json) {
    std::cout << response.array_json() << "\n";
    return 0;
  }
  std::cout << attrib::terminal_safe(
      attrib::show::render_array_rollup_text(nlohmann::json::parse(response.array_json())));
  return 0;
}

// Whether the run has no verdict to show (given up, not attributable, not attributed yet),
// the reason printed then.
bool explain_missing_verdict(const attrib::v1::GetVerdictResponse& response, const std::string& job_id,
                             const std::string& last_error) {
  if (response.status() == "failed") {
    std::fprintf(stderr, "attrib-show: job %s was given up after repeated failures (attrib-show --failed): %s\n",
                 job_id.c_str(), last_error.c_str());
    return true;
  }
  if (response.verdict_json().empty() && response.status() == "done") {
    std::fprintf(stderr, "attrib-show: job %s was not attributed: %s\n", job_id.c_str(), last_error.c_str());
    return true;
  }
  if (response.verdict_json().empty()) {
    std::fprintf(stderr, "attrib-show: job %s is %s, not attributed yet%s%s\n", job_id.c_str(),
                 response.status().c_str(), last_error.empty() ? "" : ": ", last_error.c_str());
    return true;
  }
  return false;
}

// --export-bundle, for an admin: the raw evidence as collected; replaying it gives this
// verdict, byte for byte.
int export_raw_evidence(const attrib::v1::GetVerdictResponse& response, const std::string& job_id,
                        const std::string& export_dir) {
  auto files = attrib::common::unpack_evidence(response.evidence_bundle());
  if (!files) {
    std::fprintf(stderr, "attrib-show: %s %s\n", files.error().code.c_str(), files.error().message.c_str());
    return 2;
  }
  if (auto written = attrib::rules::write_bundle_files(export_dir, *files); !written) {
    std::fprintf(stderr, "attrib-show: %s %s\n", written.error().code.c_str(), written.error().message.c_str());
    return 2;
  }
  if (!response.evidence_complete())
    std::fprintf(stderr, "attrib-show: warning: the raw evidence is incomplete (%s): its replay may differ\n",
                 response.evidence_note().c_str());
  std::printf("attrib-show: job %s exported to %s with its raw evidence (attrib-replay %s)\n", job_id.c_str(),
              export_dir.c_str(), export_dir.c_str());
  return 0;
}

// --export-bundle without raw evidence: the verdict carries every event it weighed;
// replaying the bundle gives the same decision. Events beyond its listing cap are only
// counted, so such a bundle is incomplete.
int export_verdict_events(const attrib::Verdict& verdict, const attrib::v1::GetVerdictResponse& response,
                          const std::string& job_id, const std::string& export_dir) {
  std::fprintf(stderr, "attrib-show: no raw evidence (%s): exporting the verdict's events\n",
               response.evidence_note().c_str());
  if (verdict.symptoms_omitted + verdict.unexplained_omitted > 0)
    std::fprintf(stderr,
                 "attrib-show: warning: the verdict lists %zu symptoms and %zu unexplained events and only "
                 "counts %llu more; they are not in the bundle, and its replay will list the same events but "
                 "not count the others\n",
                 verdict.symptoms.size(), verdict.unexplained.size(),
                 static_cast<unsigned long long>(verdict.symptoms_omitted + verdict.unexplained_omitted));
  if (auto written = attrib::rules::export_verdict_bundle(export_dir, verdict); !written) {
    std::fprintf(stderr, "attrib-show: %s %s\n", written.error().code.c_str(), written.error().message.c_str());
    return 2;
  }
  std::printf("attrib-show: job %s exported to %s (attrib-replay %s)\n", job_id.c_str(), export_dir.c_str(),
              export_dir.c_str());
  return 0;
}

// A re-attributed run: every verdict it has had, with the pack that made it.
std::string versions_text(const attrib::v1::GetVerdictResponse& response) {
  std::string versions = "Versions:\n";
  for (const auto& v : response.versions()) {
    versions += "  " + std::to_string(v.version()) + "  " + attrib::format_time(v.time_us()).substr(0, 19) + "  " +
                v.domain() + (v.rule().empty() ? "" : " " + v.rule()) +
                (v.confidence().empty() ? "" : " (" + v.confidence() + ")") + "  pack " + v.ruleset_version() + " " +
                v.ruleset_hash().substr(0, 19) + "  " + v.why() + "\n";
  }
  return versions;
}

int print_verdict_text(const attrib::Verdict& verdict, const attrib::v1::GetVerdictResponse& response,
                       const std::string& last_error) {
  std::cout << attrib::render_verdict_text(verdict);
  if (response.versions_size() > 1) std::cout << attrib::terminal_safe(versions_text(response));
  if (response.status() != "done")
    std::cout << "(comment not yet written to Slurm" << (last_error.empty() ? "" : ": ") << last_error << ")\n";
  return 0;
}

// Fetches and prints one run of the job (the newest without run), or exports it into
// export_dir; runs, when given, receives how many the job id has (0 when unknown); quiet
// prints only errors. Returns attrib-show's exit code.
int show_verdict(const Daemon& daemon, const std::string& job_id, std::optional<int64_t> run, bool json,
                 const std::string& export_dir, int64_t* runs, bool quiet = false) {
  attrib::v1::GetVerdictResponse response;
  if (int rc = fetch_verdict(daemon, job_id, run, !export_dir.empty(), response); rc != 0) return rc;
  if (runs != nullptr) *runs = response.runs();
  if (quiet) return 0;
  if (response.status() == "array") return print_array_rollup(response, json);
  // Errors can quote evidence (a line, a path): escaped like every other text shown.
  const std::string last_error = attrib::terminal_safe(response.last_error());
  if (explain_missing_verdict(response, job_id, last_error)) return 1;
  if (response.runs() > 1 && !run)
    std::fprintf(stderr,
                 "attrib-show: job %s has %lld runs in the archive (a requeued job's attempts, or a reused id); "
                 "this is the newest, run %lld: --run N or --all for the others\n",
                 job_id.c_str(), static_cast<long long>(response.runs()), static_cast<long long>(response.run()));
  if (json && export_dir.empty()) {
    std::cout << response.verdict_json() << "\n";
    return 0;
  }
  auto verdict = attrib::verdict_from_json(nlohmann::json::parse(response.verdict_json()));
  if (!verdict) {
    std::fprintf(stderr, "attrib-show: archived verdict unreadable: %s\n", verdict.error().message.c_str());
    return 2;
  }
  if (export_dir.empty()) return print_verdict_text(*verdict, response, last_error);
  if (!response.evidence_bundle().empty()) return export_raw_evidence(response, job_id, export_dir);
  return export_verdict_events(*verdict, response, job_id, export_dir);
}

// A job id alone, with --run N, --json or --export-bundle DIR.
int run_verdict(const Daemon& daemon, const ShowOptions& o) {
  std::optional<int64_t> run;
  if (o.run_option->count() > 0) run = o.run;
  return show_verdict(daemon, o.job_id, run, o.json, o.export_dir, nullptr);
}

// --all: every run of the job id, oldest first. The newest run says how many there are (a
// run folded into another leaves a gap, reported as unknown).
int run_all_runs(const Daemon& daemon, const ShowOptions& o) {
  int64_t runs = 0;
  int rc = show_verdict(daemon, o.job_id, std::nullopt, o.json, "", &runs, /*quiet=*/true);
  if (runs == 0) return rc == 0 ? 2 : rc;
  rc = 0;
  for (int64_t r = 0; r < runs; ++r) {
    if (!o.json)
      std::printf("%s== job %s, run %lld ==\n", r == 0 ? "" : "\n", o.job_id.c_str(), static_cast<long long>(r));
    rc = std::max(rc, show_verdict(daemon, o.job_id, r, o.json, "", nullptr));
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attrib-show: why a Slurm job ended, as decided by attrib"};
  ShowOptions options;
  add_options(app, options);
  if (auto done = attrib::common::parse_command_line(app, argc, argv)) return *done;
  if (!usage_ok(options, app)) return 2;
  auto auth = load_settings(options);
  if (!auth) return 2;
  if (options.dashboard) return print_dashboard_login(*auth, options.dashboard_url);

  auto stub = attrib::v1::Attribution::NewStub(attrib::common::make_channel(options.server));
  const Daemon daemon{*stub, *auth, options.server, options.cluster};
  if (options.attribute) return run_attribute(daemon, options);
  if (options.backfill) return run_backfill(daemon, options);
  if (options.fleet_query()) return run_fleet_query(daemon, options);
  if (options.all_runs) return run_all_runs(daemon, options);
  return run_verdict(daemon, options);
}
