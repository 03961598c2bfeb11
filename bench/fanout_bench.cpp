// Benchmark 5: fan-out. One --nodes-node job (default 64) over as many real node agents
// (NodeCollectService behind its own gRPC server on 127.0.0.1, as `attributiond --role
// node` serves it), each reading its own journal directory with the real journald
// collector: --entries journal entries (default 100,000) inside the job window, written
// by systemd-journal-remote (kernel transport and a python3 job's stdout), plus, on one
// node, an Xid 79. The head daemon (in-process, auth.mode none) fans Collect out to all
// agents (head.agents.concurrency = --concurrency, default: one per node), correlates and
// archives. Measures the time from SubmitJobEnded to the archived verdict (GetVerdict
// polled every 2 ms), --repeat times (distinct jobs over the same evidence).
//
//   attrib-bench-fanout [--nodes N] [--entries N] [--concurrency N] [--repeat N] [--pack DIR]
#include <cinttypes>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/head_harness.h"
#include "bench/node_agents.h"
#include "core/clock.h"

using namespace attrib;
namespace bench = attrib::bench;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
  int nodes = 64, entries = 100000, concurrency = 0, repeat = 3;
  std::string pack_dir = ATTRIB_BENCH_PACK_DIR;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (key == "--nodes")
      nodes = std::stoi(argv[i + 1]);
    else if (key == "--entries")
      entries = std::stoi(argv[i + 1]);
    else if (key == "--concurrency")
      concurrency = std::stoi(argv[i + 1]);
    else if (key == "--repeat")
      repeat = std::stoi(argv[i + 1]);
    else if (key == "--pack")
      pack_dir = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: attrib-bench-fanout [--nodes N] [--entries N] [--concurrency N] [--repeat N]\n");
      return 2;
    }
  }
  if (concurrency <= 0) concurrency = nodes;
  bench::print_machine();
  const fs::path dir = bench::work_dir("fanout");
  const TimeUs now = wall_clock_us();
  const TimeUs start = now - 3600ll * 1000000, end = now - 120ll * 1000000;

  // One journal of `entries` entries, hard-linked into every agent's directory (64 copies
  // of the same bytes would only cost disk); the Xid node gets a second, one-entry file.
  const double g0 = bench::now_s();
  fs::create_directories(dir / "shared");
  if (!bench::write_journal(dir / "shared" / "node.journal", entries, start, end, "")) {
    std::fprintf(stderr, "attrib-bench-fanout: systemd-journal-remote failed\n");
    return 1;
  }
  const int xid_node = nodes / 2;
  for (int i = 0; i < nodes; ++i) {
    fs::create_directories(dir / "journal" / bench::node_name(i));
    fs::create_hard_link(dir / "shared" / "node.journal", dir / "journal" / bench::node_name(i) / "node.journal");
  }
  if (!bench::write_journal(dir / "journal" / bench::node_name(xid_node) / "xid.journal", 0, start, end,
                     "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.")) {
    return 1;
  }
  std::printf("journals: %d entries per node (%.1f MB file), written in %.1f s\n", entries,
              static_cast<double>(fs::file_size(dir / "shared" / "node.journal")) / 1e6, bench::now_s() - g0);

  auto pack = rules::load_rule_pack({pack_dir, {}});
  if (!pack) return 1;
  auto config = bench::head_config(dir, pack_dir);
  config.head.agents.concurrency = concurrency;
  config.head.agents.deadline_ms = 60000;
  config.head.window_lead_s = 0;
  config.head.window_grace_s = 0;
  std::vector<bench::Agent> agents = bench::start_agents(dir / "journal", nodes, *pack, config);
  if (agents.empty()) return 1;
  auto accounting = std::make_shared<bench::RecordedAccounting>();
  accounting->facts.state = "FAILED";
  accounting->facts.exit_code = 1;
  accounting->facts.start = start;
  accounting->facts.end = end;
  for (int i = 0; i < nodes; ++i) accounting->facts.nodes.push_back(bench::node_name(i));
  auto daemon = bench::start_head(config, {}, accounting);
  auto stub = bench::client(config.head.listen[0]);

  std::vector<double> seconds;
  std::string verdict_json;
  for (int r = 0; r < repeat; ++r) {
    const std::string job_id = std::to_string(700000 + r);
    v1::JobEnded job;
    job.set_job_id(job_id);
    job.set_node_list("n[001-" + bench::node_name(nodes - 1).substr(1) + "]");
    job.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
    job.set_exit_code(1);
    double s = 0;
    try {
      s = bench::submit_until_archived(*stub, job, &verdict_json);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "attrib-bench-fanout: %s\n", e.what());
      return 1;
    }
    seconds.push_back(s);
    std::printf("job %s: JobEnded -> archived verdict %.3f s\n", job_id.c_str(), s);
  }
  daemon->stop();
  for (auto& a : agents) a.server->Shutdown();

  auto v = nlohmann::json::parse(verdict_json);
  uint64_t lines = 0;
  int agent_rows = 0;
  for (const auto& c : v["coverage"]) {
    lines += c.value("lines", 0ull);
    if (c.value("source", "") == "agent") ++agent_rows;
  }
  std::printf(
      "verdict: %s rule=%s affected=%s; coverage rows %zu, lines read %" PRIu64 " (%d nodes x %d entries + 1)\n",
      v.value("domain", "").c_str(), v["root_cause"].is_object() ? v["root_cause"].value("rule", "").c_str() : "-",
      v["affected_nodes"].dump().c_str(), v["coverage"].size(), lines, nodes, entries);
  bench::figure("fanout.min_s", *std::min_element(seconds.begin(), seconds.end()), "s");
  bench::figure("fanout.median_s", bench::percentile(seconds, 50), "s");
  bench::figure("fanout.entries_per_s", static_cast<double>(lines) / bench::percentile(seconds, 50), "entries/s");
  bench::target("fanout median < 2 s", bench::percentile(seconds, 50), 2, true);
  fs::remove_all(dir);
  return 0;
}
