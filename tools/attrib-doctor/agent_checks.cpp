#include "tools/attrib-doctor/agent_checks.h"

#include <chrono>
#include <cstdlib>
#include <set>

#include "attrib/v1/attrib.grpc.pb.h"
#include "common/auth.h"
#include "common/grpc_limits.h"
#include "core/clock.h"
#include "rules/engine.h"
#include "slurm/ctl_config.h"
#include "slurm/slurmdbd_client.h"

namespace attrib::doctor {
namespace {

constexpr TimeUs kSecond = 1000 * 1000;
constexpr TimeUs kMungeTtl = 300 * kSecond;  // munged's default credential time-to-live

std::string short_hash(const std::string& hash) { return hash.substr(0, std::min<size_t>(hash.size(), 19)); }

// A failed or missing source the node must have; nullopt when the source is fine.
std::optional<std::string> source_problem(const v1::Coverage& row, uint32_t nvswitch_devices) {
  const std::string& status = row.status();
  const std::string detail = row.detail().empty() ? "" : " (" + row.detail() + ")";
  if (status == "failed" || status == "refused" || status == "timeout") return row.source() + " " + status + detail;
  if (status == "unavailable" && (row.source() == "kernel" || row.source() == "kmsg"))
    return row.source() + " unavailable" + detail + ": no kernel log, no Xid";
  if (status == "unavailable" && row.source() == "fabricmanager" && nvswitch_devices > 0)
    return "fabricmanager unavailable" + detail + " on a node with " + std::to_string(nvswitch_devices) +
           " NVSwitch devices";
  return std::nullopt;
}

std::vector<std::string> nodes_to_check(const common::AgentsConfig& agents, const std::optional<std::string>& only,
                                        Findings& out) {
  if (only) return {*only};
  std::set<std::string> nodes;
  for (const auto& [node, address] : agents.addresses) nodes.insert(node);
  if (!agents.address_template.empty()) {
    auto known = slurm::cluster_node_names();
    if (!known)
      out.fail("agents", "node list", known.error().message, "start slurmctld, or check one node with --node N");
    else
      nodes.insert(known->begin(), known->end());
  }
  return {nodes.begin(), nodes.end()};
}

}  // namespace

void judge_agent_answer(const std::string& node, const std::string& address, const v1::CollectResponse& answer,
                        const HeadPack& head, TimeUs answered_at, Findings& out) {
  const std::string area = "agent " + node;
  if (answer.ruleset_hash() != head.hash) {
    out.fail(area, "rule pack",
             address + " runs pack " + (answer.ruleset_version().empty() ? "?" : answer.ruleset_version()) + " (" +
                 short_hash(answer.ruleset_hash()) + "), the head " + head.version + " (" + short_hash(head.hash) +
                 "): the node judges its lines by other rules",
             "install the head's attrib-rules package (and rules.site_dirs) on " + node + ", restart its agent");
  } else {
    out.ok(area, "rule pack", "pack " + head.version + ", same as the head");
  }
  if (answer.agent_time_us() == 0) {
    out.warn(area, "clock", "the agent does not report its clock (an older attrib)", "upgrade attrib on " + node);
  } else {
    const TimeUs skew = answer.agent_time_us() - answered_at;
    const std::string saw = "agent clock " + std::string(skew >= 0 ? "+" : "") +
                            std::to_string(static_cast<double>(skew) / kSecond).substr(0, 6) + " s from the head's";
    if (std::llabs(skew) > kMungeTtl)
      out.fail(area, "clock", saw + ": past MUNGE's credential lifetime, every call fails",
               "run chrony or ntpd on " + node + " and the head");
    else if (std::llabs(skew) > 30 * kSecond)
      out.warn(area, "clock", saw + ": job windows are cut by the head's clock", "run chrony or ntpd on both");
    else
      out.ok(area, "clock", saw);
  }
  std::string sources;
  bool any_problem = false;
  for (const v1::Coverage& row : answer.coverage()) {
    if (auto problem = source_problem(row, answer.nvswitch_devices())) {
      out.fail(area, "source " + row.source(), *problem,
               "see docs/collectors.md for the " + row.source() + " source's settings on " + node);
      any_problem = true;
    }
    sources += (sources.empty() ? "" : ", ") + row.source() + " " + row.status();
  }
  if (!any_problem)
    out.ok(area, "sources",
           (sources.empty() ? "none configured" : sources) + "; " + std::to_string(answer.nvswitch_devices()) +
               " NVSwitch devices");
}

void check_agents(const common::Config& config, const std::optional<std::string>& only_node, Findings& out) {
  const common::AgentsConfig& agents = config.head.agents;
  if (!agents.enabled()) {
    if (only_node)
      out.fail("agents", "configured", "head.agents is not set: the head reads node logs itself, no agent to ask",
               "set head.agents.address_template (docs/admin-guide.md, node agents) or leave out --node");
    else
      out.ok("agents", "configured", "no node agents (head.agents not set): the head reads the nodes' logs itself");
    return;
  }
  auto pack =
      rules::load_rule_pack({config.rules_pack_dir, {config.rules_site_dirs.begin(), config.rules_site_dirs.end()}});
  if (!pack) {
    out.fail("agents", "head's rule pack", pack.error().message, "fix rules.pack_dir in " + config.path);
    return;
  }
  const HeadPack head{rules::pack_version(**pack), rules::pack_hash(**pack)};
  auto auth = common::Authenticator::create(config.auth);
  if (!auth) {
    out.fail("agents", "auth", auth.error().message, "fix the auth section of " + config.path);
    return;
  }
  for (const std::string& node : nodes_to_check(agents, only_node, out)) {
    const std::string address = agents.address_for(node);
    auto stub = v1::NodeCollector::NewStub(common::make_channel(address));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(agents.deadline_ms));
    v1::CollectRequest request;
    // A job id no job has: the agent's collectors read the window, nothing of a real job.
    request.set_job_id(slurm::SlurmdbdConnection::kNoSuchJobId);
    request.set_cluster(config.cluster);
    request.set_node(node);
    request.set_window_end_us(wall_clock_us());
    request.set_window_start_us(request.window_end_us() - 60 * kSecond);
    request.set_nonce(common::random_nonce());
    const std::string area = "agent " + node;
    if (auto signed_ = (*auth)->sign_request(context, common::kCollect, request); !signed_) {
      out.fail(area, "reachable", "cannot sign the call: " + signed_.error().message, "start munged on the head");
      continue;
    }
    v1::CollectResponse response;
    const grpc::Status status = stub->Collect(&context, request, &response);
    const TimeUs answered_at = wall_clock_us();
    if (!status.ok()) {
      const bool down = status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                        status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
      out.fail(area, "reachable", address + ": " + common::describe_grpc_failure(status),
               down ? "start the agent on " + node + " (systemctl start attributiond-node) and check " +
                          "head.agents' address for it"
                    : "check auth (munged on both hosts, the same key) and node.name on " + node);
      continue;
    }
    if (auto genuine = (*auth)->verify_answer(context, common::kCollect, request, response); !genuine) {
      out.fail(area, "signed answer", address + ": " + genuine.error().message,
               "run the agent as auth.agent_user (" + config.auth.agent_user + ") with the cluster's MUNGE key");
      continue;
    }
    out.ok(area, "reachable", address + " answered, signed by " + config.auth.agent_user);
    judge_agent_answer(node, address, response, head, answered_at, out);
  }
}

}  // namespace attrib::doctor
