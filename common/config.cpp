#include "common/config.h"

#include <fstream>
#include <functional>
#include <sstream>

namespace attrib::common {
namespace {

enum class Type { String, Int, Bool, StringList, StringMap, CollectorList };

struct Key {
  const char* path;        // dotted path in the YAML file
  Type type;
  const char* default_value;
  const char* help;
  std::function<void(Config&, const YAML::Node&)> apply;
};

const char* type_name(Type t) {
  switch (t) {
    case Type::String: return "string";
    case Type::Int: return "integer";
    case Type::Bool: return "boolean";
    case Type::StringList: return "list of strings";
    case Type::StringMap: return "map of strings";
    case Type::CollectorList: return "list of collectors";
  }
  return "?";
}

// The one table of configuration keys. Defaults here are the documented ones.
const std::vector<Key>& keys() {
  static const std::vector<Key> table = {
      {"cluster", Type::String, "", "Slurm ClusterName; used when a hook does not report one. Required.",
       [](Config& c, const YAML::Node& n) { c.cluster = n.as<std::string>(); }},
      {"head.listen", Type::StringList, "[unix:///run/attrib/attributiond.sock]",
       "gRPC listen addresses of the head daemon: unix:///path or host:port.",
       [](Config& c, const YAML::Node& n) { c.head.listen = n.as<std::vector<std::string>>(); }},
      {"head.metrics_listen", Type::String, "",
       "host:port for the Prometheus endpoint (GET /metrics), e.g. \"127.0.0.1:9464\" or \"0.0.0.0:9464\". "
       "Empty: no endpoint. Off by default because it is plain, unauthenticated HTTP; bind it to loopback or a "
       "management network. See docs/operations.md for the metrics.",
       [](Config& c, const YAML::Node& n) { c.head.metrics_listen = n.as<std::string>(); }},
      {"head.dashboard_listen", Type::String, "",
       "host:port for the read-only web dashboard (docs/dashboard.md), e.g. \"127.0.0.1:8470\"; a bare port "
       "(\"8470\") binds 127.0.0.1. Empty: no dashboard (the default). Plain HTTP: keep it on loopback (reach it "
       "through an SSH tunnel) or a management network. Users log in with `attrib-show --dashboard` and see their "
       "own jobs; admins see every job. With auth.mode none there is no login and every visitor is an admin.",
       [](Config& c, const YAML::Node& n) { c.head.dashboard_listen = n.as<std::string>(); }},
      {"head.dashboard_session_ttl_s", Type::Int, "28800",
       "Lifetime of a dashboard login session (seconds, from login). Sessions live in memory: a restart ends them.",
       [](Config& c, const YAML::Node& n) { c.head.dashboard_session_ttl_s = n.as<int>(); }},
      {"head.database", Type::String, "/var/lib/attrib/attrib.db",
       "SQLite file holding the durable job queue and the verdict archive.",
       [](Config& c, const YAML::Node& n) { c.head.database = n.as<std::string>(); }},
      {"head.spool_dir", Type::String, "/var/spool/attrib",
       "Directory where attrib-epilog leaves jobs when the daemon is unreachable; drained at start and periodically.",
       [](Config& c, const YAML::Node& n) { c.head.spool_dir = n.as<std::string>(); }},
      {"head.spool_scan_interval_s", Type::Int, "5", "Seconds between spool directory scans.",
       [](Config& c, const YAML::Node& n) { c.head.spool_scan_interval_s = n.as<int>(); }},
      {"head.workers", Type::Int, "2", "Jobs attributed concurrently.",
       [](Config& c, const YAML::Node& n) { c.head.workers = n.as<int>(); }},
      {"head.scope_poll_interval_ms", Type::Int, "1000",
       "How often to re-read a job's accounting record while slurmdbd has not finalised it (it lags the hook by seconds).",
       [](Config& c, const YAML::Node& n) { c.head.scope_poll_interval_ms = n.as<int>(); }},
      {"head.scope_max_wait_s", Type::Int, "600",
       "After this long without a final accounting record the job is attributed from the hook's facts alone "
       "(state UNKNOWN), so no accepted job waits forever.",
       [](Config& c, const YAML::Node& n) { c.head.scope_max_wait_s = n.as<int>(); }},
      {"head.retry_backoff_s", Type::Int, "5", "Delay before retrying a job whose attribution step failed (e.g. slurmdbd down).",
       [](Config& c, const YAML::Node& n) { c.head.retry_backoff_s = n.as<int>(); }},
      {"head.window_lead_s", Type::Int, "300", "Evidence window starts this many seconds before the job start.",
       [](Config& c, const YAML::Node& n) { c.head.window_lead_s = n.as<int>(); }},
      {"head.window_grace_s", Type::Int, "60", "Evidence window ends this many seconds after the job end.",
       [](Config& c, const YAML::Node& n) { c.head.window_grace_s = n.as<int>(); }},
      {"head.write_comment", Type::Bool, "true",
       "Write the verdict into the job's Comment through slurmdbd (the user's own text is kept).",
       [](Config& c, const YAML::Node& n) { c.head.write_comment = n.as<bool>(); }},
      {"head.allow_opt_out", Type::Bool, "false",
       "Honour a user's `--attrib=off` (the SPANK option, forwarded by the epilog): the job is recorded as opted "
       "out instead of attributed. Keep it in step with the plugin's allow_opt_out argument.",
       [](Config& c, const YAML::Node& n) { c.head.allow_opt_out = n.as<bool>(); }},
      {"head.agents.address_template", Type::String, "",
       "Address of each node's agent (attributiond --role node), {node} replaced by the Slurm node name, e.g. "
       "\"{node}:7070\". Empty and no head.agents.addresses: the head reads every node from its own collectors.",
       [](Config& c, const YAML::Node& n) { c.head.agents.address_template = n.as<std::string>(); }},
      {"head.agents.addresses", Type::StringMap, "{}",
       "Per-node agent addresses (node: host:port), overriding the template.",
       [](Config& c, const YAML::Node& n) { c.head.agents.addresses = n.as<std::map<std::string, std::string>>(); }},
      {"head.agents.concurrency", Type::Int, "16", "Node agents asked at the same time for one job.",
       [](Config& c, const YAML::Node& n) { c.head.agents.concurrency = n.as<int>(); }},
      {"head.agents.deadline_ms", Type::Int, "10000",
       "Per-node deadline for a Collect call; a slower node is recorded as coverage `timeout` and the verdict "
       "is made from what arrived.",
       [](Config& c, const YAML::Node& n) { c.head.agents.deadline_ms = n.as<int>(); }},
      {"node.listen", Type::StringList, "[\"0.0.0.0:7070\"]",
       "gRPC listen addresses of a node agent (attributiond --role node).",
       [](Config& c, const YAML::Node& n) { c.node.listen = n.as<std::vector<std::string>>(); }},
      {"node.metrics_listen", Type::String, "",
       "host:port for a node agent's Prometheus endpoint (GET /metrics), e.g. \"127.0.0.1:9465\". Empty: no "
       "endpoint (several agents may share a host in tests and demos; each needs its own port).",
       [](Config& c, const YAML::Node& n) { c.node.metrics_listen = n.as<std::string>(); }},
      {"node.name", Type::String, "", "Slurm node name a node agent serves. Empty: the host's short name.",
       [](Config& c, const YAML::Node& n) { c.node.name = n.as<std::string>(); }},
      {"epilog.server", Type::String, "unix:///run/attrib/attributiond.sock",
       "Address attrib-epilog sends JobEnded to.",
       [](Config& c, const YAML::Node& n) { c.epilog.server = n.as<std::string>(); }},
      {"epilog.deadline_ms", Type::Int, "1000",
       "Deadline for the epilog's RPC; on expiry the job is spooled instead. Keep it short: hooks must not block.",
       [](Config& c, const YAML::Node& n) { c.epilog.deadline_ms = n.as<int>(); }},
      {"epilog.spool_dir", Type::String, "/var/spool/attrib",
       "Where attrib-epilog spools a job when the daemon is unreachable (same directory as head.spool_dir on the head node).",
       [](Config& c, const YAML::Node& n) { c.epilog.spool_dir = n.as<std::string>(); }},
      {"auth.mode", Type::String, "munge",
       "How every RPC is authenticated: `munge` (each request carries a MUNGE credential bound to its method "
       "and body; see docs/operations.md, Authentication) or `none` (no authentication at all: any peer may "
       "submit jobs, read every verdict and collect node evidence; tests and development only, logged loudly).",
       [](Config& c, const YAML::Node& n) { c.auth.mode = n.as<std::string>(); }},
      {"auth.munge_socket", Type::String, "",
       "munged's socket used to create and verify credentials. Empty: libmunge's default "
       "(/run/munge/munge.socket.2).",
       [](Config& c, const YAML::Node& n) { c.auth.munge_socket = n.as<std::string>(); }},
      {"auth.slurm_user", Type::String, "slurm",
       "The cluster's SlurmUser. Only it and root may submit JobEnded and call a node agent's Collect, and it "
       "sees every job's verdict.",
       [](Config& c, const YAML::Node& n) { c.auth.slurm_user = n.as<std::string>(); }},
      {"auth.admin_group", Type::String, "",
       "Unix group whose members (primary or supplementary) may read every job's verdict with attrib-show. "
       "Empty: only root and the SlurmUser; other users always see their own jobs only.",
       [](Config& c, const YAML::Node& n) { c.auth.admin_group = n.as<std::string>(); }},
      {"fleet.offender_threshold", Type::Int, "2",
       "A node (or one of its GPUs) is a repeat offender once this many counted verdicts blame it within "
       "fleet.offender_window_s. Counted: a trusted root cause in one of fleet.offender_domains; AMBIGUOUS, "
       "UNATTRIBUTED and untrusted verdicts never count. See docs/fleet.md.",
       [](Config& c, const YAML::Node& n) { c.fleet.offender_threshold = n.as<int>(); }},
      {"fleet.offender_window_s", Type::Int, "1209600", "The repeat-offender window in seconds (default 14 days).",
       [](Config& c, const YAML::Node& n) { c.fleet.offender_window_s = n.as<int>(); }},
      {"fleet.offender_domains", Type::StringList, "[GPU_HARDWARE, HOST_HARDWARE, NVLINK_FABRIC]",
       "Verdict domains whose trusted root cause counts against the node (and GPU) it names.",
       [](Config& c, const YAML::Node& n) { c.fleet.offender_domains = n.as<std::vector<std::string>>(); }},
      {"fleet.systemic_nodes", Type::Int, "16",
       "Systemic guard: when counted verdicts blame more than this many distinct nodes within "
       "fleet.systemic_window_s, the burst is reported as one systemic event and marks (and drains) no node.",
       [](Config& c, const YAML::Node& n) { c.fleet.systemic_nodes = n.as<int>(); }},
      {"fleet.systemic_window_s", Type::Int, "3600", "The systemic guard's window in seconds.",
       [](Config& c, const YAML::Node& n) { c.fleet.systemic_window_s = n.as<int>(); }},
      {"remediation.mode", Type::String, "off",
       "Node draining by the head daemon: `off`, `dry-run` (record and log what would be drained, touch nothing) "
       "or `drain` (set the node DRAIN through slurmctld with a reason starting `attrib:`). Needs the daemon to run "
       "as root or the SlurmUser. See docs/fleet.md, Remediation.",
       [](Config& c, const YAML::Node& n) { c.remediation.mode = n.as<std::string>(); }},
      {"remediation.max_drains_per_hour", Type::Int, "4",
       "At most this many drains (or, in dry-run, would-be drains) in any hour; more are recorded as rate-limited.",
       [](Config& c, const YAML::Node& n) { c.remediation.max_drains_per_hour = n.as<int>(); }},
      {"remediation.on_verdict", Type::Bool, "true",
       "Drain the root cause node of a verdict that recommends DRAIN_NODE with a trusted root cause.",
       [](Config& c, const YAML::Node& n) { c.remediation.on_verdict = n.as<bool>(); }},
      {"remediation.on_repeat_offender", Type::Bool, "true",
       "Drain a node when a new verdict makes it (or one of its GPUs) a repeat offender.",
       [](Config& c, const YAML::Node& n) { c.remediation.on_repeat_offender = n.as<bool>(); }},
      {"rules.pack_dir", Type::String, "/usr/share/attrib/rules", "The shipped rule pack.",
       [](Config& c, const YAML::Node& n) { c.rules_pack_dir = n.as<std::string>(); }},
      {"rules.site_dirs", Type::StringList, "[]", "Site rule directories, loaded after the pack.",
       [](Config& c, const YAML::Node& n) { c.rules_site_dirs = n.as<std::vector<std::string>>(); }},
      {"collectors", Type::CollectorList, "[]",
       "Evidence sources the head reads for each allocated node: a list of {kind: <collector>, options: {...}}. "
       "See docs/collectors.md for each kind's options.",
       [](Config& c, const YAML::Node& n) {
         for (const auto& item : n) c.collectors.push_back({item["kind"].as<std::string>(),
                                                            item["options"] ? item["options"] : YAML::Node(YAML::NodeType::Map),
                                                            item.Mark().line + 1});
       }},
  };
  return table;
}

std::string where(const std::string& path, const YAML::Node& node) {
  return path + ":" + std::to_string(node.Mark().line + 1);
}

bool has_type(const YAML::Node& node, Type type) {
  try {
    switch (type) {
      case Type::String: return node.IsScalar();
      case Type::Int: node.as<int>(); return node.IsScalar();
      case Type::Bool: node.as<bool>(); return node.IsScalar();
      case Type::StringList: node.as<std::vector<std::string>>(); return node.IsSequence();
      case Type::StringMap: node.as<std::map<std::string, std::string>>(); return node.IsMap();
      case Type::CollectorList:
        if (!node.IsSequence()) return false;
        for (const auto& item : node) {
          if (!item.IsMap() || !item["kind"] || !item["kind"].IsScalar()) return false;
          for (const auto& kv : item) {
            auto k = kv.first.as<std::string>();
            if (k != "kind" && k != "options") return false;
          }
          if (item["options"] && !item["options"].IsMap()) return false;
        }
        return true;
    }
  } catch (const YAML::Exception&) {
    return false;
  }
  return false;
}

// Walks the document; every leaf must be a declared key.
Status validate(const YAML::Node& node, const std::string& prefix, const std::string& file) {
  for (const auto& kv : node) {
    std::string name = kv.first.as<std::string>();
    std::string dotted = prefix.empty() ? name : prefix + "." + name;
    const Key* declared = nullptr;
    bool is_section = false;
    for (const Key& key : keys()) {
      if (dotted == key.path) declared = &key;
      if (std::string(key.path).rfind(dotted + ".", 0) == 0) is_section = true;
    }
    if (declared != nullptr) {
      if (!has_type(kv.second, declared->type))
        return Error{kConfigType, where(file, kv.second) + ": " + dotted + ": expected " +
                                          type_name(declared->type)};
      continue;
    }
    if (is_section && kv.second.IsMap()) {
      if (auto s = validate(kv.second, dotted, file); !s) return s;
      continue;
    }
    return Error{kConfigUnknownKey, where(file, kv.first) + ": unknown key '" + dotted + "'"};
  }
  return ok_status();
}

// Recursive on purpose: assigning yaml-cpp nodes (node = node[part]) rewrites the
// referenced node instead of rebinding the handle.
YAML::Node find(const YAML::Node& node, const std::string& dotted) {
  auto dot = dotted.find('.');
  std::string head = dotted.substr(0, dot);
  if (!node.IsMap() || !node[head]) return YAML::Node();
  if (dot == std::string::npos) return node[head];
  return find(node[head], dotted.substr(dot + 1));
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
  if (auto s = validate(root, "", path_for_errors); !s) return s.error();

  Config config;
  config.path = path_for_errors;
  for (const Key& key : keys()) {
    YAML::Node value = find(root, key.path);
    if (!value || value.IsNull()) value.reset(YAML::Load(key.default_value));  // reset: rebind, not assign
    if (value && !value.IsNull()) key.apply(config, value);
  }
  if (config.cluster.empty()) return Error{kConfigRequired, path_for_errors + ": 'cluster' is required"};
  if (config.head.agents.concurrency < 1)
    return Error{kConfigValue, path_for_errors + ": head.agents.concurrency must be >= 1"};
  if (config.head.dashboard_session_ttl_s < 60)
    return Error{kConfigValue, path_for_errors + ": head.dashboard_session_ttl_s must be >= 60"};
  if (config.head.workers < 1) return Error{kConfigValue, path_for_errors + ": head.workers must be >= 1"};
  if (config.remediation.mode != "off" && config.remediation.mode != "dry-run" && config.remediation.mode != "drain")
    return Error{kConfigValue, path_for_errors + ": remediation.mode must be off, dry-run or drain, not '" +
                                       config.remediation.mode + "'"};
  if (config.fleet.offender_threshold < 1 || config.fleet.offender_window_s < 1 || config.fleet.systemic_nodes < 1 ||
      config.fleet.systemic_window_s < 1 || config.remediation.max_drains_per_hour < 0)
    return Error{kConfigValue, path_for_errors + ": fleet.* must be >= 1 and remediation.max_drains_per_hour >= 0"};
  if (config.auth.mode != "munge" && config.auth.mode != "none")
    return Error{kConfigValue, path_for_errors + ": auth.mode must be munge or none, not '" + config.auth.mode + "'"};
  return config;
}

Result<Config> load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{kConfigOpen, "cannot read configuration file " + path};
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path);
}

std::string config_reference_markdown() {
  std::string out = "| key | type | default | meaning |\n|---|---|---|---|\n";
  for (const Key& key : keys()) {
    out += std::string("| `") + key.path + "` | " + type_name(key.type) + " | `" + key.default_value + "` | " +
           key.help + " |\n";
  }
  return out;
}

std::string dashboard_address(const std::string& listen) {
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
