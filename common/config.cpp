#include "common/config.h"

#include "core/option_table.h"
#include "core/whole_file.h"

namespace attrib::common {
namespace {

// The `collectors` list: {kind, options} items; each kind's options are checked against
// its own table when the collector is created (collectors/registry.h).
Option<Config> collectors_option() {
  Option<Config> out;
  out.doc = OptionDoc{"collectors",
                      "list of collectors",
                      "[]",
                      "Evidence sources the head reads for each allocated node: a list of {kind: <collector>, "
                      "options: {...}}. See docs/collectors.md for each kind's options.",
                      {}};
  out.set = [](Config& c, const YAML::Node& n) -> OptionProblem {
    const Error shape{kConfigType, "expected a list of {kind: <collector>, options: {...}}"};
    if (!n.IsSequence()) return shape;
    c.collectors.clear();
    for (const auto& item : n) {
      if (!item.IsMap() || !item["kind"] || !item["kind"].IsScalar()) return shape;
      for (const auto& kv : item) {
        const std::string key = kv.first.Scalar();
        if (key != "kind" && key != "options") return shape;
      }
      if (item["options"] && !item["options"].IsMap()) return shape;
      c.collectors.push_back({item["kind"].Scalar(),
                              item["options"] ? item["options"] : YAML::Node(YAML::NodeType::Map),
                              item.Mark().line + 1});
    }
    return std::nullopt;
  };
  return out;
}

// The one table of configuration keys. Defaults here are the documented ones.
const OptionTable<Config>& table() {
  static const OptionTable<Config> options = {
      option<Config>(
          "cluster", [](Config& c) -> std::string& { return c.cluster; }, "",
          "Slurm ClusterName; used when a hook does not report one. Required.", non_empty()),
      option<Config>(
          "head.listen", [](Config& c) -> std::vector<std::string>& { return c.head.listen; },
          "[unix:///run/attrib/attributiond.sock]",
          "gRPC listen addresses of the head daemon: unix:///path or host:port."),
      option<Config>(
          "head.metrics_listen", [](Config& c) -> std::string& { return c.head.metrics_listen; }, "",
          "host:port for the Prometheus endpoint (GET /metrics), e.g. \"127.0.0.1:9464\" or \"0.0.0.0:9464\". "
          "Empty: no endpoint. Off by default because it is plain, unauthenticated HTTP; bind it to loopback or a "
          "management network. See docs/operations.md for the metrics."),
      option<Config>(
          "head.dashboard_listen", [](Config& c) -> std::string& { return c.head.dashboard_listen; }, "",
          "host:port for the read-only web dashboard (docs/dashboard.md), e.g. \"127.0.0.1:8470\"; a bare port "
          "(\"8470\") binds 127.0.0.1. Empty: no dashboard (the default). Plain HTTP: keep it on loopback (reach it "
          "through an SSH tunnel) or a management network. Users log in with `attrib-show --dashboard` and see their "
          "own jobs; admins see every job. With auth.mode none there is no login and every visitor is an admin."),
      option<Config>(
          "head.dashboard_session_ttl_s", [](Config& c) -> int& { return c.head.dashboard_session_ttl_s; }, "28800",
          "Lifetime of a dashboard login session (seconds, from login). Sessions live in memory: a restart ends them.",
          at_least(60)),
      option<Config>(
          "head.database", [](Config& c) -> std::string& { return c.head.database; }, "/var/lib/attrib/attrib.db",
          "SQLite file holding the durable job queue and the verdict archive."),
      option<Config>(
          "head.spool_dir", [](Config& c) -> std::string& { return c.head.spool_dir; }, "/var/spool/attrib",
          "Directory attrib-epilog writes each job to (epilog.spool_dir on this host). A job file is taken as it "
          "appears (inotify), and all of them at start and every head.spool_scan_interval_s; only files owned by root "
          "or auth.slurm_user are reports, anything else is moved to bad/."),
      option<Config>(
          "head.spool_scan_interval_s", [](Config& c) -> int& { return c.head.spool_scan_interval_s; }, "5",
          "Seconds between full scans of the spool directory (files are also taken as they appear).", at_least(1)),
      option<Config>(
          "head.workers", [](Config& c) -> int& { return c.head.workers; }, "2", "Jobs attributed concurrently.",
          at_least(1)),
      option<Config>(
          "head.scope_poll_interval_ms", [](Config& c) -> int& { return c.head.scope_poll_interval_ms; }, "1000",
          "How often to re-read a job's accounting record while slurmdbd has not finalised it (it lags the "
          "hook by seconds).",
          at_least(1)),
      option<Config>(
          "head.hook_settle_ms", [](Config& c) -> int& { return c.head.hook_settle_ms; }, "500",
          "A job whose accounting row shows its end before the allocation is complete is judged at once, but "
          "no sooner than this after its first report: every hook slurmctld runs at a job's end "
          "(EpilogSlurmctld, jobcomp/script) reports within it, and their reports are merged first.",
          at_least(0)),
      option<Config>(
          "head.scope_max_wait_s", [](Config& c) -> int& { return c.head.scope_max_wait_s; }, "600",
          "While slurmdbd answers but its record is not final (or not there yet), the job is polled this long, "
          "counted from the hook's report or, after slurmdbd was unreachable, from its first answer after that. "
          "Then the record is used with the hook's state, exit code and end; a record that never appeared counts "
          "as a failed attempt (head.retry_backoff_s, given up after head.max_failures with the reason).",
          at_least(1)),
      option<Config>(
          "head.accounting_outage_max_wait_s", [](Config& c) -> int& { return c.head.accounting_outage_max_wait_s; },
          "86400",
          "While slurmdbd is unreachable, jobs wait for it (polled at growing intervals between head.retry_backoff_s "
          "and head.retry_max_backoff_s; never counted as failures) this long after their end, so an outage does "
          "not degrade their verdicts. After it, a job is attributed from the hook's facts alone.",
          at_least(60)),
      option<Config>(
          "head.retry_backoff_s", [](Config& c) -> int& { return c.head.retry_backoff_s; }, "5",
          "Delay before the first retry of a job whose attribution step failed (e.g. the archive could not be "
          "written); doubled for each further failure.",
          at_least(1)),
      option<Config>(
          "head.retry_max_backoff_s", [](Config& c) -> int& { return c.head.retry_max_backoff_s; }, "600",
          "The longest delay between retries of a failing job: the delay doubles from head.retry_backoff_s "
          "with each failure up to this.",
          at_least(1)),
      option<Config>(
          "head.max_failures", [](Config& c) -> int& { return c.head.max_failures; }, "10",
          "Failed attempts after which a job is given up (dead-lettered): kept in the archive with its "
          "last error, counted in attrib_jobs_dead_lettered_total, listed by attrib-show --failed, no "
          "longer retried. Waiting for slurmdbd's final record is not a failure.",
          at_least(1)),
      option<Config>(
          "head.window_lead_s", [](Config& c) -> int& { return c.head.window_lead_s; }, "300",
          "Evidence window starts this many seconds before the job start.", at_least(0)),
      option<Config>(
          "head.window_grace_s", [](Config& c) -> int& { return c.head.window_grace_s; }, "60",
          "Evidence window ends this many seconds after the job end.", at_least(0)),
      option<Config>(
          "head.raw_evidence_max_kib", [](Config& c) -> int& { return c.head.raw_evidence_max_kib; }, "8192",
          "Raw evidence kept in the archive per attempt, in KiB of log text: every line the head's collectors "
          "and the node agents read in the window (the agents share what the head's collectors leave), "
          "zstd-compressed, exported by attrib-show --export-bundle and replayed by attrib-replay to the same "
          "verdict. Lines past the cap are dropped (counted; the evidence is then marked incomplete); 0 keeps "
          "none.",
          at_least(0)),
      option<Config>(
          "archive.evidence_retention_days", [](Config& c) -> int& { return c.archive.evidence_retention_days; }, "30",
          "Raw evidence (head.raw_evidence_max_kib) of runs finished more than this many days ago is dropped; "
          "their verdicts, events and coverage stay, and attrib-reattribute reports them as pruned instead of "
          "judging them again. 0: kept until archive.retention_days or archive.max_bytes removes it.",
          at_least(0)),
      option<Config>(
          "archive.retention_days", [](Config& c) -> int& { return c.archive.retention_days; }, "0",
          "Runs finished more than this many days ago are deleted whole (job row, events, coverage, history, "
          "raw evidence, and the remediation log of that age). Never a run still queued or being attributed, and "
          "never one that finished inside head.sweep_lookback_s (the sweep would attribute it again). Keep it "
          "longer than fleet.offender_window_s. 0: kept forever.",
          at_least(0)),
      option<Config>(
          "archive.max_bytes", [](Config& c) -> int64_t& { return c.archive.max_bytes; }, "0",
          "Cap of the archive's size (its SQLite pages in use, as attrib-show --stats shows): while over it, the "
          "oldest finished runs' raw evidence goes first, then the oldest finished runs whole (with the same "
          "protections as archive.retention_days). The file itself does not shrink: freed pages are reused. "
          "0: no cap.",
          at_least(0)),
      option<Config>(
          "sinks.jsonl_path", [](Config& c) -> std::string& { return c.sinks.jsonl_path; }, "",
          "A verdict log: the head appends each verdict (verdict v1, the JSON attrib-show --json prints) as one "
          "line to this file when the job is done, a re-attributed verdict again. `-`: standard output (the "
          "journal, under systemd). Empty: none. A verdict may be logged twice if the head stops between the "
          "line and marking the job done; each line names its job and run."),
      option<Config>(
          "sinks.webhook_url", [](Config& c) -> std::string& { return c.sinks.webhook_url; }, "",
          "POSTs each verdict (verdict v1, Content-Type application/json) to this http(s) URL. Each verdict is "
          "first written to sinks.webhook_spool_dir, so none is lost while the receiver is down or the head "
          "restarts; it is removed once the receiver answers 2xx, and retried with a doubling delay up to "
          "sinks.webhook_max_backoff_s otherwise (at least once: a receiver may see a verdict twice). Empty: none."),
      option<Config>(
          "sinks.webhook_spool_dir", [](Config& c) -> std::string& { return c.sinks.webhook_spool_dir; },
          "/var/lib/attrib/webhook", "Where verdicts wait for the webhook (created if missing)."),
      option<Config>(
          "sinks.webhook_token_file", [](Config& c) -> std::string& { return c.sinks.webhook_token_file; }, "",
          "A file whose content (trailing newline removed) is sent as `Authorization: Bearer <content>`. Empty: no "
          "Authorization header."),
      option<Config>(
          "sinks.webhook_timeout_ms", [](Config& c) -> int& { return c.sinks.webhook_timeout_ms; }, "5000",
          "Bound of one POST, connecting included.", at_least(1)),
      option<Config>(
          "sinks.webhook_max_backoff_s", [](Config& c) -> int& { return c.sinks.webhook_max_backoff_s; }, "300",
          "Longest wait between two tries of a verdict the receiver did not take.", at_least(1)),
      option<Config>(
          "api.listen", [](Config& c) -> std::string& { return c.api.listen; }, "",
          "host:port of the attribution API's JSON endpoint, POST /v1/attribute (docs/api.md), e.g. "
          "\"0.0.0.0:8477\"; a bare port binds 127.0.0.1. Empty: none (the default). Callers authenticate with "
          "a token of api.token_file (Authorization: Bearer) or a MUNGE credential (Authorization: MUNGE). The "
          "same API over gRPC (Attribute, MUNGE-authenticated) is always served on head.listen. Plain HTTP: put "
          "it behind TLS termination or keep it on a management network."),
      option<Config>(
          "api.token_file", [](Config& c) -> std::string& { return c.api.token_file; }, "",
          "Service callers of the HTTP API (an orchestrator's connector): one `<name> <token>` per line, `#` "
          "comments. Their requests' trust assertions count, as root's do over MUNGE; the name is logged and "
          "archived as who submitted. Readable by the daemon only (0600). Empty: MUNGE callers only."),
      option<Config>(
          "api.max_request_bytes", [](Config& c) -> int64_t& { return c.api.max_request_bytes; }, "16777216",
          "Largest attribution request accepted (bytes of JSON, or of the gRPC message); larger: "
          "API_E_TOO_LARGE (HTTP 413, gRPC RESOURCE_EXHAUSTED).",
          at_least(1024)),
      option<Config>(
          "api.max_observations", [](Config& c) -> int& { return c.api.max_observations; }, "200000",
          "Most observations (log lines) in one attribution request; more: API_E_TOO_LARGE.", at_least(1)),
      option<Config>(
          "api.rate_per_minute", [](Config& c) -> int& { return c.api.rate_per_minute; }, "60",
          "Attribution requests each caller (a token's name, a MUNGE uid) may make per minute, in bursts of as "
          "many; beyond: API_E_RATE (HTTP 429 with Retry-After, gRPC RESOURCE_EXHAUSTED).",
          at_least(1)),
      option<Config>(
          "archive.prune_interval_s", [](Config& c) -> int& { return c.archive.prune_interval_s; }, "3600",
          "How often the head applies the archive's retention (and once at start), in the background; each pass "
          "is counted in attrib_archive_pruned_total.",
          at_least(1)),
      option<Config>(
          "head.write_comment", [](Config& c) -> bool& { return c.head.write_comment; }, "true",
          "Write the verdict's segment into the job's head.comment_field through slurmdbd (the text already there, "
          "such as the user's own --comment, is kept)."),
      option<Config>(
          "head.comment_field", [](Config& c) -> std::string& { return c.head.comment_field; }, "Comment",
          "The job field the verdict's `attrib:` segment is written into, as sacct names it. `Comment`: users see "
          "it first, but they write it too (--comment, scontrol update), so until attrib replaces it a segment "
          "there may be a user's own, and tools that act on it must not trust it. `AdminComment`: only Slurm "
          "operators and admins (and attrib, as SlurmUser) can write it; choose it where anything acts on the "
          "segment. `SystemComment`: written by slurmctld, which users cannot change either; the segment is added "
          "after slurmctld's text. Read it with `sacct -o AdminComment%200` (or SystemComment).",
          one_of({"Comment", "AdminComment", "SystemComment"})),
      option<Config>(
          "head.allow_opt_out", [](Config& c) -> bool& { return c.head.allow_opt_out; }, "false",
          "Honour a user's `--attrib=off` (the SPANK option, forwarded by the epilog): the job is recorded as opted "
          "out instead of attributed. Keep it in step with the plugin's allow_opt_out argument."),
      option<Config>(
          "head.sweep", [](Config& c) -> bool& { return c.head.sweep; }, "true",
          "Reconcile with slurmdbd: every head.sweep_interval_s, attempts that ended with no report from a hook "
          "(a backup slurmctld without the hook, a spool left on a host where no head runs, a head that was down "
          "longer than the spool kept) are queued and attributed like reported ones, once "
          "(attrib_jobs_accepted_total{hook=\"sweep\"})."),
      option<Config>(
          "head.sweep_interval_s", [](Config& c) -> int& { return c.head.sweep_interval_s; }, "300",
          "Seconds between sweeps of slurmdbd.", at_least(1)),
      option<Config>(
          "head.sweep_settle_s", [](Config& c) -> int& { return c.head.sweep_settle_s; }, "120",
          "A sweep looks only at attempts that ended at least this long ago, so the hooks' own reports arrive "
          "first.",
          at_least(0)),
      option<Config>(
          "head.sweep_lookback_s", [](Config& c) -> int& { return c.head.sweep_lookback_s; }, "86400",
          "How far back the first sweep after a start looks; later sweeps continue where the last one ended.",
          at_least(1)),
      option<Config>(
          "head.agents.address_template", [](Config& c) -> std::string& { return c.head.agents.address_template; }, "",
          "Address of each node's agent (attributiond --role node), {node} replaced by the Slurm node name, e.g. "
          "\"{node}:7070\". Empty and no head.agents.addresses: the head reads every node from its own collectors."),
      option<Config>(
          "head.agents.addresses",
          [](Config& c) -> std::map<std::string, std::string>& { return c.head.agents.addresses; }, "{}",
          "Per-node agent addresses (node: host:port), overriding the template."),
      option<Config>(
          "head.agents.concurrency", [](Config& c) -> int& { return c.head.agents.concurrency; }, "16",
          "Node agents asked at the same time for one job.", at_least(1)),
      option<Config>(
          "head.agents.deadline_ms", [](Config& c) -> int& { return c.head.agents.deadline_ms; }, "10000",
          "Per-node deadline for a Collect call; a slower node is recorded as coverage `timeout` and the verdict "
          "is made from what arrived.",
          at_least(1)),
      option<Config>(
          "node.listen", [](Config& c) -> std::vector<std::string>& { return c.node.listen; }, "[\"0.0.0.0:7070\"]",
          "gRPC listen addresses of a node agent (attributiond --role node)."),
      option<Config>(
          "node.metrics_listen", [](Config& c) -> std::string& { return c.node.metrics_listen; }, "",
          "host:port for a node agent's Prometheus endpoint (GET /metrics), e.g. \"127.0.0.1:9465\". Empty: no "
          "endpoint (several agents may share a host in tests and demos; each needs its own port)."),
      option<Config>(
          "node.name", [](Config& c) -> std::string& { return c.node.name; }, "",
          "Slurm node name a node agent serves. Empty: the host's short name."),
      option<Config>(
          "epilog.delivery", [](Config& c) -> std::string& { return c.epilog.delivery; }, "spool",
          "How attrib-epilog hands a job to attributiond. Either way it first writes the job to epilog.spool_dir "
          "(fsynced, renamed into place), so nothing is lost. `spool`: that is all it does; the head on this host "
          "(head.spool_dir = epilog.spool_dir) picks the file up at once (inotify). The hook then loads neither gRPC "
          "nor protobuf and takes a few milliseconds. `rpc`: it then runs attrib-epilog-send, which sends the job to "
          "epilog.server over gRPC within epilog.deadline_ms and removes the file once the daemon has it: for hosts "
          "whose spool no head reads (compute nodes running the slurmd Epilog, a backup slurmctld).",
          one_of({"spool", "rpc"})),
      option<Config>(
          "epilog.server", [](Config& c) -> std::string& { return c.epilog.server; },
          "unix:///run/attrib/attributiond.sock",
          "Address attrib-epilog-send sends JobEnded to (epilog.delivery rpc)."),
      option<Config>(
          "epilog.deadline_ms", [](Config& c) -> int& { return c.epilog.deadline_ms; }, "1000",
          "Deadline for attrib-epilog-send's RPC (epilog.delivery rpc); on expiry the job stays spooled. Keep it "
          "short: hooks must not block.",
          at_least(1)),
      option<Config>(
          "epilog.spool_dir", [](Config& c) -> std::string& { return c.epilog.spool_dir; }, "/var/spool/attrib",
          "Where attrib-epilog writes each job before anything else (the same directory as head.spool_dir on the "
          "head node, where the head picks it up). Only root and the SlurmUser may write here."),
      option<Config>(
          "auth.mode", [](Config& c) -> std::string& { return c.auth.mode; }, "munge",
          "How every RPC is authenticated: `munge` (each request carries a MUNGE credential bound to its method "
          "and body; see docs/operations.md, Authentication) or `none` (no authentication at all: any peer may "
          "submit jobs, read every verdict and collect node evidence; tests and development only, logged loudly).",
          one_of({"munge", "none"})),
      option<Config>(
          "auth.munge_socket", [](Config& c) -> std::string& { return c.auth.munge_socket; }, "",
          "munged's socket used to create and verify credentials. Empty: libmunge's default "
          "(/run/munge/munge.socket.2)."),
      option<Config>(
          "auth.slurm_user", [](Config& c) -> std::string& { return c.auth.slurm_user; }, "slurm",
          "The cluster's SlurmUser. Only it and root may submit JobEnded and call a node agent's Collect, and it "
          "sees every job's verdict."),
      option<Config>(
          "auth.admin_group", [](Config& c) -> std::string& { return c.auth.admin_group; }, "",
          "Unix group whose members (primary or supplementary) may read every job's verdict with attrib-show. "
          "Empty: only root and the SlurmUser; other users always see their own jobs only."),
      option<Config>(
          "auth.agent_user", [](Config& c) -> std::string& { return c.auth.agent_user; }, "root",
          "The user node agents (attributiond --role node) run as. An agent signs each Collect answer with MUNGE; "
          "the head accepts an answer only when it is signed by this user, so a process of anyone else that "
          "holds the agent's port cannot answer for the node (coverage `failed`, detail `unauthenticated: ...`).",
          non_empty()),
      option<Config>(
          "fleet.offender_threshold", [](Config& c) -> int& { return c.fleet.offender_threshold; }, "2",
          "A node (or one of its GPUs) is a repeat offender once this many counted verdicts blame it within "
          "fleet.offender_window_s. Counted: a trusted root cause in one of fleet.offender_domains; AMBIGUOUS, "
          "UNATTRIBUTED and untrusted verdicts never count. See docs/fleet.md.",
          at_least(1)),
      option<Config>(
          "fleet.offender_window_s", [](Config& c) -> int& { return c.fleet.offender_window_s; }, "1209600",
          "The repeat-offender window in seconds (default 14 days).", at_least(1)),
      option<Config>(
          "fleet.offender_domains", [](Config& c) -> std::vector<std::string>& { return c.fleet.offender_domains; },
          "[GPU_HARDWARE, HOST_HARDWARE, NVLINK_FABRIC]",
          "Verdict domains whose trusted root cause counts against the node (and GPU) it names."),
      option<Config>(
          "fleet.repeat_failures_jobs", [](Config& c) -> int& { return c.fleet.repeat_failures_jobs; }, "2",
          "A failed job whose own evidence explains nothing is judged against its nodes' recent past: when at "
          "least this many other jobs, of at least one other user, failed on one of its nodes within "
          "fleet.repeat_failures_window_s with no trusted cause found (UNATTRIBUTED, AMBIGUOUS or an untrusted "
          "root) and that node among their affected nodes, the rule host.unexplained_failures_repeat names the "
          "node (low confidence, never acts). 0: off.",
          at_least(0)),
      option<Config>(
          "fleet.repeat_failures_window_s", [](Config& c) -> int& { return c.fleet.repeat_failures_window_s; },
          "86400", "The window of fleet.repeat_failures_jobs in seconds (default one day).", at_least(1)),
      option<Config>(
          "fleet.systemic_nodes", [](Config& c) -> int& { return c.fleet.systemic_nodes; }, "16",
          "Systemic guard: when counted verdicts blame more than this many distinct nodes within "
          "fleet.systemic_window_s, the burst is reported as one systemic event and marks (and drains) no node.",
          at_least(1)),
      option<Config>(
          "fleet.systemic_window_s", [](Config& c) -> int& { return c.fleet.systemic_window_s; }, "3600",
          "The systemic guard's window in seconds.", at_least(1)),
      option<Config>(
          "remediation.mode", [](Config& c) -> std::string& { return c.remediation.mode; }, "off",
          "Node draining by the head daemon: `off`, `dry-run` (record and log what would be drained, touch nothing) "
          "or `drain` (set the node DRAIN through slurmctld with a reason starting `attrib:`). Needs the daemon to run "
          "as root or the SlurmUser. See docs/fleet.md, Remediation.",
          one_of({"off", "dry-run", "drain"})),
      option<Config>(
          "remediation.max_drains_per_hour", [](Config& c) -> int& { return c.remediation.max_drains_per_hour; }, "4",
          "At most this many drains (or, in dry-run, would-be drains) in any hour; more are recorded as rate-limited.",
          at_least(0)),
      option<Config>(
          "remediation.on_verdict", [](Config& c) -> bool& { return c.remediation.on_verdict; }, "true",
          "Drain the root cause node of a verdict that recommends DRAIN_NODE with a trusted root cause."),
      option<Config>(
          "remediation.on_repeat_offender", [](Config& c) -> bool& { return c.remediation.on_repeat_offender; }, "true",
          "Drain a node when a new verdict makes it (or one of its GPUs) a repeat offender."),
      option<Config>(
          "rules.pack_dir", [](Config& c) -> std::string& { return c.rules_pack_dir; }, "/usr/share/attrib/rules",
          "The shipped rule pack."),
      option<Config>(
          "rules.site_dirs", [](Config& c) -> std::vector<std::string>& { return c.rules_site_dirs; }, "[]",
          "Site rule directories, loaded after the pack."),
      collectors_option(),
  };
  return options;
}

}  // namespace

Result<Config> parse_config(const std::string& yaml_text, const std::string& path_for_errors) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    return Error{kConfigYaml, path_for_errors + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) return Error{kConfigYaml, path_for_errors + ": the top level must be a mapping"};
  Config config;
  config.path = path_for_errors;
  if (Status s = read_options(table(), root, OptionScope{path_for_errors, ""}, config); !s) return s.error();
  if (config.cluster.empty()) return Error{kConfigRequired, path_for_errors + ": 'cluster' is required"};
  return config;
}

Result<Config> load_config(const std::string& path) {
  auto text = read_whole_file(path);
  if (!text) return Error{kConfigOpen, "cannot read configuration file " + path};
  return parse_config(*text, path);
}

std::string config_reference_markdown() { return options_markdown(option_docs(table())); }

std::string loopback_default_address(const std::string& listen) {
  if (!listen.empty() && listen.find_first_not_of("0123456789") == std::string::npos) return "127.0.0.1:" + listen;
  if (listen.size() > 1 && listen.front() == ':') return "127.0.0.1" + listen;
  return listen;
}

std::string AgentsConfig::address_for(const std::string& node) const {
  if (auto it = addresses.find(node); it != addresses.end()) return it->second;
  std::string address = address_template;
  for (auto at = address.find("{node}"); at != std::string::npos; at = address.find("{node}", at + node.size()))
    address.replace(at, 6, node);
  return address;
}

}  // namespace attrib::common
