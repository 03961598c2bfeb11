// Core value types shared by the rules engine, the collectors and the daemon.
// Everything here is plain data: no I/O, no gRPC, no SQLite.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attrib {

// Microseconds since the Unix epoch (UTC). Optional wherever a source may not
// carry a usable timestamp: order within a stream is then the only time.
using TimeUs = int64_t;

// 10000-01-01T00:00:00Z in epoch seconds. A time from outside (a hook, a record, a file)
// at or past it is not a time: refused before it reaches arithmetic in microseconds,
// which would overflow near 2^63 (fuzz/regressions/).
inline constexpr int64_t kEndOfTimeSeconds = 253402300800;

// Epoch seconds as TimeUs, or nullopt when they are not a time from 1970 up to then.
inline std::optional<TimeUs> epoch_seconds_to_us(int64_t seconds) {
  if (seconds < 0 || seconds >= kEndOfTimeSeconds) return std::nullopt;
  return seconds * 1000000;
}
// A TimeUs from outside, or nullopt when it is not one (see kEndOfTimeSeconds).
inline std::optional<TimeUs> checked_time_us(int64_t us) {
  if (us < 0 || us >= kEndOfTimeSeconds * 1000000) return std::nullopt;
  return us;
}

// One raw line from one source on one node, as a collector hands it over.
struct LogLine {
  std::string node;            // Slurm node name the line belongs to
  std::string source;          // kernel | syslog | fabricmanager | slurm | app | app.rank<N>
  std::optional<TimeUs> time;  // wall clock, when the source provides it
  uint64_t seq = 0;            // position within its (node, source) stream
  bool trusted = false;        // written by a root-owned component (see Trust)
  std::string text;            // the payload (prefixes such as syslog headers removed)
};

// A typed fact extracted from one or more identical lines.
struct Event {
  std::string id;    // "e<N>", assigned in deterministic order
  std::string kind;  // e.g. gpu.xid, nccl.watchdog_timeout
  std::string rule;  // extraction rule id that produced it
  std::string node;
  std::string source;
  std::optional<TimeUs> time;
  uint64_t seq = 0;
  bool trusted = false;
  std::string line;                                  // the raw line (first occurrence when folded)
  nlohmann::json fields = nlohmann::json::object();  // typed captures, sorted keys
  uint64_t count = 1;                                // > 1 when identical events were folded
};

// What one collector managed to read for one node. Refused: the source exists but
// reading it would cross a trust boundary (a user's file not owned by the job's user,
// a path through a symbolic link), so it was deliberately not read.
enum class CoverageStatus { Ok, Empty, Partial, Failed, Timeout, Unavailable, NotConfigured, Refused };
const char* to_string(CoverageStatus status);
// The status spelled `text` (as to_string writes it), or nullopt for a name this
// version does not know.
std::optional<CoverageStatus> coverage_status_from(const std::string& text);

struct Coverage {
  std::string node;
  std::string source;
  CoverageStatus status = CoverageStatus::NotConfigured;
  uint64_t lines = 0;
  uint64_t events = 0;
  std::optional<TimeUs> window_start;
  std::optional<TimeUs> window_end;
  std::string detail;
};

// One component of a heterogeneous job ("4242+1"), as its own accounting row says.
struct JobComponent {
  std::string job_id;  // "4242+1"
  std::string state;
  int exit_code = 0;
  int signal = 0;
  std::vector<std::string> nodes;
  bool operator==(const JobComponent&) const = default;
};

// What the job held on one node (docs/verdict-reference.md, "Allocation"): what a line
// that names a process or a GPU is checked against. Empty lists mean "not known", never
// "nothing": a check needs something to compare with.
struct NodeAllocation {
  std::vector<std::string> gpus;  // PCI bus ids, normalised ("0000:07:00.0")
  std::vector<int> gpu_indices;   // Slurm's GPU indices (SLURM_JOB_GPUS), the driver's minor numbers
  std::vector<int64_t> pids;      // the job's task pids (SPANK records)
  // Other jobs' tasks on the node in the job's window (their SPANK records): pid -> job id,
  // and GPU -> job id, the GPU by index ("1") and, where the driver's map tells, by bus id
  // ("0000:07:00.0"). What tells whose a line naming only a process or a GPU is.
  std::map<int64_t, std::string> neighbour_pids;
  std::map<std::string, std::string> neighbour_gpus;
  bool operator==(const NodeAllocation&) const = default;
};

// What belongs to the job (issue 38: evidence that belongs to the job). A line that names
// another job, another user's process or a GPU the job did not hold is a neighbour's.
struct JobAllocation {
  // Every numeric id Slurm gave the attempt: an array task's own job id, each het
  // component's. A line's job_N / StepId=N / JobId=N is the job's when N is among them.
  std::vector<std::string> slurm_ids;
  std::map<std::string, NodeAllocation> nodes;  // node -> what it held there
  bool empty() const { return slurm_ids.empty() && nodes.empty(); }
  bool operator==(const JobAllocation&) const = default;
};

// Other jobs that failed on one of the job's nodes, recently, with no trusted cause found
// (the head's archive; docs/rules.md "Failures that repeat on a node"). The head fills it
// only past its threshold (fleet.repeat_failures_jobs); a bundle's job.json carries it.
struct NodeFailureHistory {
  std::string node;
  int other_jobs = 0;   // distinct jobs other than this one
  int other_users = 0;  // distinct users among them other than this job's
  int64_t window_s = 0;
  bool operator==(const NodeFailureHistory&) const = default;
};

// What the accounting record (or the bundle's job.json) says about the job.
struct JobFacts {
  std::string job_id;  // "4242", "4242_7", "4242+1"
  std::string cluster;
  int attempt = 0;
  std::string state = "UNKNOWN";  // COMPLETED FAILED TIMEOUT CANCELLED NODE_FAIL OUT_OF_MEMORY ...
  int exit_code = 0;
  int signal = 0;
  std::optional<TimeUs> start;
  std::optional<TimeUs> end;
  std::vector<std::string> nodes;
  std::map<int, std::string> ranks;  // rank -> node, when known
  std::optional<uint32_t> uid;       // the job's user, when accounting or the hook knows it
  // A heterogeneous job ("4242") is judged once, jointly: its components, in offset
  // order; state, exit code and signal above are the first failing component's. Empty
  // for every other job.
  std::vector<JobComponent> components;
  // Restarts inside the allocation: application steps started again after the same step
  // failed (a retry loop around srun), from the accounting's step records.
  int restarts = 0;
  // Who ran the attempt when it was not Slurm ("kubernetes", ...): set by the attribution
  // API's callers (docs/api.md); "" for every Slurm job.
  std::string scheduler;
  // What the job held (slurmdbd's ids, the SPANK records' pids and GPUs): what the
  // engine checks a line's job, process and GPU against.
  JobAllocation allocation;
  // Per node, other jobs' unexplained failures there (empty unless the head found some).
  std::vector<NodeFailureHistory> repeated_failures;
};

// ISO 8601 UTC with microseconds: 2026-11-30T10:03:12.123456Z
std::string format_time(TimeUs t);
// Parses the ISO 8601 forms used in job.json and the verdict ("...Z", optional fraction,
// optional +HH:MM offset). Returns nullopt on anything else.
std::optional<TimeUs> parse_iso_time(const std::string& text);

}  // namespace attrib
