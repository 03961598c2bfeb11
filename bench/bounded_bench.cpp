// Benchmark 8: a job's output cannot make attribution unbounded (issue 14, item 4). A
// 16-node job whose shared output file holds --ranks distinct `[rankN]:` prefixes and
// --lines distinct application lines that each match a rule, and whose node n07 has one
// trusted Xid 79 in its kernel log. Real collectors (app_output over the file, kmsg over
// one file per node) and the head's pipeline::attribute_window, as a worker runs them.
// A reference run of the same job without the noise comes first, in the same process.
// Prints the time, the peak RSS growth, the coverage rows, and whether the Xid is the
// root cause.
//
//   attrib-bench-bounded [--ranks N] [--lines N] [--pack DIR]
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "attributiond/pipeline/attribution.h"
#include "attributiond/store/job_store.h"
#include "bench/bench_util.h"
#include "collectors/registry.h"
#include "common/config.h"

using namespace attrib;
namespace bench = attrib::bench;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kBootSeconds = 1796083200 - 86400;           // the nodes booted a day before the job
constexpr TimeUs kStart = (kBootSeconds + 86400) * 1000000LL;  // 2026-12-01T00:00:00Z
constexpr TimeUs kSecond = 1000000;

struct Run {
  Verdict verdict;
  double seconds = 0;
};

void write(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }

// The job's files: its output (noise as asked), and each node's kernel log.
void write_job(const fs::path& dir, uint64_t ranks, uint64_t lines) {
  std::ofstream out(dir / "slurm-4242.out", std::ios::binary);
  out << "Starting training on 16 nodes\n";
  for (uint64_t r = 0; r < ranks; ++r) out << "[rank" << r << "]: step " << r << " done\n";
  for (uint64_t i = 0; i < lines; ++i)
    out << "RuntimeError: CUDA error: an illegal memory access was encountered (batch " << i << ")\n";
  out.close();
  for (int n = 1; n <= 16; ++n) {
    char node[8];
    std::snprintf(node, sizeof node, "n%02d", n);
    std::string kmsg = "6,0,1000000,-;Linux version 6.1.0 (debian-kernel@lists.debian.org)\n";
    if (n == 7)
      kmsg += "4,1,87600000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.\n";
    write(dir / (std::string(node) + ".kmsg"), kmsg);
  }
}

Run run(const std::shared_ptr<const rules::RulePack>& pack, const fs::path& dir) {
  std::vector<std::unique_ptr<collectors::Collector>> collectors;
  auto add = [&](const char* kind, const std::string& options) {
    auto collector = collectors::create_collector(kind, YAML::Load(options));
    if (!collector) throw std::runtime_error(collector.error().message);
    collectors.push_back(std::move(*collector));
  };
  add("kmsg", "{path: '" + (dir / "{node}.kmsg").string() + "', boot_time: '" + std::to_string(kBootSeconds) + "'}");
  add("app_output", "{paths: ['" + (dir / "slurm-{job_id}.out").string() + "']}");
  common::HeadConfig config;
  const std::string cluster = "lab";
  auto store = store::JobStore::open(":memory:");
  pipeline::AttributionContext context{config, cluster, pack, collectors, nullptr, **store};
  JobFacts job;
  job.job_id = "4242";
  job.cluster = cluster;
  job.state = "FAILED";
  job.exit_code = 1;
  job.uid = static_cast<uint32_t>(getuid());  // the output file's owner
  job.start = kStart;
  job.end = kStart + 3600 * kSecond;
  for (int n = 1; n <= 16; ++n) {
    char node[8];
    std::snprintf(node, sizeof node, "n%02d", n);
    job.nodes.push_back(node);
  }
  const double t0 = bench::now_s();
  Run r;
  r.verdict = pipeline::attribute_window(context, job, *job.end);
  r.seconds = bench::now_s() - t0;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t ranks = 200000, lines = 200000;
  std::string pack_dir = ATTRIB_BENCH_PACK_DIR;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--ranks")
      ranks = std::stoull(argv[i + 1]);
    else if (key == "--lines")
      lines = std::stoull(argv[i + 1]);
    else if (key == "--pack")
      pack_dir = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: attrib-bench-bounded [--ranks N] [--lines N] [--pack DIR]\n");
      return 2;
    }
  }
  bench::print_machine();
  auto pack = rules::load_rule_pack({pack_dir, {}});
  if (!pack) {
    std::fprintf(stderr, "attrib-bench-bounded: %s\n", pack.error().message.c_str());
    return 1;
  }
  const fs::path dir = fs::temp_directory_path() / ("attrib-bench-bounded-" + std::to_string(getpid()));
  fs::create_directories(dir);

  write_job(dir, 0, 0);
  const Run calm = run(*pack, dir);
  write_job(dir, ranks, lines);
  const double baseline = bench::rss_mib();
  const bool reset = bench::reset_peak_rss();
  const Run noisy = run(*pack, dir);
  const double peak = bench::peak_rss_mib();
  fs::remove_all(dir);

  auto describe = [](const char* what, const Run& r) {
    const auto& rc = r.verdict.root_cause;
    std::printf("%s: %.3f s, verdict %s rule=%s node=%s, %zu symptoms, %zu coverage rows\n", what, r.seconds,
                r.verdict.domain.c_str(), rc ? rc->rule.c_str() : "-", rc ? rc->event.node.c_str() : "-",
                r.verdict.symptoms.size(), r.verdict.coverage.size());
  };
  describe("reference (no noise)", calm);
  describe("noisy", noisy);
  for (const Coverage& c : noisy.verdict.coverage)
    if (c.status == CoverageStatus::Partial)
      std::printf("  partial %s/%s: %s\n", c.node.c_str(), c.source.c_str(), c.detail.c_str());
  std::printf("rss: baseline %.1f MiB, noisy peak %.1f MiB%s\n", baseline, peak,
              reset ? "" : " (peak could not be reset: includes earlier phases)");
  const bool xid_root = noisy.verdict.root_cause && noisy.verdict.root_cause->event.node == "n07" &&
                        noisy.verdict.root_cause->event.source == "kernel";
  bench::figure("bounded.seconds", noisy.seconds, "s");
  bench::figure("bounded.reference_seconds", calm.seconds, "s");
  bench::figure("bounded.peak_rss_growth_mib", peak - baseline, "MiB");
  bench::figure("bounded.coverage_rows", static_cast<double>(noisy.verdict.coverage.size()), "rows");
  bench::figure("bounded.xid_is_root_cause", xid_root ? 1 : 0, "bool");
  bench::target("bounded verdict < 5 s", noisy.seconds, 5, true);
  bench::target("bounded Xid is the root cause", xid_root ? 1 : 0, 1, false);
  return xid_root ? 0 : 1;
}
