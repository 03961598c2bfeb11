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

#include "attributiond/node/node_collect_service.h"
#include "bench/head_harness.h"
#include "core/clock.h"

using namespace attrib;
namespace bench = attrib::bench;
namespace fs = std::filesystem;

namespace {

std::string node_name(int i) {
  char name[16];
  std::snprintf(name, sizeof name, "n%03d", i + 1);
  return name;
}

// journalctl's export format for `entries` entries between start and end (µs), piped
// into systemd-journal-remote. Returns false when it fails.
bool write_journal(const fs::path& file, int entries, TimeUs start, TimeUs end, const std::string& extra_message) {
  const std::string cmd = std::string(ATTRIB_BENCH_JOURNAL_REMOTE) + " --output=" + file.string() + " - 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "w");
  if (!pipe) return false;
  const std::string boot = "0123456789abcdef0123456789abcdef";
  const TimeUs step = std::max<TimeUs>(1, (end - start) / std::max(1, entries + 1));
  auto entry = [&](TimeUs t, bool kernel, const std::string& message) {
    std::fprintf(pipe,
                 "__REALTIME_TIMESTAMP=%" PRId64 "\n__MONOTONIC_TIMESTAMP=%" PRId64
                 "\n_BOOT_ID=%s\n_HOSTNAME=node\n_TRANSPORT=%s\nSYSLOG_IDENTIFIER=%s\n_UID=%s\nPRIORITY=6\n"
                 "MESSAGE=%s\n\n",
                 t, static_cast<int64_t>(t - start + 86400000000ll), boot.c_str(), kernel ? "kernel" : "stdout",
                 kernel ? "kernel" : "python3", kernel ? "0" : "1000", message.c_str());
  };
  for (int i = 0; i < entries; ++i) {
    const TimeUs t = start + step * (i + 1);
    if (i % 5 == 4) {
      entry(t, false,
            "{'loss': 2." + std::to_string(i) + ", 'grad_norm': 0.91, 'learning_rate': 1e-04, 'epoch': 0." +
                std::to_string(i % 100) + "}");
    } else if (i % 5 == 0) {
      entry(t, true,
            "audit: type=1400 audit(1796025601." + std::to_string(i % 1000) + ":" + std::to_string(i) +
                "): apparmor=\"ALLOWED\" operation=\"open\" profile=\"snap.lxd.daemon\" name=\"/proc/" +
                std::to_string(1000 + i) + "/stat\" pid=" + std::to_string(1000 + i) + " comm=\"lxd\"");
    } else if (i % 5 == 1) {
      entry(t, true, "IPv4: martian source 10.1." + std::to_string(i % 250) + ".7 from 10.2.3.4, on dev ib0");
    } else if (i % 5 == 2) {
      entry(t, true, "device veth" + std::to_string(1000000 + i) + " entered promiscuous mode");
    } else {
      entry(t, true,
            "perf: interrupt took too long (" + std::to_string(2500 + i % 100) +
                " > 2495), lowering kernel.perf_event_max_sample_rate to 79750");
    }
  }
  if (!extra_message.empty()) entry(start + (end - start) / 2, true, extra_message);
  return ::pclose(pipe) == 0;
}

struct Agent {
  std::unique_ptr<node::NodeCollectService> service;
  std::unique_ptr<grpc::Server> server;
};

}  // namespace

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
  if (!write_journal(dir / "shared" / "node.journal", entries, start, end, "")) {
    std::fprintf(stderr, "attrib-bench-fanout: systemd-journal-remote failed\n");
    return 1;
  }
  const int xid_node = nodes / 2;
  for (int i = 0; i < nodes; ++i) {
    fs::create_directories(dir / "journal" / node_name(i));
    fs::create_hard_link(dir / "shared" / "node.journal", dir / "journal" / node_name(i) / "node.journal");
  }
  if (!write_journal(dir / "journal" / node_name(xid_node) / "xid.journal", 0, start, end,
                     "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.")) {
    return 1;
  }
  std::printf("journals: %d entries per node (%.1f MB file), written in %.1f s\n", entries,
              static_cast<double>(fs::file_size(dir / "shared" / "node.journal")) / 1e6, bench::now_s() - g0);

  auto pack = rules::load_rule_pack({pack_dir, {}});
  if (!pack) return 1;
  std::vector<Agent> agents;
  auto config = bench::head_config(dir, pack_dir);
  config.head.agents.concurrency = concurrency;
  config.head.agents.deadline_ms = 60000;
  config.head.window_lead_s = 0;
  config.head.window_grace_s = 0;
  for (int i = 0; i < nodes; ++i) {
    YAML::Node options;
    options["directory"] = (dir / "journal" / node_name(i)).string();
    options["match_hostname"] = false;  // a node's own journal
    options["app_identifiers"].push_back("python3");
    auto journald = collectors::create_collector("journald", options);
    if (!journald) {
      std::fprintf(stderr, "attrib-bench-fanout: journald: %s\n", journald.error().message.c_str());
      return 1;
    }
    std::vector<std::unique_ptr<collectors::Collector>> list;
    list.push_back(std::move(*journald));
    Agent agent;
    agent.service =
        std::make_unique<node::NodeCollectService>(node_name(i), *pack, std::move(list), common::Authenticator::none());
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(agent.service.get());
    builder.SetMaxSendMessageSize(-1);
    agent.server = builder.BuildAndStart();
    if (!agent.server || port == 0) {
      std::fprintf(stderr, "attrib-bench-fanout: agent %d did not start\n", i);
      return 1;
    }
    config.head.agents.addresses[node_name(i)] = "127.0.0.1:" + std::to_string(port);
    agents.push_back(std::move(agent));
  }
  auto accounting = std::make_shared<bench::RecordedAccounting>();
  accounting->facts.state = "FAILED";
  accounting->facts.exit_code = 1;
  accounting->facts.start = start;
  accounting->facts.end = end;
  for (int i = 0; i < nodes; ++i) accounting->facts.nodes.push_back(node_name(i));
  auto daemon = bench::start_head(config, {}, accounting);
  auto stub = bench::client(config.head.listen[0]);

  std::vector<double> seconds;
  std::string verdict_json;
  for (int r = 0; r < repeat; ++r) {
    const std::string job_id = std::to_string(700000 + r);
    v1::JobEnded job;
    job.set_job_id(job_id);
    job.set_node_list("n[001-" + node_name(nodes - 1).substr(1) + "]");
    job.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
    job.set_exit_code(1);
    const double t0 = bench::now_s();
    {
      grpc::ClientContext context;
      v1::SubmitResponse response;
      if (!stub->SubmitJobEnded(&context, job, &response).ok() || !response.accepted()) {
        std::fprintf(stderr, "attrib-bench-fanout: JobEnded not accepted\n");
        return 1;
      }
    }
    std::string status;
    // archived: the verdict is in the archive (the comment write may still be pending).
    auto archived = [](const std::string& st) { return st == "archived" || st == "done"; };
    while (!archived(status = bench::verdict_status(*stub, job_id, &verdict_json)) && bench::now_s() - t0 < 600)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const double s = bench::now_s() - t0;
    if (!archived(status)) {
      std::fprintf(stderr, "attrib-bench-fanout: job %s not archived within 600 s\n", job_id.c_str());
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
