// Benchmark 9: what the archive stores per job (issue 17). Three jobs through the real
// head daemon (in-process, real SQLite archive) and real node agents reading journal files
// written by systemd-journal-remote, each job twice in the same process: with raw evidence
// off (head.raw_evidence_max_kib 0, the reference) and at the default cap (8192 KiB).
//
//   quiet   a 1-node job that ended well: --quiet background entries in its window
//   failing a --nodes-node job (default 64), --entries background entries per node and
//           one Xid 79 on one node
//   storm   a 1-node job whose kernel log holds one Xid 79 line --storm times (default
//           1,000,000): the cap bounds what is kept, and the evidence is marked incomplete
//
// Prints, per job: the archive's growth (pages in use) with and without raw evidence,
// the raw evidence's raw and stored (zstd) bytes, the lines kept and dropped, and the
// median attribution time of both runs with their ratio.
//
// Each job runs --jobs times (default 20; the storm a fifth as often) with distinct ids.
//
//   attrib-bench-archive [--quiet N] [--nodes N] [--entries N] [--storm N] [--jobs N] [--pack DIR]
#include <cinttypes>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "attributiond/store/retention.h"
#include "bench/head_harness.h"
#include "bench/node_agents.h"
#include "core/clock.h"

using namespace attrib;
namespace bench = attrib::bench;
namespace fs = std::filesystem;

namespace {

const char* kXid = "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";

struct Measured {
  double median_seconds = 0;
  double bytes_per_job = 0;                         // the archive's pages in use after the jobs minus before, per job
  std::optional<store::ArchivedEvidence> evidence;  // the last job's
  std::string domain;
};

// `jobs` jobs (distinct ids, the same evidence) of `nodes` nodes over the journals under
// journal_root, one after the other, on a fresh archive with raw evidence capped at `kib`
// (0: none kept). Pages are 4 KiB: the growth is measured over all the jobs.
Measured run_jobs(const fs::path& dir, const fs::path& journal_root, int nodes, const std::string& state, int kib,
                  int jobs, const std::string& pack_dir, TimeUs start, TimeUs end) {
  fs::remove(dir / "attrib.db");
  fs::remove(dir / "attrib.db-wal");
  fs::remove(dir / "attrib.db-shm");
  auto config = bench::head_config(dir, pack_dir);
  config.head.agents.deadline_ms = 120000;
  config.head.window_lead_s = 0;
  config.head.window_grace_s = 0;
  config.head.raw_evidence_max_kib = kib;
  config.archive.evidence_retention_days = 0;
  auto pack = rules::load_rule_pack({pack_dir, {}});
  if (!pack) throw std::runtime_error("rule pack: " + pack.error().message);
  std::vector<bench::Agent> agents = bench::start_agents(journal_root, nodes, *pack, config);
  if (agents.empty()) throw std::runtime_error("agents did not start");
  auto accounting = std::make_shared<bench::RecordedAccounting>();
  accounting->facts.state = state;
  accounting->facts.exit_code = state == "COMPLETED" ? 0 : 1;
  accounting->facts.start = start;
  accounting->facts.end = end;
  for (int i = 0; i < nodes; ++i) accounting->facts.nodes.push_back(bench::node_name(i));
  auto daemon = bench::start_head(config, {}, accounting);
  auto stub = bench::client(config.head.listen[0]);

  auto used = [&] {
    auto store = store::JobStore::open(config.head.database);
    if (!store) throw std::runtime_error("archive: " + store.error().message);
    auto stats = store::archive_stats(**store);
    if (!stats) throw std::runtime_error("archive: " + stats.error().message);
    return stats->used_bytes;
  };
  const uint64_t before = used();
  std::vector<double> seconds;
  std::string verdict_json, job_id;
  for (int n = 0; n < jobs; ++n) {
    v1::JobEnded job;
    job_id = std::to_string(900000 + n);
    job.set_job_id(job_id);
    job.set_node_list(nodes == 1 ? "n001" : "n[001-" + bench::node_name(nodes - 1).substr(1) + "]");
    job.set_hook(v1::HOOK_KIND_EPILOG_SLURMCTLD);
    job.set_exit_code(state == "COMPLETED" ? 0 : 1);
    seconds.push_back(bench::submit_until_archived(*stub, job, &verdict_json));
  }
  daemon->stop();
  for (auto& a : agents) a.server->Shutdown();
  daemon.reset();
  Measured out;
  out.median_seconds = bench::percentile(seconds, 50);
  out.domain = nlohmann::json::parse(verdict_json).value("domain", "");
  out.bytes_per_job = static_cast<double>(used() - before) / jobs;
  auto store = store::JobStore::open(config.head.database);
  if (!store) throw std::runtime_error("archive: " + store.error().message);
  auto evidence = (*store)->evidence({"lab", job_id});
  if (!evidence) throw std::runtime_error("evidence: " + evidence.error().message);
  out.evidence = *evidence;
  return out;
}

void report(const std::string& name, const Measured& off, const Measured& on) {
  const auto& e = on.evidence;
  std::printf("%s: verdict %s; archive +%.0f B/job without raw evidence, +%.0f B/job with it; raw evidence %" PRIu64
              " B raw, %zu B stored, %" PRIu64 " lines kept, %" PRIu64 " dropped, %s\n",
              name.c_str(), on.domain.c_str(), off.bytes_per_job, on.bytes_per_job, e ? e->raw_bytes : 0,
              e ? e->blob.size() : 0, e ? e->lines : 0, e ? e->dropped_lines : 0,
              e ? (e->complete ? "complete" : ("incomplete: " + e->note).c_str()) : "none kept");
  bench::figure("archive." + name + ".bytes_per_job", on.bytes_per_job, "B");
  bench::figure("archive." + name + ".bytes_per_job_no_raw", off.bytes_per_job, "B");
  bench::figure("archive." + name + ".evidence_stored", e ? static_cast<double>(e->blob.size()) : 0, "B");
  bench::figure("archive." + name + ".evidence_raw", e ? static_cast<double>(e->raw_bytes) : 0, "B");
  bench::figure("archive." + name + ".time_ratio", on.median_seconds / std::max(off.median_seconds, 1e-6),
                "x (median, kept/off)");
}

}  // namespace

int main(int argc, char** argv) {
  int quiet = 500, nodes = 64, entries = 2000, storm = 1000000, jobs = 20;
  std::string pack_dir = ATTRIB_BENCH_PACK_DIR;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (key == "--quiet")
      quiet = std::stoi(argv[i + 1]);
    else if (key == "--nodes")
      nodes = std::stoi(argv[i + 1]);
    else if (key == "--entries")
      entries = std::stoi(argv[i + 1]);
    else if (key == "--storm")
      storm = std::stoi(argv[i + 1]);
    else if (key == "--jobs")
      jobs = std::stoi(argv[i + 1]);
    else if (key == "--pack")
      pack_dir = argv[i + 1];
    else {
      std::fprintf(stderr,
                   "usage: attrib-bench-archive [--quiet N] [--nodes N] [--entries N] [--storm N] [--jobs N] "
                   "[--pack DIR]\n");
      return 2;
    }
  }
  bench::print_machine();
  const fs::path dir = bench::work_dir("archive");
  const TimeUs now = wall_clock_us();
  const TimeUs start = now - 3600ll * 1000000, end = now - 120ll * 1000000;
  try {
    // quiet: one node, its background only.
    fs::create_directories(dir / "quiet" / bench::node_name(0));
    if (!bench::write_journal(dir / "quiet" / bench::node_name(0) / "node.journal", quiet, start, end, ""))
      throw std::runtime_error("systemd-journal-remote failed");
    // failing: one journal hard-linked into every node's directory, the Xid node gets a second.
    fs::create_directories(dir / "shared");
    if (!bench::write_journal(dir / "shared" / "node.journal", entries, start, end, ""))
      throw std::runtime_error("systemd-journal-remote failed");
    for (int i = 0; i < nodes; ++i) {
      fs::create_directories(dir / "failing" / bench::node_name(i));
      fs::create_hard_link(dir / "shared" / "node.journal", dir / "failing" / bench::node_name(i) / "node.journal");
    }
    if (!bench::write_journal(dir / "failing" / bench::node_name(nodes / 2) / "xid.journal", 0, start, end, kXid))
      throw std::runtime_error("systemd-journal-remote failed");
    // storm: one node, the Xid line `storm` times.
    const double g0 = bench::now_s();
    fs::create_directories(dir / "storm" / bench::node_name(0));
    if (!bench::write_journal(dir / "storm" / bench::node_name(0) / "node.journal", quiet, start, end, kXid, storm))
      throw std::runtime_error("systemd-journal-remote failed");
    std::printf("journals written in %.1f s: quiet %d entries, failing %d nodes x %d entries + 1, storm %d + %d\n",
                bench::now_s() - g0, quiet, nodes, entries, quiet, storm);

    struct Job {
      std::string name;
      int nodes;
      std::string state;
      int jobs;
    };
    // The storm's jobs each read `storm` lines: fewer of them.
    for (const Job& job : {Job{"quiet", 1, "COMPLETED", jobs}, Job{"failing", nodes, "FAILED", jobs},
                           Job{"storm", 1, "FAILED", std::max(1, jobs / 5)}}) {
      const Measured off = run_jobs(dir, dir / job.name, job.nodes, job.state, 0, job.jobs, pack_dir, start, end);
      const Measured on = run_jobs(dir, dir / job.name, job.nodes, job.state, 8192, job.jobs, pack_dir, start, end);
      report(job.name, off, on);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attrib-bench-archive: %s\n", e.what());
    return 1;
  }
  fs::remove_all(dir);
  return 0;
}
