// Benchmark 2: storms. One job window on two nodes with background lines, one Xid 79 on
// n2's kernel log and one PyTorch NCCL watchdog timeout in n1's job output -- then the same
// window with each of those two lines occurring --storm times (default 1,000,000 each).
// Lines go through the real engine (Extractor, correlate) exactly as collectors hand them
// over (LogLine by LogLine, streamed: nothing holds the storm in memory but the engine).
// Prints the time and the peak RSS growth of the stormed run, and checks that its verdict
// is the un-stormed one apart from the occurrence counts (and the coverage line counts).
//
//   attrib-bench-storm [--storm N] [--background N] [--pack DIR]
#include <cinttypes>
#include <cstdio>
#include <string>

#include "bench/bench_util.h"
#include "core/verdict.h"
#include "rules/evidence/bundle.h"
#include "rules/engine.h"

using namespace attrib;
namespace bench = attrib::bench;

namespace {

constexpr TimeUs kStart = 1796083200000000;  // 2026-12-01T00:00:00Z
constexpr TimeUs kSecond = 1000000;
const char* kXid = "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";
const char* kNccl =
    "[rank1]:[E1201 00:20:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before "
    "timing out.";

struct Run {
  Verdict verdict;
  double seconds = 0;
  uint64_t lines = 0;
  uint64_t dropped = 0;
};

// copies: how many times each of the two failure lines occurs (1: no storm).
Run run(std::shared_ptr<const rules::RulePack> pack, uint64_t copies, uint64_t background) {
  JobFacts job;
  job.job_id = "4242";
  job.cluster = "lab";
  job.state = "FAILED";
  job.exit_code = 1;
  job.start = kStart;
  job.end = kStart + 3600 * kSecond;
  job.nodes = {"n1", "n2"};

  const double t0 = bench::now_s();
  rules::Extractor extractor(pack);
  std::vector<Coverage> coverage;
  uint64_t total = 0;
  for (const char* node : {"n1", "n2"})
    for (const char* source : {"kernel", "app"}) {
      LogLine line;
      line.node = node;
      line.source = source;
      line.trusted = std::string(source) == "kernel";
      uint64_t seq = 0;
      auto emit = [&](const std::string& text, TimeUs time) {
        line.text = text;
        line.time = time;
        line.seq = seq++;
        extractor.feed(line);
      };
      const bool kernel = line.source == "kernel";
      for (uint64_t i = 0; i < background; ++i) {
        emit(kernel ? "audit: type=1400 audit(1764489600." + std::to_string(i % 1000) +
                          "): apparmor=\"ALLOWED\" operation=\"open\" profile=\"snap.lxd.daemon\" pid=" +
                          std::to_string(1000 + i)
                    : "{'loss': 2." + std::to_string(i) + ", 'learning_rate': 1e-4, 'epoch': 0." +
                          std::to_string(i % 100) + "}",
             kStart + static_cast<TimeUs>(i) * 1000);
      }
      // The failure at +20 min; a storm repeats the same line every 0.5 ms after it.
      const bool xid_here = kernel && line.node == "n2";
      const bool nccl_here = !kernel && line.node == "n1";
      if (xid_here || nccl_here) {
        const std::string text = xid_here ? kXid : kNccl;
        const TimeUs at = kStart + 1200 * kSecond + (nccl_here ? 30 * kSecond : 0);
        for (uint64_t k = 0; k < copies; ++k) emit(text, at + static_cast<TimeUs>(k) * 500);
      }
      Coverage c;
      c.node = node;
      c.source = source;
      c.status = CoverageStatus::Ok;
      c.lines = seq;
      c.window_start = job.start;
      c.window_end = job.end;
      coverage.push_back(c);
      total += seq;
    }
  Run r;
  std::vector<Event> events = extractor.finish();
  r.dropped = extractor.dropped_events();
  rules::count_events(coverage, events);
  r.verdict = rules::correlate(*pack, job, std::move(events), std::move(coverage));
  r.seconds = bench::now_s() - t0;
  r.lines = total;
  return r;
}

// The verdict without what a storm legitimately changes: occurrence counts and the
// number of lines read.
nlohmann::json without_counts(nlohmann::json j) {
  if (j.is_object()) {
    j.erase("count");
    j.erase("lines");
    for (auto& [key, value] : j.items()) value = without_counts(value);
  } else if (j.is_array()) {
    for (auto& value : j) value = without_counts(value);
  }
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t storm = 1000000, background = 10000;
  std::string pack_dir = ATTRIB_BENCH_PACK_DIR;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (key == "--storm")
      storm = std::stoull(argv[i + 1]);
    else if (key == "--background")
      background = std::stoull(argv[i + 1]);
    else if (key == "--pack")
      pack_dir = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: attrib-bench-storm [--storm N] [--background N] [--pack DIR]\n");
      return 2;
    }
  }
  bench::print_machine();
  auto pack = rules::load_rule_pack({pack_dir, {}});
  if (!pack) {
    std::fprintf(stderr, "attrib-bench-storm: %s\n", pack.error().message.c_str());
    return 1;
  }
  Run calm = run(*pack, 1, background);
  const double baseline = bench::rss_mib();
  const bool reset = bench::reset_peak_rss();
  Run stormed = run(*pack, storm, background);
  const double peak = bench::peak_rss_mib();
  std::printf("un-stormed: %" PRIu64 " lines, %.3f s, verdict %s rule=%s symptoms=%zu\n", calm.lines, calm.seconds,
              calm.verdict.domain.c_str(), calm.verdict.root_cause ? calm.verdict.root_cause->rule.c_str() : "-",
              calm.verdict.symptoms.size());
  std::printf("stormed:    %" PRIu64 " lines (%" PRIu64 " identical Xid + %" PRIu64
              " identical NCCL timeout lines), %.3f s, verdict %s "
              "rule=%s symptoms=%zu, dropped events %" PRIu64 "\n",
              stormed.lines, storm, storm, stormed.seconds, stormed.verdict.domain.c_str(),
              stormed.verdict.root_cause ? stormed.verdict.root_cause->rule.c_str() : "-",
              stormed.verdict.symptoms.size(), stormed.dropped);
  if (stormed.verdict.root_cause)
    std::printf("  root cause %s count %" PRIu64 "\n", stormed.verdict.root_cause->event.kind.c_str(),
                stormed.verdict.root_cause->event.count);
  for (const Symptom& s : stormed.verdict.symptoms)
    std::printf("  symptom %s on %s count %" PRIu64 " (event count %" PRIu64 ")\n", s.event.kind.c_str(),
                s.event.node.c_str(), s.count, s.event.count);
  const bool same = without_counts(to_json(calm.verdict)) == without_counts(to_json(stormed.verdict));
  std::printf("verdict identical to the un-stormed one apart from counts: %s\n", same ? "yes" : "NO");
  if (!same) {
    std::printf("un-stormed: %s\nstormed:    %s\n", without_counts(to_json(calm.verdict)).dump().c_str(),
                without_counts(to_json(stormed.verdict)).dump().c_str());
  }
  std::printf("rss: baseline %.1f MiB, stormed peak %.1f MiB%s\n", baseline, peak,
              reset ? "" : " (peak could not be reset: includes earlier phases)");
  bench::figure("storm.seconds", stormed.seconds, "s");
  bench::figure("storm.lines_per_s", static_cast<double>(stormed.lines) / stormed.seconds, "lines/s");
  bench::figure("storm.peak_rss_growth_mib", peak - baseline, "MiB");
  bench::figure("storm.verdict_identical", same ? 1 : 0, "bool");
  bench::target("storm peak RSS growth < 64 MiB", peak - baseline, 64, true);
  bench::target("storm verdict identical", same ? 1 : 0, 1, false);
  return same ? 0 : 1;
}
