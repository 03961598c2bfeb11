// Whose line is it (docs/rules.md, "Evidence that belongs to the job"): a system log line
// that names a job, a process, a user, a GPU or a node is the job's evidence only when what it
// names is the job's. On a shared node the kernel, slurmd and the driver also report the
// neighbours' OOM kills, time limits and Xids; those are context, never this job's cause.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/types.h"

namespace attrib::rules::detail {

// A task that ended well (slurm.spank_task_ended): read for the allocation, never listed.
inline constexpr const char* kTaskEndedKind = "slurm.task_ended";
// The driver's GPU minor-number map (driver.gpu_minor): read for the allocation, never listed.
inline constexpr const char* kGpuMinorKind = "gpu.minor";
// Another job's task on the node (slurm.spank_neighbour_task): read for the allocation.
inline constexpr const char* kNeighbourTaskKind = "slurm.neighbour_task";

// A line that only tells what a job held (the kinds above): it completes the allocation
// and is not listed in the verdict.
inline bool is_allocation_fact(const Event& e) {
  return e.kind == kTaskEndedKind || e.kind == kGpuMinorKind || e.kind == kNeighbourTaskKind;
}

// A field's integer: a JSON integer, or a string of digits only (a captured "4100").
std::optional<int64_t> number_in(const nlohmann::json& value);

// What a line names that the job does not own.
struct ForeignEvidence {
  std::string job;   // the other job's id when the line names one ("4999"), else ""
  std::string whom;  // "job 4999", "another user (uid 1001)"
  std::string why;   // "names job 4999, not 5100", ...
  // Whom the job shared its node with (a job, a user, a process, a GPU's holder); false
  // for a line about another node altogether, read outside the job's nodes.
  bool shared_node = true;
};

// The job's allocation as the engine judges with it: job.allocation, plus what the
// evidence itself proves (trusted SPANK task lines of this job: its pids and GPU indices
// per node; of other jobs on the node: theirs; the driver's minor-number-to-PCI lines:
// the PCI bus ids of those GPUs).
// Replay computes the same from the same lines.
JobAllocation complete_allocation(const JobFacts& job, const std::vector<Event>& events);

// Why `e` is a neighbour's, or nullopt when it is the job's or cannot be told (nothing
// to compare with). The job's own output (app sources) is always its own, and a
// node-wide family (a rule with `scope: node_wide`: the global OOM killer, a hung
// kernel task) counts for every job on the node whatever it names.
std::optional<ForeignEvidence> foreign_evidence(const Event& e, bool node_wide, const JobFacts& job,
                                                const JobAllocation& allocation);

// The job id a job-naming field holds ("4999", "4999.0", "4999.batch", "4242_7",
// "4242+1.0", "job_4999"-less digits): the part before a step suffix, or nullopt when
// the value is not of that shape (a timestamp in a slurmstepd prefix, say).
std::optional<std::string> job_id_in(const std::string& value);

}  // namespace attrib::rules::detail
