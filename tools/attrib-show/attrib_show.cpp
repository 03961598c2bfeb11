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

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "attrib/v1/attrib.grpc.pb.h"
#include "common/auth.h"
#include "common/config.h"
#include "common/evidence_archive.h"
#include "common/grpc_limits.h"
#include "common/time_spec.h"
#include "core/clock.h"
#include "core/json_text.h"
#include "core/terminal_text.h"
#include "core/verdict_text.h"
#include "rules/bundle_export.h"
#include "tools/attrib-show/fleet_text.h"

namespace {

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

}  // namespace

namespace {

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

// --node, --since, --failed and --stats: one RPC (--since: one per page), its JSON printed
// as is or rendered as text.
int show_fleet_report(attrib::v1::Attribution::Stub& stub, const attrib::common::AuthConfig& auth,
                      const std::string& server, const std::string& cluster, const std::string& node, int64_t since_us,
                      const std::string& domain, bool failed, bool stats, bool json) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  attrib::v1::FleetReport response;
  grpc::Status status;
  if (stats) {
    attrib::v1::ArchiveStatsRequest request;
    if (auto signed_ = attrib::common::attach_credential(context, auth, attrib::common::kGetArchiveStats, request);
        !signed_) {
      std::fprintf(stderr, "attrib-show: %s\n", signed_.error().message.c_str());
      return 2;
    }
    status = stub.GetArchiveStats(&context, request, &response);
  } else if (failed) {
    attrib::v1::FailedListRequest request;
    request.set_cluster(cluster);
    if (auto signed_ = attrib::common::attach_credential(context, auth, attrib::common::kListFailed, request);
        !signed_) {
      std::fprintf(stderr, "attrib-show: %s\n", signed_.error().message.c_str());
      return 2;
    }
    status = stub.ListFailed(&context, request, &response);
  } else if (!node.empty()) {
    attrib::v1::NodeHistoryRequest request;
    request.set_node(node);
    request.set_since_us(since_us);
    request.set_cluster(cluster);
    if (auto signed_ = attrib::common::attach_credential(context, auth, attrib::common::kGetNodeHistory, request);
        !signed_) {
      std::fprintf(stderr, "attrib-show: %s\n", signed_.error().message.c_str());
      return 2;
    }
    status = stub.GetNodeHistory(&context, request, &response);
  } else {
    attrib::v1::VerdictListRequest request;
    request.set_since_us(since_us);
    request.set_domain(domain);
    request.set_cluster(cluster);
    status = list_verdicts(stub, auth, request, response);
  }
  if (status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    std::fprintf(stderr, "attrib-show: not permitted: %s\n", status.error_message().c_str());
    return 2;
  }
  if (!status.ok()) {
    std::fprintf(stderr, "attrib-show: attributiond at %s: %s\n", server.c_str(),
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
  std::cout << attrib::terminal_safe(stats          ? attrib::show::render_archive_stats_text(report)
                                     : failed       ? attrib::show::render_failed_list_text(report)
                                     : node.empty() ? attrib::show::render_verdict_list_text(report)
                                                    : attrib::show::render_node_history_text(report));
  return 0;
}

}  // namespace

// attrib-show --attribute JOB / --backfill --since T: asks the head to queue, from
// slurmdbd, the attempts its archive lacks. Returns attrib-show's exit code.
int queue_from_accounting(attrib::v1::Attribution::Stub& stub, const attrib::common::AuthConfig& auth,
                          const std::string& server, const std::string& cluster, const std::string& job_id,
                          int64_t since_us) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  attrib::v1::BackfillRequest request;
  request.set_cluster(cluster);
  request.set_job_id(job_id);
  request.set_since_us(since_us);
  if (auto signed_ = attrib::common::attach_credential(context, auth, attrib::common::kBackfill, request); !signed_) {
    std::fprintf(stderr, "attrib-show: %s\n", signed_.error().message.c_str());
    return 2;
  }
  attrib::v1::BackfillResponse response;
  grpc::Status status = stub.Backfill(&context, request, &response);
  if (!status.ok()) {
    std::fprintf(stderr, "attrib-show: attributiond at %s: %s\n", server.c_str(),
                 attrib::common::describe_grpc_failure(status).c_str());
    return 2;
  }
  const std::string what = job_id.empty() ? "attempts that ended since then" : "attempts of job " + job_id;
  std::printf("attrib-show: %lld %s queued for attribution; %lld already in the archive\n",
              static_cast<long long>(response.queued()), what.c_str(), static_cast<long long>(response.known()));
  return 0;
}

// Fetches and prints one run of the job (the newest without run); runs, when given,
// receives how many the job id has (0 when unknown); quiet prints only errors. Returns
// attrib-show's exit code.
int show_verdict(attrib::v1::Attribution::Stub& stub, const attrib::common::AuthConfig& auth, const std::string& server,
                 const std::string& cluster, const std::string& job_id, std::optional<int64_t> run, bool json,
                 const std::string& export_dir, int64_t* runs, bool quiet = false) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  attrib::v1::GetVerdictRequest request;
  request.set_job_id(job_id);
  request.set_cluster(cluster);
  if (run) request.set_run(*run);
  request.set_include_evidence(!export_dir.empty());
  if (auto signed_ = attrib::common::attach_credential(context, auth, attrib::common::kGetVerdict, request); !signed_) {
    std::fprintf(stderr, "attrib-show: %s\n", signed_.error().message.c_str());
    return 2;
  }
  attrib::v1::GetVerdictResponse response;
  grpc::Status status = stub.GetVerdict(&context, request, &response);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    std::fprintf(stderr, "attrib-show: unknown job %s: %s\n", job_id.c_str(), status.error_message().c_str());
    return 2;
  }
  if (status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    std::fprintf(stderr, "attrib-show: not permitted: %s\n", status.error_message().c_str());
    return 2;
  }
  if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
    std::fprintf(stderr, "attrib-show: attributiond at %s rejected the credential: %s\n", server.c_str(),
                 status.error_message().c_str());
    return 2;
  }
  if (!status.ok()) {
    std::fprintf(stderr, "attrib-show: cannot fetch from attributiond at %s: %s\n", server.c_str(),
                 attrib::common::describe_grpc_failure(status).c_str());
    return 2;
  }
  if (runs != nullptr) *runs = response.runs();
  if (quiet) return 0;
  if (response.status() == "array") {
    if (json) {
      std::cout << response.array_json() << "\n";
      return 0;
    }
    std::cout << attrib::terminal_safe(
        attrib::show::render_array_rollup_text(nlohmann::json::parse(response.array_json())));
    return 0;
  }
  // Errors can quote evidence (a line, a path): escaped like every other text shown.
  const std::string last_error = attrib::terminal_safe(response.last_error());
  if (response.status() == "failed") {
    std::fprintf(stderr, "attrib-show: job %s was given up after repeated failures (attrib-show --failed): %s\n",
                 job_id.c_str(), last_error.c_str());
    return 1;
  }
  if (response.verdict_json().empty() && response.status() == "done") {
    std::fprintf(stderr, "attrib-show: job %s was not attributed: %s\n", job_id.c_str(), last_error.c_str());
    return 1;
  }
  if (response.verdict_json().empty()) {
    std::fprintf(stderr, "attrib-show: job %s is %s, not attributed yet%s%s\n", job_id.c_str(),
                 response.status().c_str(), last_error.empty() ? "" : ": ", last_error.c_str());
    return 1;
  }
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
  if (!export_dir.empty() && !response.evidence_bundle().empty()) {
    // The raw evidence as collected: replaying it gives this verdict, byte for byte.
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
  if (!export_dir.empty()) {
    std::fprintf(stderr, "attrib-show: no raw evidence (%s): exporting the verdict's events\n",
                 response.evidence_note().c_str());
    // The verdict carries every event it weighed; replaying the bundle gives the same decision.
    // Events beyond its listing cap are only counted, so such a bundle is incomplete.
    if (verdict->symptoms_omitted + verdict->unexplained_omitted > 0)
      std::fprintf(stderr,
                   "attrib-show: warning: the verdict lists %zu symptoms and %zu unexplained events and only "
                   "counts %llu more; they are not in the bundle, and its replay will list the same events but "
                   "not count the others\n",
                   verdict->symptoms.size(), verdict->unexplained.size(),
                   static_cast<unsigned long long>(verdict->symptoms_omitted + verdict->unexplained_omitted));
    if (auto written = attrib::rules::export_verdict_bundle(export_dir, *verdict); !written) {
      std::fprintf(stderr, "attrib-show: %s %s\n", written.error().code.c_str(), written.error().message.c_str());
      return 2;
    }
    std::printf("attrib-show: job %s exported to %s (attrib-replay %s)\n", job_id.c_str(), export_dir.c_str(),
                export_dir.c_str());
    return 0;
  }
  std::cout << attrib::render_verdict_text(*verdict);
  // A re-attributed run: every verdict it has had, with the pack that made it.
  if (response.versions_size() > 1) {
    std::string versions = "Versions:\n";
    for (const auto& v : response.versions()) {
      versions += "  " + std::to_string(v.version()) + "  " + attrib::format_time(v.time_us()).substr(0, 19) + "  " +
                  v.domain() + (v.rule().empty() ? "" : " " + v.rule()) +
                  (v.confidence().empty() ? "" : " (" + v.confidence() + ")") + "  pack " + v.ruleset_version() + " " +
                  v.ruleset_hash().substr(0, 19) + "  " + v.why() + "\n";
    }
    std::cout << attrib::terminal_safe(versions);
  }
  if (response.status() != "done")
    std::cout << "(comment not yet written to Slurm" << (last_error.empty() ? "" : ": ") << last_error << ")\n";
  return 0;
}

int main(int argc, char** argv) {
  CLI::App app{"attrib-show: why a Slurm job ended, as decided by attrib"};
  std::string job_id;
  std::string config_path = "/etc/attrib/attrib.yaml";
  std::string server;
  std::string cluster;
  bool json = false;
  app.add_option("jobid", job_id, "Slurm job id (4242, 4242_7, 4242+1)");
  std::string node, since, domain;
  app.add_option("--node", node, "list the verdicts that blamed this node, its offender status and drains (admins)");
  app.add_option("--since", since,
                 "list verdicts since an age (7d, 24h, 30m) or an ISO 8601 date/time (UTC unless zoned); "
                 "with --node: its history since then");
  app.add_option("--domain", domain, "with --since: only this domain (e.g. GPU_HARDWARE; NONE lists successes)");
  bool failed = false;
  app.add_flag("--failed", failed,
               "list the jobs given up after head.max_failures failed attempts, with their last error (your own "
               "unless you are an admin)");
  bool stats = false;
  app.add_flag("--stats", stats,
               "admins: the archive's size and age, its raw evidence, and the retention that prunes it");
  bool dashboard = false;
  std::string dashboard_url;
  app.add_flag("--dashboard", dashboard, "print a one-time login link for the web dashboard instead of a verdict");
  app.add_option("--dashboard-url", dashboard_url,
                 "the dashboard's address (default: the config's head.dashboard_listen)");
  auto* config_option =
      app.add_option("-c,--config", config_path, "configuration file (for the daemon address and auth settings)")
          ->capture_default_str();
  std::string munge_socket;
  auto* munge_socket_option =
      app.add_option("--munge-socket", munge_socket, "munged socket for the credential (overrides auth.munge_socket)")
          ->envname("ATTRIB_MUNGE_SOCKET");
  app.add_option("--server", server, "attributiond address (overrides the config): unix:///path or host:port");
  app.add_option("--cluster", cluster, "cluster name (default: the daemon's)");
  app.add_flag("--json", json, "print the verdict v1 JSON exactly as archived");
  int64_t run = 0;
  auto* run_option = app.add_option(
      "--run", run,
      "which run of the job id: each attempt of a requeued job, and each job that reused the id, is one run, "
      "counted from 0 (default: the newest)");
  bool all_runs = false;
  app.add_flag("--all", all_runs, "show every run of the job id, oldest first");
  bool attribute = false;
  app.add_flag("--attribute", attribute,
               "admins: queue the job's attempts that the archive lacks, read from slurmdbd (its hook never "
               "reported them)");
  bool backfill = false;
  app.add_flag("--backfill", backfill,
               "admins, with --since: queue every attempt that ended since then and that the archive lacks");
  std::string export_dir;
  app.add_option(
      "--export-bundle", export_dir,
      "write the job's archived evidence as an evidence bundle into this (new) directory, for attrib-replay: "
      "the raw evidence as collected (admins), else the verdict's events");
  CLI11_PARSE(app, argc, argv);
  if (attribute && job_id.empty()) {
    std::fprintf(stderr, "attrib-show: --attribute needs a job id\n");
    return 2;
  }
  if (backfill && (since.empty() || !job_id.empty() || !node.empty())) {
    std::fprintf(stderr, "attrib-show: --backfill goes with --since alone\n");
    return 2;
  }
  const bool fleet_query = (!node.empty() || !since.empty() || failed || stats) && !backfill;
  if (job_id.empty() && !dashboard && !fleet_query && !backfill) {
    std::fprintf(stderr, "attrib-show: a job id is required (or --node, --since, --failed, --stats, --backfill, "
                         "--dashboard)\n%s",
                 app.help().c_str());
    return 2;
  }
  if (!job_id.empty() && fleet_query) {
    std::fprintf(stderr, "attrib-show: a job id goes alone, without --node or --since\n");
    return 2;
  }
  if (!domain.empty() && (!node.empty() || since.empty())) {
    std::fprintf(stderr, "attrib-show: --domain filters --since listings only\n");
    return 2;
  }

  // The config gives the address (unless --server) and the auth settings. With --server
  // and no config file (a workstation, the test cluster) the auth defaults apply.
  attrib::common::AuthConfig auth;
  bool config_needed = (server.empty() && dashboard_url.empty()) || config_option->count() > 0;
  std::error_code ignored;
  if (config_needed || std::filesystem::exists(config_path, ignored)) {
    auto config = attrib::common::load_config(config_path);
    if (!config) {
      std::fprintf(stderr, "attrib-show: %s%s\n", config.error().message.c_str(),
                   server.empty() ? " (or pass --server)" : "");
      return 2;
    }
    if (server.empty()) server = config->epilog.server;
    if (dashboard_url.empty() && !config->head.dashboard_listen.empty())
      dashboard_url = attrib::common::loopback_default_address(config->head.dashboard_listen);
    auth = config->auth;
  }
  if (munge_socket_option->count() > 0) auth.munge_socket = munge_socket;
  if (dashboard) return print_dashboard_login(auth, dashboard_url);

  auto stub = attrib::v1::Attribution::NewStub(attrib::common::make_channel(server));
  if (attribute || backfill) {
    int64_t since_us = 0;
    if (backfill) {
      auto parsed = attrib::common::parse_time_spec(since, attrib::wall_clock_us());
      if (!parsed) {
        std::fprintf(stderr, "attrib-show: --since: %s\n", parsed.error().message.c_str());
        return 2;
      }
      since_us = *parsed;
    }
    return queue_from_accounting(*stub, auth, server, cluster, attribute ? job_id : "", since_us);
  }
  if (fleet_query) {
    int64_t since_us = 0;
    if (!since.empty()) {
      auto now = attrib::wall_clock_us();
      auto parsed = attrib::common::parse_time_spec(since, now);
      if (!parsed) {
        std::fprintf(stderr, "attrib-show: --since: %s\n", parsed.error().message.c_str());
        return 2;
      }
      since_us = *parsed;
    }
    return show_fleet_report(*stub, auth, server, cluster, node, since_us, domain, failed, stats, json);
  }
  if (all_runs) {
    // The newest run says how many there are (a run folded into another leaves a gap,
    // reported as unknown).
    int64_t runs = 0;
    int rc = show_verdict(*stub, auth, server, cluster, job_id, std::nullopt, json, "", &runs, /*quiet=*/true);
    if (runs == 0) return rc == 0 ? 2 : rc;
    rc = 0;
    for (int64_t r = 0; r < runs; ++r) {
      if (!json)
        std::printf("%s== job %s, run %lld ==\n", r == 0 ? "" : "\n", job_id.c_str(), static_cast<long long>(r));
      rc = std::max(rc, show_verdict(*stub, auth, server, cluster, job_id, r, json, "", nullptr));
    }
    return rc;
  }
  return show_verdict(*stub, auth, server, cluster, job_id,
                      run_option->count() > 0 ? std::optional<int64_t>(run) : std::nullopt, json, export_dir, nullptr);
}
