// attrib's configuration file (/etc/attrib/attrib.yaml): one file for the head daemon,
// node agents and the epilog hook, each reading its own section. Every key is declared
// once in the table in config.cpp, which drives validation (unknown keys and wrong types
// are errors naming file:line) and the generated reference (attributiond --config-reference).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/result.h"

namespace attrib::common {

struct CollectorConfig {
  std::string kind;
  YAML::Node options;  // validated by the collector registry
  int line = 0;        // for error messages
};

// How the head reaches node agents (attributiond --role node). No template and no
// table: the head collects every node from its own collectors (central stores).
struct AgentsConfig {
  std::string address_template;                  // e.g. "{node}:7070"
  std::map<std::string, std::string> addresses;  // per-node override, e.g. n1: "10.0.0.1:7070"
  int concurrency = 16;
  int deadline_ms = 10000;
  bool enabled() const { return !address_template.empty() || !addresses.empty(); }
  // The agent address for node, or "" when none is configured for it.
  std::string address_for(const std::string& node) const;
};

struct HeadConfig {
  std::vector<std::string> listen;
  std::string metrics_listen;    // host:port of GET /metrics; empty: none
  std::string dashboard_listen;  // host:port (or a port: loopback) of the web dashboard; empty: none
  int dashboard_session_ttl_s = 8 * 3600;
  std::string database;
  std::string spool_dir;
  int spool_scan_interval_s = 5;
  int workers = 2;
  int scope_poll_interval_ms = 1000;
  int hook_settle_ms = 500;
  int scope_max_wait_s = 600;
  int accounting_outage_max_wait_s = 86400;
  int retry_backoff_s = 5;
  int retry_max_backoff_s = 600;
  int max_failures = 10;
  int window_lead_s = 300;
  int window_grace_s = 60;
  int raw_evidence_max_kib = 8192;  // raw lines kept per attempt (pipeline/attribution.cpp)
  bool write_comment = true;
  std::string comment_field = "Comment";  // Comment | AdminComment | SystemComment (slurm::CommentField)
  bool allow_opt_out = false;
  bool sweep = true;  // the reconciliation sweep of slurmdbd (head_daemon.cpp)
  int sweep_interval_s = 300;
  int sweep_settle_s = 120;
  int sweep_lookback_s = 86400;
  AgentsConfig agents;
};

struct NodeConfig {
  std::vector<std::string> listen;
  std::string metrics_listen;  // host:port of GET /metrics; empty: none
  std::string name;            // the Slurm node name this agent serves; empty: the short hostname
};

// Defaults repeat the table's so the epilog can still spool with an unreadable config.
struct EpilogConfig {
  std::string delivery = "spool";  // spool: the local head picks the file up; rpc: attrib-epilog-send sends it
  std::string server = "unix:///run/attrib/attributiond.sock";
  int deadline_ms = 1000;
  std::string spool_dir = "/var/spool/attrib";
};

// How RPCs are authenticated (docs/operations.md, "Authentication"); shared by the
// daemon (verifying) and every client (attrib-epilog, attrib-show, the head's fan-out).
struct AuthConfig {
  std::string mode = "munge";  // munge | none (none: tests and development only)
  std::string munge_socket;    // empty: libmunge's default socket
  std::string slurm_user = "slurm";
  std::string admin_group;          // empty: only root and the SlurmUser are admins
  std::string agent_user = "root";  // node agents run as this user; their answers must be signed by it
  bool enabled() const { return mode != "none"; }
};

// The repeat-offender policy over the fleet history (docs/fleet.md; attributiond/fleet/offender_policy.h).
struct FleetConfig {
  int offender_threshold = 2;
  int offender_window_s = 14 * 86400;
  std::vector<std::string> offender_domains = {"GPU_HARDWARE", "HOST_HARDWARE", "NVLINK_FABRIC"};
  int systemic_nodes = 16;
  int systemic_window_s = 3600;
  // Other jobs' unexplained failures on a node that make it this job's suspect
  // (rule host.unexplained_failures_repeat): how many, within how long. 0 jobs: off.
  int repeat_failures_jobs = 2;
  int repeat_failures_window_s = 86400;
};

// Opt-in node draining by the head daemon (docs/fleet.md; remediation.h).
struct RemediationConfig {
  std::string mode = "off";  // off | dry-run | drain
  int max_drains_per_hour = 4;
  bool on_verdict = true;          // drain for a trusted DRAIN_NODE verdict
  bool on_repeat_offender = true;  // drain a node that became a repeat offender
};

// How long the head's archive keeps what (attributiond/store/retention.h).
struct ArchiveConfig {
  int retention_days = 0;            // runs finished longer ago are deleted whole; 0: kept
  int evidence_retention_days = 30;  // raw evidence of runs finished longer ago is dropped; 0: kept
  int64_t max_bytes = 0;             // cap of the archive's pages in use; 0: none
  int prune_interval_s = 3600;
};

// Where else each verdict goes, besides the archive and the Slurm field (docs/sinks.md;
// attributiond/sinks/).
struct SinksConfig {
  std::string jsonl_path;  // one verdict v1 per line, appended; "-": stdout; empty: off
  std::string webhook_url;  // POST of each verdict v1 (application/json); empty: off
  std::string webhook_spool_dir = "/var/lib/attrib/webhook";
  std::string webhook_token_file;  // its content sent as "Authorization: Bearer ..."; empty: none
  int webhook_timeout_ms = 5000;
  int webhook_max_backoff_s = 300;
};

// The attribution API (docs/api.md; attributiond/api/): a verdict for an attempt of any
// scheduler, judged from the observations its caller hands in.
struct ApiConfig {
  std::string listen;      // host:port of POST /v1/attribute; empty: off (gRPC Attribute is on head.listen)
  std::string token_file;  // "<name> <token>" lines: the service callers of the HTTP API
  int64_t max_request_bytes = 16 * 1024 * 1024;
  int max_observations = 200000;
  int rate_per_minute = 60;  // requests per caller and minute (a burst of as many)
};

struct Config {
  std::string path;
  std::string cluster;
  HeadConfig head;
  NodeConfig node;
  EpilogConfig epilog;
  AuthConfig auth;
  FleetConfig fleet;
  RemediationConfig remediation;
  ArchiveConfig archive;
  SinksConfig sinks;
  ApiConfig api;
  std::string rules_pack_dir;
  std::vector<std::string> rules_site_dirs;
  std::vector<CollectorConfig> collectors;
};

Result<Config> load_config(const std::string& path);
Result<Config> parse_config(const std::string& yaml_text, const std::string& path_for_errors);

// head.dashboard_listen or api.listen as host:port: a bare port ("8470", ":8470") means
// 127.0.0.1, so neither is exposed beyond the host unless a host is written out.
std::string loopback_default_address(const std::string& listen);

// Markdown table of every key with its default and meaning.
std::string config_reference_markdown();

}  // namespace attrib::common
