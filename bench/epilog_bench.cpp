// Benchmark 3: epilog cost. Runs the real attrib-epilog binary --runs times (default
// 1,000) as EpilogSlurmctld would (SLURM_* environment, config file):
//   - daemon up: the head (in-process: real SQLite queue, real inotify watch on its
//     spool; auth.mode none) picks each spooled job up; every job must reach its queue;
//   - daemon down: the hook does the same, and the jobs stay spooled;
//   - epilog.delivery rpc with the daemon up: the hook becomes attrib-epilog-send, which
//     sends the job over gRPC (the path for hosts whose spool no head reads);
//   - the reference, in the same run: /bin/true spawned the same way (process start-up
//     on this machine, the floor under any hook).
// Reports p50/p99 wall time of each run, from spawn to exit.
//
//   attrib-bench-epilog [--runs N] [--epilog BIN] [--pack DIR]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/head_harness.h"

using namespace attrib;
namespace bench = attrib::bench;
namespace fs = std::filesystem;

extern char** environ;

namespace {

void write_config(const fs::path& path, const std::string& server, const fs::path& spool,
                  const std::string& delivery = "spool") {
  std::ofstream out(path);
  out << "cluster: lab\n"
      << "auth: {mode: none}\n"
      << "epilog:\n"
      << "  delivery: " << delivery << "\n"
      << "  server: \"" << server << "\"\n"
      << "  deadline_ms: 1000\n"
      << "  spool_dir: \"" << spool.string() << "\"\n";
}

// Runs the epilog for job ids first..first+runs-1; returns the wall times in ms.
std::vector<double> run_epilog(const std::string& epilog, const fs::path& config, int first, int runs, int& failures) {
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(runs));
  const std::string config_arg = config.string();
  for (int i = 0; i < runs; ++i) {
    const std::string job = std::to_string(first + i);
    std::vector<std::string> env = {"SLURM_JOB_ID=" + job,      "SLURM_JOB_NODELIST=n1",
                                    "SLURM_JOB_EXIT_CODE2=1:0", "SLURM_JOB_USER=alice",
                                    "SLURM_JOB_UID=1000",       "SLURM_JOB_NAME=train",
                                    "SLURM_CLUSTER_NAME=lab",   "SLURM_SCRIPT_CONTEXT=epilog_slurmctld"};
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = {epilog, "--config", config_arg};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const double t0 = bench::now_s();
    pid_t pid;
    posix_spawn_file_actions_t actions;  // the epilog explains each spool on stderr
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    const int spawned = ::posix_spawn(&pid, epilog.c_str(), &actions, nullptr, argv.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
      ++failures;
      continue;
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ms.push_back((bench::now_s() - t0) * 1000.0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  return ms;
}

size_t count_files(const fs::path& dir) {
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) ++n;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 1000;
  std::string epilog = ATTRIB_BENCH_EPILOG, pack_dir = ATTRIB_BENCH_PACK_DIR;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (key == "--runs")
      runs = std::stoi(argv[i + 1]);
    else if (key == "--epilog")
      epilog = argv[i + 1];
    else if (key == "--pack")
      pack_dir = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: attrib-bench-epilog [--runs N] [--epilog BIN] [--pack DIR]\n");
      return 2;
    }
  }
  bench::print_machine();
  const fs::path dir = bench::work_dir("epilog");
  auto config = bench::head_config(dir, pack_dir);
  auto accounting = std::make_shared<bench::RecordedAccounting>();
  accounting->facts.state = "FAILED";
  accounting->facts.exit_code = 1;
  accounting->facts.nodes = {"n1"};
  accounting->facts.end = 1796083200000000;  // 2026-12-01T00:00:00Z
  accounting->facts.start = *accounting->facts.end - 3600000000;

  // The reference: process start-up alone, spawned and awaited as each hook run is.
  int true_failures = 0;
  std::vector<double> floor = run_epilog("/bin/true", dir / "none.yaml", 1, runs, true_failures);

  // Daemon up: the epilog's spool is the daemon's spool (and its server the daemon's socket).
  write_config(dir / "up.yaml", config.head.listen[0], config.head.spool_dir);
  write_config(dir / "rpc.yaml", config.head.listen[0], dir / "spool-rpc", "rpc");
  fs::create_directories(dir / "spool-rpc");
  int up_failures = 0, rpc_failures = 0, unknown = 0;
  size_t left_spooled = 0, rpc_spooled = 0;
  double taken_s = 0;
  std::vector<double> up, rpc;
  {
    auto daemon = bench::start_head(config, {}, accounting);
    up = run_epilog(epilog, dir / "up.yaml", 100000, runs, up_failures);
    // Every job must reach the daemon's queue: the spool empties as the head takes them.
    const double t0 = bench::now_s();
    while (count_files(config.head.spool_dir) > 0 && bench::now_s() - t0 < 30)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    taken_s = bench::now_s() - t0;
    left_spooled = count_files(config.head.spool_dir);
    rpc = run_epilog(epilog, dir / "rpc.yaml", 300000, runs, rpc_failures);
    rpc_spooled = count_files(dir / "spool-rpc");  // removed once the daemon has the job
    auto stub = bench::client(config.head.listen[0]);
    for (int i = 0; i < runs; i += std::max(1, runs / 50)) {
      if (bench::verdict_status(*stub, std::to_string(100000 + i)).empty()) ++unknown;
      if (bench::verdict_status(*stub, std::to_string(300000 + i)).empty()) ++unknown;
    }
    daemon->stop();
  }
  std::printf(
      "daemon up: %d runs, %d failed, %zu still spooled %.2f s after the last run, %d of the sampled jobs "
      "unknown to the daemon\n",
      runs, up_failures, left_spooled, taken_s, unknown);
  std::printf("delivery rpc, daemon up: %d runs, %d failed, %zu left spooled\n", runs, rpc_failures, rpc_spooled);
  // Daemon down: nobody reads the spool; every job stays there.
  fs::create_directories(dir / "spool-down");
  write_config(dir / "down.yaml", "unix://" + (dir / "nobody.sock").string(), dir / "spool-down");
  int down_failures = 0;
  std::vector<double> down = run_epilog(epilog, dir / "down.yaml", 200000, runs, down_failures);
  const size_t spooled = count_files(dir / "spool-down");
  std::printf("daemon down: %d runs, %d failed, %zu spooled\n", runs, down_failures, spooled);

  bench::figure("epilog.spawn_floor_p50_ms", bench::percentile(floor, 50), "ms");
  bench::figure("epilog.spawn_floor_p99_ms", bench::percentile(floor, 99), "ms");
  bench::figure("epilog.up_p50_ms", bench::percentile(up, 50), "ms");
  bench::figure("epilog.up_p99_ms", bench::percentile(up, 99), "ms");
  bench::figure("epilog.down_p50_ms", bench::percentile(down, 50), "ms");
  bench::figure("epilog.down_p99_ms", bench::percentile(down, 99), "ms");
  bench::figure("epilog.rpc_up_p50_ms", bench::percentile(rpc, 50), "ms");
  bench::figure("epilog.rpc_up_p99_ms", bench::percentile(rpc, 99), "ms");
  bench::figure("epilog.up_p50_over_floor", bench::percentile(up, 50) / bench::percentile(floor, 50), "x");
  bench::target("epilog p99 up < 20 ms", bench::percentile(up, 99), 20, true);
  bench::target("epilog p99 down < 10 ms", bench::percentile(down, 99), 10, true);
  fs::remove_all(dir);
  const bool nothing_lost =
      unknown == 0 && left_spooled == 0 && rpc_spooled == 0 && spooled == static_cast<size_t>(runs);
  return up_failures + down_failures + rpc_failures + true_failures == 0 && nothing_lost ? 0 : 1;
}
