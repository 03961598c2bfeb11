// The verdict (schema attrib.verdict.v1, docs/verdict-reference.md) as a value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "core/types.h"

namespace attrib {

struct RootCause {
  std::string rule;
  std::string summary;
  Event event;
};

struct Candidate {
  std::string domain;
  std::string rule;
  std::string summary;
  std::vector<std::string> events;  // event ids
};

struct Symptom {
  Event event;
  std::string explained_by;  // correlation rule id
  uint64_t count = 1;
};

struct AffectedGpu {
  std::string node;
  std::string pci;
};

// A (node, source) whose coverage is missing (partial, failed, timeout, unavailable) and
// whose evidence could decide or change the verdict (rules.md: "say which missing source
// would decide it"; "coverage lowers certainty").
struct MissingSource {
  std::string node;
  std::string source;
  CoverageStatus status = CoverageStatus::Unavailable;
  std::string note;                   // e.g. "no kernel log from gpu017 (unavailable)"
  std::vector<std::string> named_by;  // ids of events on other nodes that point at this node
};

// A line about someone else on a shared node (docs/verdict-reference.md, "Neighbours"):
// another job, another user's process, a GPU the job did not hold. Context, never the
// job's root cause or symptom.
struct Neighbour {
  Event event;
  std::string job;      // the other job's id when the line names one, else ""
  std::string why;      // what the line names that the job does not own
  std::string summary;  // "n1 was shared with job 4999: ... at 10:04:07Z"
};

// The rank the others were waiting on when the job's collectives stopped
// (docs/verdict-reference.md, "Hung rank"): from the ranks' flight-recorder dumps, else
// from the framework's own lines.
struct HungRank {
  int64_t rank = 0;
  std::string node;           // where it ran, when its evidence says ("" otherwise)
  std::string process_group;  // the group's id as the evidence names it
  int64_t seq = 0;            // the collective it never joined (the group's sequence number)
  std::string collective;     // its operation when known ("gloo:all_reduce", "ALLREDUCE"), else ""
  std::vector<int64_t> waiting_ranks;  // the ranks that had reached it
  std::string evidence;                // flight_recorder | watchdog | desync_report
  std::string summary;                 // one sentence for people
};

struct Verdict {
  std::string job_id;
  std::string cluster;
  int attempt = 0;
  // The head archive's run of this job id (attrib-show --run): set once archived, so a
  // verdict log or webhook line tells a reused id's verdict from a revision of the same
  // run. Absent from verdicts nothing archived (attrib-replay, golden fixtures).
  std::optional<int64_t> run;
  std::string terminal_state = "UNKNOWN";
  int exit_code = 0;
  int signal = 0;
  std::string domain = "UNATTRIBUTED";
  std::optional<RootCause> root_cause;
  std::vector<Candidate> candidates;
  std::vector<Symptom> symptoms;
  std::vector<Event> unexplained;
  // Distinct events left out of the two lists above once they reached their cap
  // (rules::kMaxListedEvents each): a flood of distinct lines must not make a verdict of
  // many megabytes. They still count in the comment's symptoms= and unexplained=.
  uint64_t symptoms_omitted = 0;
  uint64_t unexplained_omitted = 0;
  std::vector<std::string> nodes;  // the job's allocated nodes, sorted (added in v1)
  std::vector<JobComponent> components;  // a het job's components (JobFacts), else empty
  int restarts = 0;                      // restarts inside the allocation (JobFacts)
  std::string scheduler;                 // JobFacts::scheduler: "" for Slurm (added in v1)
  std::vector<std::string> affected_nodes;
  std::vector<AffectedGpu> affected_gpus;
  std::string recommended_action = "NONE";
  // high | medium | low (added in v1; "" in a verdict archived before it existed).
  // low: only untrusted or symptom-class evidence points at the domain; never acts.
  std::string confidence;
  std::vector<Coverage> coverage;
  std::vector<MissingSource> missing_sources;  // sorted by (node, source); added in v1
  // Neighbours on shared nodes, in event order (added in v1; only when there are some),
  // and what the job held as the engine judged with it (JobFacts::allocation completed
  // from the evidence, and the job's uid): what an export needs to judge the same again.
  std::vector<Neighbour> neighbours;
  uint64_t neighbours_omitted = 0;  // beyond rules::kMaxListedEvents, counted only
  JobAllocation allocation;
  std::optional<uint32_t> uid;
  std::optional<HungRank> hung_rank;  // added in v1; only when the evidence names one
  std::string ruleset_version;
  std::string ruleset_hash;  // "sha256:<hex>"
  std::string comment;       // the attrib segment written to Slurm
};

// Serialises exactly as verdict v1 (deterministic: fixed key order, sorted arrays).
nlohmann::json to_json(const Verdict& verdict);
nlohmann::json to_json(const Event& event);
nlohmann::json to_json(const Coverage& coverage);
// Parses verdict v1 JSON back (the archive stores JSON). Error names the bad field.
Result<Verdict> verdict_from_json(const nlohmann::json& json);
// A het job's components, as the verdict and a bundle's job.json carry them:
// [{"job_id", "state", "exit_code", "signal", "nodes"}], in offset order. The error
// names the path (under `path`) of what was wrong.
nlohmann::json components_to_json(const std::vector<JobComponent>& components);
Result<std::vector<JobComponent>> components_from_json(const nlohmann::json& json, const std::string& path);
// What the job held (JobAllocation) and its user, as the verdict and a bundle's job.json
// carry them: {"uid", "slurm_ids", "nodes": {"<node>": {"gpus", "gpu_indices", "pids"}}},
// each member only when known. The error names the path (under `path`) of what was wrong.
nlohmann::json allocation_to_json(const JobAllocation& allocation, std::optional<uint32_t> uid);
Status allocation_from_json(const nlohmann::json& json, const std::string& path, JobAllocation& allocation,
                            std::optional<uint32_t>& uid);
// Other jobs' unexplained failures per node (JobFacts::repeated_failures), as a bundle's
// job.json carries them: [{"node", "other_jobs", "other_users", "window_s"}].
nlohmann::json repeated_failures_to_json(const std::vector<NodeFailureHistory>& history);
Result<std::vector<NodeFailureHistory>> repeated_failures_from_json(const nlohmann::json& json,
                                                                    const std::string& path);
// One coverage row as to_json(Coverage) writes it (a bundle's coverage.json holds these).
Result<Coverage> coverage_from_json(const nlohmann::json& json, const std::string& path);

}  // namespace attrib
