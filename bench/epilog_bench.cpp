// Benchmark 3: epilog cost. Runs the real attrib-epilog binary --runs times (default
// 1,000) as EpilogSlurmctld would (SLURM_* environment, config file), first with the
// head daemon up (in-process: real gRPC server on a unix socket, real SQLite queue;
// auth.mode none) and then with it down (nothing listens: the epilog spools the job).
// Reports p50/p99 wall time of each run, from spawn to exit.
//
//   attrib-bench-epilog [--runs N] [--epilog BIN] [--pack DIR]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bench/head_harness.h"

using namespace attrib;
namespace bench = attrib::bench;
namespace fs = std::filesystem;

extern char** environ;

namespace {

void write_config(const fs::path& path, const std::string& server, const fs::path& spool) {
  std::ofstream out(path);
  out << "cluster: lab\n"
      << "auth: {mode: none}\n"
      << "epilog:\n"
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

  // Daemon up: the epilog's server is the daemon's socket, its spool the daemon's spool.
  write_config(dir / "up.yaml", config.head.listen[0], config.head.spool_dir);
  int up_failures = 0;
  std::vector<double> up;
  {
    auto daemon = bench::start_head(config, {}, accounting);
    up = run_epilog(epilog, dir / "up.yaml", 100000, runs, up_failures);
    // Every job must have been taken by the daemon, none spooled.
    auto stub = bench::client(config.head.listen[0]);
    int unknown = 0;
    for (int i = 0; i < runs; i += std::max(1, runs / 50))
      if (bench::verdict_status(*stub, std::to_string(100000 + i)).empty()) ++unknown;
    daemon->stop();
    std::printf("daemon up: %d runs, %d failed, %zu spooled, %d of the sampled jobs unknown to the daemon\n", runs,
                up_failures, count_files(config.head.spool_dir), unknown);
  }
  // Daemon down: nothing listens on the socket; the epilog spools.
  fs::create_directories(dir / "spool-down");
  write_config(dir / "down.yaml", "unix://" + (dir / "nobody.sock").string(), dir / "spool-down");
  int down_failures = 0;
  std::vector<double> down = run_epilog(epilog, dir / "down.yaml", 200000, runs, down_failures);
  const size_t spooled = count_files(dir / "spool-down");
  std::printf("daemon down: %d runs, %d failed, %zu spooled\n", runs, down_failures, spooled);

  bench::figure("epilog.up_p50_ms", bench::percentile(up, 50), "ms");
  bench::figure("epilog.up_p99_ms", bench::percentile(up, 99), "ms");
  bench::figure("epilog.down_p50_ms", bench::percentile(down, 50), "ms");
  bench::figure("epilog.down_p99_ms", bench::percentile(down, 99), "ms");
  bench::target("epilog p99 up < 20 ms", bench::percentile(up, 99), 20, true);
  bench::target("epilog p99 down < 10 ms", bench::percentile(down, 99), 10, true);
  fs::remove_all(dir);
  return up_failures + down_failures == 0 && spooled == static_cast<size_t>(runs) ? 0 : 1;
}
