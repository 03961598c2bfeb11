// attrib-bench-gen: writes a seeded, realistic mix of log lines for the extraction
// benchmark -- one node's system log (kernel and daemon lines in syslog format), its
// Fabric Manager log lines and a training job's output, interleaved in one file -- of
// which about --match-rate (default 0.1%) are lines some rule of the shipped pack
// extracts (taken from the pack's own examples). Same seed, same bytes.
//
//   attrib-bench-gen --bytes 1073741824 --seed 1 --out corpus.log [--incidents DIR]
//
// --incidents DIR (the second corpus): the mixed-in lines are instead every line of the
// real-incident bundles under DIR (tests/corpus/real: <incident>/<host>/<source>.log, lines
// people pasted in public threads), matching or not, each taken at random. A kernel or
// syslog line keeps its message and gets the noise's syslog head in place of its own stamp
// (kernel.log as "kernel: [uptime] ", syslog.log and slurm.log as a daemon's); app.log lines
// are job output as written.
//
// Line shapes, by source (what bench/extract_bench.cpp maps them back to):
//   kernel         "Nov 30 08:00:01 gpu017 kernel: [ 1234.567890] <message>"
//   syslog         "Nov 30 08:00:01 gpu017 sshd[4242]: <message>"
//   fabricmanager  "[Nov 30 2026 08:00:01] [INFO] [tid 4211] <message>"
//   app            job output: NCCL INFO, PyTorch, Python logging, progress lines
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rules/line_time.h"

namespace {

struct Rng {  // splitmix64: fast, seeded, identical everywhere
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }
  double unit() { return static_cast<double>(next() >> 11) / 9007199254740992.0; }
};

// Lines the shipped pack extracts (from its examples), by source.
const char* kKernelMatches[] = {
    "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
    "NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No",
    "NVRM: Xid (PCI:0000:01:00): 95, pid=7062, Uncontained: LTC TAG (0x2, 0x1). RST: Yes, D-RST: No",
    "pcieport 0000:00:02.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, id=0010(Receiver ID)",
    "EDAC MC0: 4 CE error on CPU#0Channel#2_DIMM#0 (channel:2 slot:0 page:0x0 offset:0x0 grain:8 syndrome:0x0)",
    "watchdog: BUG: soft lockup - CPU#2 stuck for 22s! [python3:29632]",
    "mlx5_core 0000:53:00.0 enp83s0f0np0: Link down",
    "LustreError: 166-1: MGC10.130.93.11@o2ib: Connection to MGS (at 10.130.93.10@o2ib) was lost; in progress "
    "operations using this service will fail",
    "nfs: server 100.73.159.36 not responding, still trying",
    "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 Minion Link DLREQ interrupt",
};
const char* kFabricMatches[] = {
    "[ERROR] [tid 12727] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 "
    "physical id 3 port 61",
};
const char* kAppMatches[] = {
    "[rank1]:[E1130 08:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before "
    "timing out.",
    "gpu017:7038:7053 [0] ib_plugin.c:1007 NCCL WARN NET/IB : Got completion from peer 10.1.32.3<42519> with error 5, "
    "opcode 0, len 0, vendor err 249",
    "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
    "OSError: [Errno 28] No space left on device: '/scratch/run7/checkpoint-4000/optimizer.pt'",
};

const char* kUsers[] = {"alice", "bob", "carol", "dmitri", "erin", "farid", "grace", "heidi"};
const char* kOps[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast"};

// Real-incident lines by the stream they join: kernel, a daemon's syslog, job output.
struct IncidentLines {
  std::vector<std::string> kernel, daemon, app;
  size_t size() const { return kernel.size() + daemon.size() + app.size(); }
};

IncidentLines load_incidents(const std::string& dir) {
  namespace fs = std::filesystem;
  IncidentLines out;
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".log") files.push_back(entry.path());
  std::sort(files.begin(), files.end());  // same seed, same bytes: not the directory's order
  const attrib::rules::TimeContext context{};
  for (const fs::path& file : files) {
    const std::string source = file.stem().string();
    const bool system_log = source == "kernel" || source == "syslog" || source == "slurm";
    std::ifstream in(file);
    for (std::string text; std::getline(in, text);) {
      if (!text.empty() && text.back() == '\r') text.pop_back();
      if (text.empty()) continue;
      if (!system_log) {
        out.app.push_back(text);
        continue;
      }
      const auto stamp = attrib::rules::parse_line_stamp(text, context, true);
      std::string payload = text.substr(stamp.payload_offset);
      (source == "kernel" ? out.kernel : out.daemon).push_back(std::move(payload));
    }
  }
  return out;
}

class Writer {
 public:
  Writer(FILE* out, uint64_t seed, const IncidentLines* incidents)
      : out_(out), rng_{seed}, incidents_(incidents) {
    buf_.reserve(1 << 22);
  }

  // One line of the mix; returns its length including the newline.
  size_t line(double match_rate) {
    t_ms_ += rng_.below(3);  // ~1 ms apart: a busy node
    const int source = pick_source();
    char text[1024];
    if (rng_.unit() < match_rate) {
      if (incidents_ != nullptr)
        incident(text);
      else if (source == 0 || source == 1)
        prefix_kernel(text, kKernelMatches[rng_.below(sizeof kKernelMatches / sizeof *kKernelMatches)]);
      else if (source == 2)
        prefix_fabric(text, kFabricMatches[rng_.below(sizeof kFabricMatches / sizeof *kFabricMatches)]);
      else
        std::snprintf(text, sizeof text, "%s", kAppMatches[rng_.below(sizeof kAppMatches / sizeof *kAppMatches)]);
    } else if (source == 0) {
      kernel(text, sizeof text);
    } else if (source == 1) {
      syslog(text, sizeof text);
    } else if (source == 2) {
      fabric(text, sizeof text);
    } else {
      app(text, sizeof text);
    }
    size_t n = std::strlen(text);
    buf_.append(text, n);
    buf_.push_back('\n');
    if (buf_.size() > (1 << 22) - 1024) flush();
    return n + 1;
  }
  void flush() {
    std::fwrite(buf_.data(), 1, buf_.size(), out_);
    buf_.clear();
  }

 private:
  // kernel 35%, syslog 30%, fabric manager 5%, application 30%
  int pick_source() {
    uint32_t r = rng_.below(100);
    return r < 35 ? 0 : r < 65 ? 1 : r < 70 ? 2 : 3;
  }
  void clock(int& h, int& m, int& s) {
    uint64_t sec = 8 * 3600 + t_ms_ / 1000;
    h = static_cast<int>(sec / 3600 % 24);
    m = static_cast<int>(sec / 60 % 60);
    s = static_cast<int>(sec % 60);
  }
  void syslog_head(char* out, size_t size, const char* ident) {
    int h, m, s;
    clock(h, m, s);
    std::snprintf(out, size, "Nov 30 %02d:%02d:%02d gpu017 %s: ", h, m, s, ident);
  }
  void prefix_kernel(char* text, const char* message) {
    char head[96];
    syslog_head(head, sizeof head, "kernel");
    std::snprintf(text, 1024, "%s[%6" PRIu64 ".%06u] %s", head, 86400 + t_ms_ / 1000, rng_.below(1000000), message);
  }
  // One line of the incident bundles, drawn uniformly over all of them.
  void incident(char* text) {
    const IncidentLines& lines = *incidents_;
    size_t i = rng_.below(static_cast<uint32_t>(lines.size()));
    if (i < lines.kernel.size()) return prefix_kernel(text, lines.kernel[i].c_str());
    i -= lines.kernel.size();
    if (i < lines.daemon.size()) {
      char head[96];
      syslog_head(head, sizeof head, "slurmd[2211]");
      std::snprintf(text, 1024, "%s%s", head, lines.daemon[i].c_str());
      return;
    }
    std::snprintf(text, 1024, "%s", lines.app[i - lines.daemon.size()].c_str());
  }
  void prefix_fabric(char* text, const char* message) {
    int h, m, s;
    clock(h, m, s);
    std::snprintf(text, 1024, "[Nov 30 2026 %02d:%02d:%02d] %s", h, m, s, message);
  }
  void kernel(char* text, size_t size) {
    char msg[480];
    const uint32_t a = rng_.below(250) + 1, b = rng_.below(250) + 1, pid = rng_.below(4000000) + 100;
    switch (rng_.below(8)) {
      case 0:
        std::snprintf(msg, sizeof msg,
                      "audit: type=1400 audit(1764489600.%03u:%u): apparmor=\"ALLOWED\" operation=\"open\" "
                      "profile=\"snap.lxd.daemon\" name=\"/proc/%u/stat\" pid=%u comm=\"lxd\" requested_mask=\"r\"",
                      rng_.below(1000), rng_.below(90000), pid, pid);
        break;
      case 1:
        std::snprintf(msg, sizeof msg, "IPv4: martian source 10.%u.%u.%u from 10.%u.%u.%u, on dev ib0", a, b, a ^ 7, b,
                      a, b ^ 3);
        break;
      case 2:
        std::snprintf(msg, sizeof msg,
                      "perf: interrupt took too long (%u > %u), lowering kernel.perf_event_max_sample_rate to %u",
                      2500 + a, 2490 + b, 79000 - a * 10);
        break;
      case 3:
        std::snprintf(msg, sizeof msg, "device veth%07x entered promiscuous mode", rng_.below(0xfffffff));
        break;
      case 4:
        std::snprintf(msg, sizeof msg, "docker0: port %u(veth%07x) entered forwarding state", a % 8 + 1,
                      rng_.below(0xfffffff));
        break;
      case 5:
        std::snprintf(msg, sizeof msg,
                      "EXT4-fs (nvme0n1p%u): mounted filesystem %08x-%04x-%04x with ordered data mode. Quota mode: "
                      "none.",
                      a % 4 + 1, rng_.below(0xffffffff), rng_.below(0xffff), rng_.below(0xffff));
        break;
      case 6:
        std::snprintf(msg, sizeof msg, "TCP: request_sock_TCP: Possible SYN flooding on port %u. Sending cookies.",
                      1024 + rng_.below(60000));
        break;
      default:
        std::snprintf(msg, sizeof msg,
                      "python3[%u]: ptrace attach of \"/usr/bin/python3 train.py\"[%u] was attempted "
                      "by \"gdb -p %u\"[%u]",
                      pid, pid, pid, pid + 7);
        break;
    }
    prefix_kernel(text, msg);
    (void)size;
  }
  void syslog(char* text, size_t size) {
    char head[96];
    char ident[48];
    const uint32_t pid = rng_.below(4000000) + 100, a = rng_.below(250) + 1, b = rng_.below(250) + 1;
    const char* user = kUsers[rng_.below(8)];
    switch (rng_.below(7)) {
      case 0:
        syslog_head(head, sizeof head, "systemd[1]");
        std::snprintf(text, size, "%sStarted Session %u of User %s.", head, rng_.below(90000), user);
        break;
      case 1:
        std::snprintf(ident, sizeof ident, "sshd[%u]", pid);
        syslog_head(head, sizeof head, ident);
        std::snprintf(text, size,
                      "%sAccepted publickey for %s from 10.%u.%u.%u port %u ssh2: ED25519 SHA256:%016" PRIx64, head,
                      user, a, b, a ^ b, 30000 + rng_.below(30000), rng_.next());
        break;
      case 2:
        std::snprintf(ident, sizeof ident, "slurmd[%u]", 2211);
        syslog_head(head, sizeof head, ident);
        std::snprintf(text, size, "%slaunch task StepId=%u.%u request from UID:%u GID:%u HOST:10.%u.%u.%u PORT:%u",
                      head, 100000 + rng_.below(90000), rng_.below(4), 1000 + a, 1000 + a, a, b, a ^ b,
                      40000 + rng_.below(20000));
        break;
      case 3:
        std::snprintf(ident, sizeof ident, "CRON[%u]", pid);
        syslog_head(head, sizeof head, ident);
        std::snprintf(text, size, "%s(root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)", head);
        break;
      case 4:
        syslog_head(head, sizeof head, "systemd-logind[1021]");
        std::snprintf(text, size, "%sNew session %u of user %s.", head, rng_.below(90000), user);
        break;
      case 5:
        syslog_head(head, sizeof head, "chronyd[911]");
        std::snprintf(text, size, "%sSelected source 10.%u.%u.%u (ntp%u.cluster.local)", head, a, b, a ^ b, a % 4);
        break;
      default:
        syslog_head(head, sizeof head, "systemd[1]");
        std::snprintf(text, size, "%sslurmstepd.scope: Consumed %u.%03us CPU time.", head, rng_.below(100000),
                      rng_.below(1000));
        break;
    }
  }
  void fabric(char* text, size_t size) {
    char msg[400];
    const uint32_t tid = 4200 + rng_.below(50);
    switch (rng_.below(4)) {
      case 0:
        std::snprintf(msg, sizeof msg,
                      "[INFO] [tid %u] fabric manager received GPU attach request for GPU physical id %u", tid,
                      rng_.below(8));
        break;
      case 1:
        std::snprintf(msg, sizeof msg,
                      "[INFO] [tid %u] Sending inband response message: Message header details: magic Id:%x seq "
                      "Num:%u type:%u requestId:%u length:%u",
                      tid, 0xadbc, rng_.below(100000), 3, rng_.below(100000), 48);
        break;
      case 2:
        std::snprintf(msg, sizeof msg, "[INFO] [tid %u] multicast group %u is allocated.", tid, rng_.below(512));
        break;
      default:
        std::snprintf(msg, sizeof msg,
                      "[INFO] [tid %u] Successfully configured all the available NVSwitches to route GPU NVLink "
                      "traffic. NVLink Peer-to-Peer support will be enabled once GPUs are successfully registered "
                      "with the NVLink fabric.",
                      tid);
        break;
    }
    prefix_fabric(text, msg);
    (void)size;
  }
  void app(char* text, size_t size) {
    const uint32_t rank = rng_.below(8), step = static_cast<uint32_t>(t_ms_ / 50);
    int h, m, s;
    clock(h, m, s);
    switch (rng_.below(6)) {
      case 0:
        std::snprintf(text, size, "gpu017:%u:%u [%u] NCCL INFO Channel %02u/0 : %u[%u] -> %u[%u] via P2P/IPC/read",
                      31000 + rank, 31100 + rank, rank, rng_.below(32), rank, rank, (rank + 1) % 8, (rank + 1) % 8);
        break;
      case 1:
        std::snprintf(text, size,
                      "gpu017:%u:%u [%u] NCCL INFO comm 0x%" PRIx64
                      " rank %u nRanks 64 nNodes 8 localRanks 8 "
                      "localRank %u MNNVL 0 - %s",
                      31000 + rank, 31100 + rank, rank, static_cast<uint64_t>(rng_.next() & 0xffffffffffull), rank,
                      rank, kOps[rng_.below(4)]);
        break;
      case 2:
        std::snprintf(text, size, "{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.3e, 'epoch': %.2f}",
                      2.0 + rng_.unit(), rng_.unit() * 4, 1e-4 * rng_.unit(), step / 1000.0);
        break;
      case 3:
        std::snprintf(text, size,
                      "2026-11-30 %02d:%02d:%02d,%03u - INFO - train.py:%u - step %u loss %.4f lr %.3e "
                      "tokens/s %u",
                      h, m, s, rng_.below(1000), 200 + rng_.below(300), step, 2.0 + rng_.unit(), 1e-4 * rng_.unit(),
                      90000 + rng_.below(20000));
        break;
      case 4:
        std::snprintf(text, size,
                      "[rank%u]:[W1130 %02d:%02d:%02d.%09u ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank %u]  "
                      "using GPU %u to perform barrier as devices used by this process are currently unknown.",
                      rank, h, m, s, rng_.below(1000000000), rank, rank);
        break;
      default:
        std::snprintf(text, size, "Epoch %u: %3u%%| %u/%u [%02d:%02d<%02d:%02d, %.2fit/s, loss=%.3f]", step / 5000,
                      step % 100, step % 5000, 5000, m, s, 59 - m, 59 - s, 3 + rng_.unit(), 2.0 + rng_.unit());
        break;
    }
  }

  FILE* out_;
  Rng rng_;
  const IncidentLines* incidents_;
  uint64_t t_ms_ = 0;
  std::string buf_;
};

}  // namespace

int main(int argc, char** argv) {
  uint64_t bytes = 1ull << 30, seed = 1;
  double match_rate = 0.001;
  std::string out_path, incidents_dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (key == "--bytes")
      bytes = std::stoull(argv[i + 1]);
    else if (key == "--seed")
      seed = std::stoull(argv[i + 1]);
    else if (key == "--match-rate")
      match_rate = std::stod(argv[i + 1]);
    else if (key == "--out")
      out_path = argv[i + 1];
    else if (key == "--incidents")
      incidents_dir = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: attrib-bench-gen --out FILE [--bytes N] [--seed S] [--match-rate R] [--incidents DIR]\n");
      return 2;
    }
  }
  if (out_path.empty()) {
    std::fprintf(stderr, "usage: attrib-bench-gen --out FILE [--bytes N] [--seed S] [--match-rate R] [--incidents DIR]\n");
    return 2;
  }
  FILE* out = std::fopen(out_path.c_str(), "wb");
  if (!out) {
    std::perror(out_path.c_str());
    return 1;
  }
  IncidentLines incidents;
  if (!incidents_dir.empty()) {
    incidents = load_incidents(incidents_dir);
    if (incidents.size() == 0) {
      std::fprintf(stderr, "%s: no <incident>/<host>/<source>.log lines\n", incidents_dir.c_str());
      return 1;
    }
  }
  Writer writer(out, seed, incidents_dir.empty() ? nullptr : &incidents);
  uint64_t written = 0, lines = 0;
  while (written < bytes) {
    written += writer.line(match_rate);
    ++lines;
  }
  writer.flush();
  if (std::fclose(out) != 0) {
    std::perror(out_path.c_str());
    return 1;
  }
  std::printf("corpus %s: %" PRIu64 " bytes, %" PRIu64 " lines, seed %" PRIu64 ", match rate %.4f%s\n", out_path.c_str(),
              written, lines, seed, match_rate,
              incidents_dir.empty() ? "" : (", mixed-in lines from " + std::to_string(incidents.size()) +
                                            " real-incident lines under " + incidents_dir).c_str());
  return 0;
}
