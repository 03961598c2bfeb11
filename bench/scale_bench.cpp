// Benchmark 10: the head's own cost as the allocation grows (--sizes, default 64, 512, 2,048
// and 8,192 nodes). One failing job per size and --repeat: an Xid 79 on one node and an NCCL
// watchdog timeout in the job's output on every node, as a dead GPU leaves a wide job.
//
// The evidence is measured, not invented: first the real node path (pipeline::collect_node:
// the journald collector over a journal written by systemd-journal-remote, --entries entries,
// the rules engine) runs for a peer node and for the Xid node, timed (the node-side cost,
// which each node pays in parallel on its own cores); their answers (to_proto, as a node
// agent sends them) are then what --servers answering agents (gRPC servers on 127.0.0.1, one
// port each, nodes spread over them) return for every node of the job, with that node's name.
// So what is timed per size is the head alone: SubmitJobEnded, the queue, scoping the
// N-node record, the fan-out of N Collect RPCs (head.agents.concurrency at its default), N
// answers merged, correlation, the archive and the comment; the answering servers share
// the same cores, so the figures are pessimistic.
//
// Per size: verdict latency (SubmitJobEnded -> archived, GetVerdict polled every 2 ms;
// median of --repeat), the process' peak RSS over those jobs, accounting calls per job, and
// the growth exponent of the latency between sizes and over all of them (log-log slope).
//
//   attrib-bench-scale [--sizes 64,512,2048,8192] [--entries N] [--servers N] [--repeat N] [--pack DIR]
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "attributiond/pipeline/node_evidence.h"
#include "bench/head_harness.h"
#include "bench/node_agents.h"
#include "core/clock.h"
#include "rules/engine.h"

using namespace attrib;
namespace bench = attrib::bench;
namespace fs = std::filesystem;

namespace {

constexpr const char* kXid = "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";
// The pack's own example of the line (rules/pack): what every surviving rank prints.
constexpr const char* kWatchdog =
    "[rank1]:[E1130 08:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before "
    "timing out.";

std::string scale_node(int i) {
  char name[16];
  std::snprintf(name, sizeof name, "g%05d", i + 1);
  return name;
}

// Answers Collect for any node with a recorded answer, renamed to that node: what the
// node's own agent would send. Signed as a real agent signs (auth none here).
class RecordedAgent final : public v1::NodeCollector::Service {
 public:
  RecordedAgent(const v1::CollectResponse& peer, const v1::CollectResponse& xid, std::string xid_node)
      : peer_(peer), xid_(xid), xid_node_(std::move(xid_node)), auth_(common::Authenticator::none()) {}

  grpc::Status Collect(grpc::ServerContext* context, const v1::CollectRequest* request,
                       v1::CollectResponse* response) override {
    response->CopyFrom(request->node() == xid_node_ ? xid_ : peer_);
    for (auto& e : *response->mutable_events()) e.set_node(request->node());
    for (auto& c : *response->mutable_coverage()) c.set_node(request->node());
    if (auto s = auth_->sign_answer(*context, common::kCollect, *request, *response); !s)
      return grpc::Status(grpc::StatusCode::INTERNAL, s.error().message);
    return grpc::Status::OK;
  }

 private:
  const v1::CollectResponse& peer_;
  const v1::CollectResponse& xid_;
  const std::string xid_node_;
  std::shared_ptr<const common::Authenticator> auth_;
};

// The real node path over one journal directory: its answer and the seconds it took.
std::pair<v1::CollectResponse, double> node_answer(const fs::path& journal_dir, const std::string& node,
                                                   const std::shared_ptr<const rules::RulePack>& pack, TimeUs start,
                                                   TimeUs end) {
  YAML::Node options;
  options["directory"] = journal_dir.string();
  options["match_hostname"] = false;
  options["app_identifiers"].push_back("python3");
  auto journald = collectors::create_collector("journald", options);
  if (!journald) throw std::runtime_error("journald: " + journald.error().message);
  std::vector<std::unique_ptr<collectors::Collector>> list;
  list.push_back(std::move(*journald));
  collectors::CollectRequest request{.job_id = "1", .node = node, .window_start = start, .window_end = end};
  std::vector<double> seconds;
  pipeline::NodeEvidence evidence;
  for (int r = 0; r < 3; ++r) {
    const double t0 = bench::now_s();
    evidence = pipeline::collect_node(pack, list, request);
    seconds.push_back(bench::now_s() - t0);
  }
  return {pipeline::to_proto(evidence, rules::pack_hash(*pack)), bench::percentile(seconds, 50)};
}

std::vector<int> parse_sizes(const std::string& text) {
  std::vector<int> sizes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) sizes.push_back(std::stoi(item));
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {64, 512, 2048, 8192};
  int entries = 20000, servers = 64, repeat = 3;
  std::string pack_dir = ATTRIB_BENCH_PACK_DIR;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (key == "--sizes")
      sizes = parse_sizes(argv[i + 1]);
    else if (key == "--entries")
      entries = std::stoi(argv[i + 1]);
    else if (key == "--servers")
      servers = std::stoi(argv[i + 1]);
    else if (key == "--repeat")
      repeat = std::stoi(argv[i + 1]);
    else if (key == "--pack")
      pack_dir = argv[i + 1];
    else {
      std::fprintf(stderr,
                   "usage: attrib-bench-scale [--sizes 64,512,2048,8192] [--entries N] [--servers N] [--repeat N]\n");
      return 2;
    }
  }
  if (sizes.empty() || servers < 1 || repeat < 1) return 2;
  bench::print_machine();
  const fs::path dir = bench::work_dir("scale");
  const TimeUs now = wall_clock_us();
  const TimeUs start = now - 3600ll * 1000000, end = now - 120ll * 1000000;
  auto pack = rules::load_rule_pack({pack_dir, {}});
  if (!pack) return 1;

  // The node side, measured: a peer (background + the watchdog timeout in the job's output)
  // and the Xid node (the same + the Xid in its kernel log).
  fs::create_directories(dir / "peer");
  fs::create_directories(dir / "xid");
  if (!bench::write_journal(dir / "peer" / "node.journal", entries, start, end, kWatchdog, 1, /*extra_kernel=*/false) ||
      !bench::write_journal(dir / "xid" / "node.journal", entries, start, end, kWatchdog, 1, false) ||
      !bench::write_journal(dir / "xid" / "xid.journal", 0, start, end, kXid)) {
    std::fprintf(stderr, "attrib-bench-scale: systemd-journal-remote failed\n");
    return 1;
  }
  const int xid_index = std::min(7, *std::min_element(sizes.begin(), sizes.end()) - 1);  // in every size's job
  auto [peer, peer_s] = node_answer(dir / "peer", scale_node(0), *pack, start, end);
  auto [xid, xid_s] = node_answer(dir / "xid", scale_node(xid_index), *pack, start, end);
  std::printf("node side (real collect_node, journald, %d entries; median of 3): peer %.3f s (%d events, %d "
              "coverage rows, %zu bytes answer), Xid node %.3f s (%d events)\n",
              entries, peer_s, peer.events_size(), peer.coverage_size(), peer.ByteSizeLong(), xid_s,
              xid.events_size());
  bench::figure("scale.node_side_s", std::max(peer_s, xid_s), "s");

  // The answering agents.
  RecordedAgent agent(peer, xid, scale_node(xid_index));
  std::vector<std::unique_ptr<grpc::Server>> agent_servers;
  std::vector<std::string> addresses;
  for (int s = 0; s < servers; ++s) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&agent);
    agent_servers.push_back(builder.BuildAndStart());
    if (!agent_servers.back() || port == 0) {
      std::fprintf(stderr, "agent server %d did not start\n", s);
      return 1;
    }
    addresses.push_back("127.0.0.1:" + std::to_string(port));
  }
  const int largest = *std::max_element(sizes.begin(), sizes.end());
  auto config = bench::head_config(dir, pack_dir);
  config.head.agents.deadline_ms = 60000;
  config.head.window_lead_s = 0;
  config.head.window_grace_s = 0;
  config.head.raw_evidence_max_kib = 0;  // the agents' answers carry events only (8: raw evidence)
  for (int i = 0; i < largest; ++i) config.head.agents.addresses[scale_node(i)] = addresses[i % servers];
  std::printf("head: head.agents.concurrency %d, %d answering servers\n", config.head.agents.concurrency, servers);

  auto accounting = std::make_shared<bench::RecordedAccounting>();
  accounting->facts.state = "FAILED";
  accounting->facts.exit_code = 1;
  accounting->facts.start = start;
  accounting->facts.end = end;
  auto daemon = bench::start_head(config, {}, accounting);
  auto stub = bench::client(config.head.listen[0]);

  std::vector<double> latency;  // median per size
  int job = 800000;
  bool all_right = true;
  for (int size : sizes) {
    accounting->facts.nodes.clear();
    for (int i = 0; i < size; ++i) accounting->facts.nodes.push_back(scale_node(i));
    const uint64_t reads0 = accounting->reads, writes0 = accounting->writes;
    const double rss_before = bench::rss_mib();
    bench::reset_peak_rss();
    std::vector<double> seconds;
    std::string verdict_json;
    for (int r = 0; r < repeat; ++r) {
      v1::JobEnded ended;
      ended.set_job_id(std::to_string(++job));
      ended.set_node_list("g[00001-" + scale_node(size - 1).substr(1) + "]");
      ended.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
      ended.set_exit_code(1);
      try {
        seconds.push_back(bench::submit_until_archived(*stub, ended, &verdict_json));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "attrib-bench-scale: %s\n", e.what());
        return 1;
      }
    }
    // The comment is written after the archive: wait for it, so the calls are all counted.
    for (int w = 0; w < 5000 && accounting->writes - writes0 < static_cast<uint64_t>(repeat); ++w)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const double peak = bench::peak_rss_mib();
    auto v = nlohmann::json::parse(verdict_json);
    const std::string rule = v["root_cause"].is_object() ? v["root_cause"].value("rule", "") : "-";
    const std::string affected = v["affected_nodes"].dump();
    const bool right = rule == "gpu.fallen_off_bus" && affected == "[\"" + scale_node(xid_index) + "\"]";
    all_right = all_right && right;
    const double median = bench::percentile(seconds, 50);
    latency.push_back(median);
    std::printf("%5d nodes: verdict %.3f s (median of %d; min %.3f, max %.3f), %s %s on %s, %zu symptoms listed "
                "(%" PRIu64 " omitted), %zu coverage rows; RSS %.1f MiB before, peak %.1f MiB; accounting per job: "
                "%.1f reads, %.1f writes\n",
                size, median, repeat, *std::min_element(seconds.begin(), seconds.end()),
                *std::max_element(seconds.begin(), seconds.end()), v.value("domain", "").c_str(), rule.c_str(),
                affected.c_str(), v["symptoms"].size(), v.value("symptoms_omitted", uint64_t{0}), v["coverage"].size(),
                rss_before, peak, static_cast<double>(accounting->reads - reads0) / repeat,
                static_cast<double>(accounting->writes - writes0) / repeat);
    const std::string n = std::to_string(size);
    bench::figure("scale." + n + ".verdict_s", median, "s");
    bench::figure("scale." + n + ".peak_rss_mib", peak, "MiB");
    bench::figure("scale." + n + ".rss_growth_mib", peak - rss_before, "MiB");
    bench::figure("scale." + n + ".accounting_calls_per_job",
                  static_cast<double>(accounting->reads - reads0 + accounting->writes - writes0) / repeat, "calls");
    if (size == 2048) bench::target("scale head at 2,048 nodes < 2 s", median, 2, true);
  }
  daemon->stop();
  for (auto& s : agent_servers) s->Shutdown();

  // Growth: the log-log slope between neighbouring sizes, and over all (least squares).
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double x = std::log(sizes[i]), y = std::log(latency[i]);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
    if (i > 0)
      std::printf("growth %d -> %d nodes: exponent %.2f\n", sizes[i - 1], sizes[i],
                  std::log(latency[i] / latency[i - 1]) / std::log(static_cast<double>(sizes[i]) / sizes[i - 1]));
  }
  const double count = static_cast<double>(sizes.size());
  if (sizes.size() > 1) bench::figure("scale.growth_exponent", (count * sxy - sx * sy) / (count * sxx - sx * sx), "");
  bench::figure("scale.verdicts_right", all_right ? 1 : 0, "bool");
  bench::target("scale verdicts name the Xid node", all_right ? 1 : 0, 1, false);
  fs::remove_all(dir);
  return all_right ? 0 : 1;
}
