// attrib-epilog: hands a finished job to attributiond. Slurm runs it as EpilogSlurmctld
// (primary), as jobcomp/script, or as a slurmd Epilog.
//
// It must never hurt the cluster: it always exits 0 (a non-zero slurmd Epilog drains the
// node) and returns within milliseconds (slurmctld waits for it). So it does one thing
// first, for every job: it writes the job to the spool directory (fsynced, renamed into
// place), and then nothing can lose it. With epilog.delivery `spool` (the default) that is
// all: the head on this host watches the directory and picks the file up at once; the
// kernel vouches for who wrote it (docs/security.md). With `rpc` (a host whose spool no
// head reads) it then becomes attrib-epilog-send (exec, same process), which sends the job
// over gRPC within epilog.deadline_ms and removes the file once the daemon has it.
//
// It links neither gRPC nor protobuf nor abseil (job_report.h): loading them was 60-80 ms
// of every run. It runs no other program but attrib-epilog-send, found beside it, so the
// missing PATH in EpilogSlurmctld's environment does not matter.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/spool_file.h"
#include "core/clock.h"
#include "epilog/hook_main.h"
#include "epilog/job_report.h"

namespace {

constexpr const char* kUsage =
    "usage: attrib-epilog [-c|--config FILE] [--print]\n"
    "Report a finished Slurm job to attributiond (always exits 0).\n"
    "  -c, --config FILE  configuration file (default /etc/attrib/attrib.yaml)\n"
    "  --print            print the report instead of handing it over\n";

// attrib-epilog-send, installed beside this program.
std::string sender_path() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::filesystem::path("/usr/libexec/attrib") : self.parent_path()) / "attrib-epilog-send";
}

int run(int argc, char** argv) {
  std::string config_path = "/etc/attrib/attrib.yaml";
  bool print_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "-c" || arg == "--config") && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg.rfind("--config=", 0) == 0) {
      config_path = arg.substr(std::strlen("--config="));
    } else if (arg == "--print") {
      print_only = true;
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "attrib-epilog: unknown argument %s\n%s", arg.c_str(), kUsage);
      return 0;
    }
  }

  // An unreadable config must not lose the job: fall back to the documented defaults.
  attrib::common::EpilogConfig config;
  std::string cluster;
  if (auto loaded = attrib::common::load_config(config_path)) {
    config = loaded->epilog;
    cluster = loaded->cluster;
  } else {
    std::fprintf(stderr, "attrib-epilog: %s (using defaults)\n", loaded.error().message.c_str());
  }
  const attrib::TimeUs now = attrib::wall_clock_us();
  auto report = attrib::epilog::job_report_from_env(attrib::epilog::current_environment(), now);
  if (!report) {
    std::fprintf(stderr, "attrib-epilog: %s\n", report.error().message.c_str());
    return 0;
  }
  if (report->cluster.empty()) report->cluster = cluster;
  if (print_only) {
    std::fputs(attrib::epilog::describe(*report).c_str(), stdout);
    return 0;
  }
  auto spooled =
      attrib::common::write_spool_bytes(config.spool_dir, report->cluster, report->job_id, encode_job_ended(*report));
  if (config.delivery != "rpc") {
    if (!spooled)
      std::fprintf(stderr, "attrib-epilog: job %s LOST: %s\n", report->job_id.c_str(), spooled.error().message.c_str());
    return 0;
  }
  // rpc: the sender takes over this process. Without a spool file it sends the report
  // the environment still describes (same hook time), so a full disk loses nothing either.
  const std::string sender = sender_path();
  const std::string hook_time = std::to_string(now);
  std::vector<const char*> args = {sender.c_str(), "--config", config_path.c_str()};
  if (spooled) {
    args.insert(args.end(), {"--spooled", spooled->c_str()});
  } else {
    std::fprintf(stderr, "attrib-epilog: job %s not spooled: %s; sending it\n", report->job_id.c_str(),
                 spooled.error().message.c_str());
    args.insert(args.end(), {"--hook-time-us", hook_time.c_str()});
  }
  args.push_back(nullptr);
  ::execv(sender.c_str(), const_cast<char* const*>(args.data()));
  std::fprintf(stderr, "attrib-epilog: cannot run %s: %s; job %s %s\n", sender.c_str(), std::strerror(errno),
               report->job_id.c_str(), spooled ? "stays spooled" : "LOST");
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return attrib::epilog::hook_main("attrib-epilog", argc, argv, run); }
