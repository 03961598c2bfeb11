// Benchmark 4: burst. --jobs (default 10,000) 1-node job ends handed to one head daemon
// (in-process, auth.mode none) as fast as the clients can (all within 60 s), then
// attributed by the real path: durable SQLite queue, scoping through the Accounting seam,
// evidence from the real kmsg collector, rules engine, archive, comment write.
//
// --delivery spool (the default, as epilog.delivery's): each client writes every job end as
// attrib-epilog does, a spool file fsynced and renamed into the head's spool directory,
// which the head watches. --delivery rpc: one SubmitJobEnded RPC per job end, as
// attrib-epilog-send does on a host whose spool no head reads.
//
// The evidence is a recorded bundle: job.json (the accounting record every job gets, under
// its own id) and the node's kernel log of --lines lines (default 10,000) inside the job
// window, of which one is an Xid 79. The kmsg collector reads the same lines as
// /dev/kmsg records from a file; attrib-replay of the bundle gives the verdict the daemon
// must archive for each job.
//
//   attrib-bench-burst [--jobs N] [--lines N] [--workers N] [--clients N] [--pack DIR]
//                      [--raw-evidence-kib N]   (default: the daemon's default; 0: none kept)
//                      [--delivery spool|rpc]
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/head_harness.h"
#include "common/spool.h"

using namespace attrib;
namespace bench = attrib::bench;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kStartS = 1796083200;  // 2026-12-01T00:00:00Z
constexpr int64_t kBootS = kStartS - 86400;

// One recorded node: the bundle (job.json + n1/kernel.log) and the same lines as kmsg records.
void write_recording(const fs::path& dir, int lines) {
  fs::create_directories(dir / "bundle" / "n1");
  fs::create_directories(dir / "kmsg");
  {
    std::ofstream job(dir / "bundle" / "job.json");
    job << R"({"job_id": "recorded", "cluster": "lab", "nodes": ["n1"], "state": "FAILED", "exit_code": 1, )"
        << R"("start": "2026-12-01T00:00:00Z", "end": "2026-12-01T00:10:00Z"})"
        << "\n";
  }
  std::ofstream kernel(dir / "bundle" / "n1" / "kernel.log");
  std::ofstream kmsg(dir / "kmsg" / "n1.kmsg");
  for (int i = 0; i < lines; ++i) {
    const int64_t usec = (86400 + 1) * 1000000ll + static_cast<int64_t>(i) * (590000000ll / lines);
    std::string message;
    if (i == lines / 2) {
      message = "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";
    } else {
      switch (i % 4) {
        case 0:
          message = "audit: type=1400 audit(1796025601." + std::to_string(i % 1000) + ":" + std::to_string(i) +
                    "): apparmor=\"ALLOWED\" operation=\"open\" profile=\"snap.lxd.daemon\" name=\"/proc/" +
                    std::to_string(1000 + i) + "/stat\" pid=" + std::to_string(1000 + i) + " comm=\"lxd\"";
          break;
        case 1:
          message = "IPv4: martian source 10.1." + std::to_string(i % 250) + ".7 from 10.2.3." +
                    std::to_string(i % 200) + ", on dev ib0";
          break;
        case 2:
          message = "device veth" + std::to_string(1000000 + i) + " entered promiscuous mode";
          break;
        default:
          message = "perf: interrupt took too long (" + std::to_string(2500 + i % 100) +
                    " > 2495), lowering kernel.perf_event_max_sample_rate to 79750";
          break;
      }
    }
    const int64_t wall = kBootS * 1000000ll + usec;
    const int64_t sec = wall / 1000000 - kStartS;
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "Dec  1 00:%02d:%02d n1 kernel: ", static_cast<int>(sec / 60),
                  static_cast<int>(sec % 60));
    kernel << stamp << message << "\n";
    kmsg << "3," << i << "," << usec << ",-;" << message << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 10000, lines = 10000, workers = 2, clients = 4, raw_evidence_kib = -1;
  std::string pack_dir = ATTRIB_BENCH_PACK_DIR;
  std::string delivery = "spool";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (key == "--jobs")
      jobs = std::stoi(argv[i + 1]);
    else if (key == "--lines")
      lines = std::stoi(argv[i + 1]);
    else if (key == "--workers")
      workers = std::stoi(argv[i + 1]);
    else if (key == "--clients")
      clients = std::stoi(argv[i + 1]);
    else if (key == "--pack")
      pack_dir = argv[i + 1];
    else if (key == "--raw-evidence-kib")
      raw_evidence_kib = std::stoi(argv[i + 1]);
    else if (key == "--delivery" && (std::string(argv[i + 1]) == "spool" || std::string(argv[i + 1]) == "rpc"))
      delivery = argv[i + 1];
    else {
      std::fprintf(stderr,
                   "usage: attrib-bench-burst [--jobs N] [--lines N] [--workers N] [--clients N] "
                   "[--raw-evidence-kib N] [--delivery spool|rpc]\n");
      return 2;
    }
  }
  bench::print_machine();
  const fs::path dir = bench::work_dir("burst");
  write_recording(dir, lines);

  // What the verdict must be: attrib-replay's, from the same recording.
  auto pack = rules::load_rule_pack({pack_dir, {}});
  if (!pack) return 1;
  auto expected = rules::replay_bundle(dir / "bundle", *pack);
  if (!expected) {
    std::fprintf(stderr, "attrib-bench-burst: replay: %s\n", expected.error().message.c_str());
    return 1;
  }
  std::printf("recorded bundle: 1 node, %d kernel lines in the window; replay verdict %s rule=%s\n", lines,
              expected->domain.c_str(), expected->root_cause ? expected->root_cause->rule.c_str() : "-");

  auto config = bench::head_config(dir, pack_dir);
  config.head.workers = workers;
  if (raw_evidence_kib >= 0) config.head.raw_evidence_max_kib = raw_evidence_kib;
  std::printf("raw evidence kept per job: up to %d KiB (head.raw_evidence_max_kib)\n",
              config.head.raw_evidence_max_kib);
  config.head.window_lead_s = 0;
  config.head.window_grace_s = 0;
  YAML::Node options;
  options["path"] = (dir / "kmsg" / "{node}.kmsg").string();
  options["boot_time"] = std::to_string(kBootS);
  auto kmsg = collectors::create_collector("kmsg", options);
  if (!kmsg) {
    std::fprintf(stderr, "attrib-bench-burst: kmsg: %s\n", kmsg.error().message.c_str());
    return 1;
  }
  std::vector<std::unique_ptr<collectors::Collector>> list;
  list.push_back(std::move(*kmsg));
  auto accounting = std::make_shared<bench::RecordedAccounting>();
  accounting->facts = bench::bundle_facts(dir / "bundle");

  const double rss_before = bench::rss_mib();
  auto daemon = bench::start_head(config, std::move(list), accounting);

  // Submit: `clients` threads, each its share of the job ids, one spool file or one RPC per
  // job end.
  std::atomic<int> rejected{0};
  const double t0 = bench::now_s();
  std::atomic<int> clients_done{0};
  std::atomic<double> submit_end{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      auto stub = delivery == "rpc" ? bench::client(config.head.listen[0]) : nullptr;
      for (int i = c; i < jobs; i += clients) {
        v1::JobEnded job;
        job.set_job_id(std::to_string(300000 + i));
        job.set_node_list("n1");
        job.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
        job.set_exit_code(1);
        job.set_hook_time_us(static_cast<int64_t>(bench::now_s() * 1e6));
        if (!stub) {
          if (!common::write_spool_file(config.head.spool_dir, job)) ++rejected;
          continue;
        }
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        v1::SubmitResponse response;
        if (!stub->SubmitJobEnded(&context, job, &response).ok() || !response.accepted()) ++rejected;
      }
      if (++clients_done == clients) submit_end = bench::now_s();
    });
  // Sample the queue while submitting and attributing.
  std::vector<std::pair<double, double>> depth;
  double peak_depth = 0;
  const double deadline = t0 + 1800;
  while (bench::now_s() < deadline) {
    const double d = bench::queue_depth(*daemon);
    depth.emplace_back(bench::now_s() - t0, d);
    peak_depth = std::max(peak_depth, d);
    if (accounting->writes.load() >= static_cast<uint64_t>(jobs)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(jobs >= 1000 ? 500 : 20));
  }
  for (auto& t : threads) t.join();
  double last = 0;
  {
    std::lock_guard lock(accounting->mutex);
    for (const auto& [id, t] : accounting->comment_time) last = std::max(last, t);
  }
  const double elapsed = last - t0;

  // None lost: every job is archived with the replay's verdict.
  auto stub = bench::client(config.head.listen[0]);
  int done = 0, same = 0;
  for (int i = 0; i < jobs; ++i) {
    std::string json;
    const std::string status = bench::verdict_status(*stub, std::to_string(300000 + i), &json);
    if (status != "done" && status != "archived") {  // archived: verdict kept, comment pending
      if (i - done < 3) std::printf("job %d: status '%s' %s\n", 300000 + i, status.c_str(), json.c_str());
      continue;
    }
    ++done;
    auto v = nlohmann::json::parse(json, nullptr, false);
    if (!v.is_discarded() && v.value("domain", "") == expected->domain &&
        v["root_cause"].value("rule", "") == (expected->root_cause ? expected->root_cause->rule : ""))
      ++same;
  }
  const double peak = bench::peak_rss_mib();
  daemon->stop();

  std::printf("submitted %d job ends (%s) in %.2f s by %d clients (%d rejected); %d workers\n", jobs, delivery.c_str(),
              submit_end.load() - t0, clients, rejected.load(), workers);
  std::printf("queue depth over time (s: depth):");
  const size_t step = std::max<size_t>(1, depth.size() / 40);
  for (size_t k = 0; k < depth.size(); k += step) std::printf(" %.1f:%.0f", depth[k].first, depth[k].second);
  std::printf("\n");
  std::printf("archived %d/%d (%d with the replay's verdict), comments written %" PRIu64 ", last at %.2f s\n", done,
              jobs, same, accounting->writes.load(), elapsed);
  std::printf("rss: %.1f MiB before the daemon, peak %.1f MiB\n", rss_before, peak);
  bench::figure("burst.submit_seconds", submit_end.load() - t0, "s");
  bench::figure("burst.jobs_archived", done, "jobs");
  bench::figure("burst.jobs_lost", jobs - done, "jobs");
  bench::figure("burst.jobs_per_s", jobs / elapsed, "jobs/s");
  bench::figure("burst.peak_queue_depth", peak_depth, "jobs");
  bench::figure("burst.peak_rss_mib", peak, "MiB");
  // What slurmdbd would serve: each read and each write is one round trip there.
  std::printf("accounting: %" PRIu64 " reads, %" PRIu64 " writes (comments in %" PRIu64 " batches)\n",
              accounting->reads.load(), accounting->writes.load(), accounting->comment_batches.load());
  bench::figure("burst.accounting_calls_per_job",
                static_cast<double>(accounting->reads.load() + accounting->writes.load()) / jobs, "calls");
  bench::target("burst submitted within 60 s", submit_end.load() - t0, 60, true);
  bench::target("burst none lost", jobs - done, 0, true);
  bench::target("burst >= 500 jobs/s", jobs / elapsed, 500, false);
  fs::remove_all(dir);
  return done == jobs && same == jobs ? 0 : 1;
}
