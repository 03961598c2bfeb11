// Whose line is it: the fields that name a job, a user, a process or a GPU, compared with
// what the job held (docs/rules.md, "Evidence that belongs to the job").
#include "rules/ownership.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "core/json_text.h"
#include "rules/event_order.h"
#include "rules/rule_definitions.h"

namespace attrib::rules::detail {

namespace {

using json = nlohmann::json;

// Fields that name a job: the kernel's memcg path (job_N), slurmstepd's `[N.step]` prefix
// and its JOB/STEP lines, StepId=, JobId=, a SPANK record's job=.
constexpr const char* kJobFields[] = {"slurm_job", "job", "step", "stepd"};

// The job's own SPANK task lines (slurm.spank_task_exit, slurm.spank_task_ended): its
// pids and GPU indices.
constexpr const char* kTaskKinds[] = {"slurm.task_exit", kTaskEndedKind};


bool all_digits(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

template <typename T>
bool contains(const std::vector<T>& list, const T& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

template <typename T>
void add_unique(std::vector<T>& list, const T& value) {
  if (!contains(list, value)) list.push_back(value);
}

// "0,1,3" (SLURM_JOB_GPUS as the SPANK line carries it) -> indices; junk is skipped.
std::vector<int> gpu_indices_in(const std::string& text) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    if (all_digits(item) && item.size() <= 6) out.push_back(std::stoi(item));
    pos = comma + 1;
  }
  return out;
}

bool is_task_of(const Event& e, const JobFacts& job, const JobAllocation& allocation) {
  if (!e.trusted || e.source != "spank") return false;
  if (std::none_of(std::begin(kTaskKinds), std::end(kTaskKinds), [&](const char* k) { return e.kind == k; }))
    return false;
  auto it = e.fields.find("job");
  if (it == e.fields.end()) return false;
  const std::string id = value_text(*it);
  return id == job.job_id || contains(allocation.slurm_ids, id);
}

// The ids a job-naming field may hold for this job, and whether they are all known: an
// array task or a het component has its own numeric id, which only accounting tells.
struct JobIds {
  std::set<std::string> ids;
  bool decidable = false;
};

JobIds job_ids_of(const JobFacts& job, const JobAllocation& allocation) {
  JobIds out;
  out.ids.insert(job.job_id);
  for (const auto& id : allocation.slurm_ids) out.ids.insert(id);
  for (const auto& component : job.components) out.ids.insert(component.job_id);
  out.decidable = !allocation.slurm_ids.empty() || (all_digits(job.job_id) && job.components.empty());
  return out;
}

std::optional<ForeignEvidence> foreign_job(const Event& e, const JobFacts& job, const JobAllocation& allocation) {
  const JobIds mine = job_ids_of(job, allocation);
  if (!mine.decidable) return std::nullopt;
  for (const char* field : kJobFields) {
    auto it = e.fields.find(field);
    if (it == e.fields.end()) continue;
    const auto id = job_id_in(value_text(*it));
    if (!id || mine.ids.count(*id)) continue;
    return ForeignEvidence{*id, "job " + *id, "names job " + *id + ", not " + job.job_id};
  }
  return std::nullopt;
}

std::optional<ForeignEvidence> foreign_user(const Event& e, const JobFacts& job) {
  if (!job.uid) return std::nullopt;
  auto it = e.fields.find("uid");
  if (it == e.fields.end()) return std::nullopt;
  const auto uid = number_in(*it);
  if (!uid || *uid == static_cast<int64_t>(*job.uid)) return std::nullopt;
  const std::string u = std::to_string(*uid);
  return ForeignEvidence{"", "another user (uid " + u + ")",
                         "a process of uid " + u + ", not the job's user (uid " + std::to_string(*job.uid) + ")"};
}

// A line read on a host outside the job (the controller's slurmctld log) that names a node
// in its `host` field ("Nodes gpu017 not responding") is about that node: another node's
// trouble is context for this job. A line read on one of the job's nodes is that node's
// own (its `host` may name a peer it failed to reach). Undecidable without a node list.
std::optional<ForeignEvidence> foreign_node(const Event& e, const JobFacts& job) {
  if (job.nodes.empty() || contains(job.nodes, e.node)) return std::nullopt;
  auto it = e.fields.find("host");
  if (it == e.fields.end() || !it->is_string()) return std::nullopt;
  const std::string host = it->get<std::string>();
  if (host.empty() || contains(job.nodes, host)) return std::nullopt;
  return ForeignEvidence{"", "node " + host, "names node " + host + ", not one of the job's nodes", false};
}

// A GPU line is another job's only when that job's own task record holds the GPU. The
// job's GPU indices come from its step's environment (SLURM_STEP_GPUS), which Slurm sets
// for GPU GRES but which a job without them could set itself: its list can make a GPU
// its own, never disown one that no other job held (an Xid on a GPU the job really used
// stays its cause).
std::optional<ForeignEvidence> gpu_held_by_another(const std::string& gpu, const std::string& node,
                                                   const NodeAllocation& held) {
  auto holder = held.neighbour_gpus.find(gpu);
  if (holder == held.neighbour_gpus.end()) return std::nullopt;
  return ForeignEvidence{holder->second, "job " + holder->second,
                         "GPU " + gpu + " on " + node + " was held by job " + holder->second + ", not this job"};
}

std::optional<ForeignEvidence> foreign_gpu(const Event& e, const NodeAllocation& held) {
  if (auto pci = e.fields.find("pci"); pci != e.fields.end() && pci->is_string()) {
    const std::string bus = normalize_pci(pci->get<std::string>());
    if (!contains(held.gpus, bus)) return gpu_held_by_another(bus, e.node, held);
  }
  if (auto gpu = e.fields.find("gpu"); gpu != e.fields.end()) {
    const auto index = number_in(*gpu);
    if (index && !contains(held.gpu_indices, static_cast<int>(*index)))
      return gpu_held_by_another(std::to_string(*index), e.node, held);
  }
  return std::nullopt;
}

// Another job's task on the node (slurm.spank_neighbour_task): its pid and GPUs are that
// job's, unless the record is this job's own under another id.
void add_neighbour_task(NodeAllocation& held, const Event& e, const JobFacts& job) {
  auto other = e.fields.find("job");
  if (other == e.fields.end()) return;
  const std::string id = value_text(*other);
  if (id == job.job_id || contains(job.allocation.slurm_ids, id)) return;
  if (auto pid = e.fields.find("pid"); pid != e.fields.end() && number_in(*pid))
    held.neighbour_pids[*number_in(*pid)] = id;
  if (auto gpus = e.fields.find("gpus"); gpus != e.fields.end())
    for (int index : gpu_indices_in(value_text(*gpus))) held.neighbour_gpus[std::to_string(index)] = id;
}

// A process the SPANK records show as another job's task on that node.
std::optional<ForeignEvidence> foreign_process(const Event& e, const NodeAllocation& held) {
  auto pid = e.fields.find("pid");
  if (pid == e.fields.end()) return std::nullopt;
  const auto number = number_in(*pid);
  if (!number) return std::nullopt;
  auto other = held.neighbour_pids.find(*number);
  if (other == held.neighbour_pids.end()) return std::nullopt;
  return ForeignEvidence{other->second, "job " + other->second,
                         "process " + std::to_string(*number) + " was a task of job " + other->second};
}

}  // namespace

std::optional<int64_t> number_in(const json& value) {
  if (value.is_number_integer()) return value.get<int64_t>();
  if (!value.is_string()) return std::nullopt;
  const std::string& text = value.get_ref<const std::string&>();
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

std::optional<std::string> job_id_in(const std::string& value) {
  // N, N_T (array task), N+O (het component), each optionally followed by .step
  const std::string id = value.substr(0, value.find('.'));
  size_t i = 0;
  const auto digits = [&] {
    const size_t from = i;
    while (i < id.size() && id[i] >= '0' && id[i] <= '9') ++i;
    return i > from;
  };
  if (!digits()) return std::nullopt;
  if (i < id.size() && (id[i] == '_' || id[i] == '+')) {
    ++i;
    if (!digits()) return std::nullopt;
  }
  if (i != id.size()) return std::nullopt;
  const size_t dot = value.find('.');
  if (dot != std::string::npos) {
    const std::string step = value.substr(dot + 1);
    if (step.empty() || step.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789+") != std::string::npos)
      return std::nullopt;
  }
  return id;
}

JobAllocation complete_allocation(const JobFacts& job, const std::vector<Event>& events) {
  JobAllocation allocation = job.allocation;
  std::map<std::string, std::map<int, std::string>> minors;  // node -> minor -> PCI bus id
  for (const Event& e : events) {
    if (e.trusted && e.kind == kGpuMinorKind) {
      auto minor = e.fields.find("minor");
      auto pci = e.fields.find("pci");
      if (minor != e.fields.end() && pci != e.fields.end() && number_in(*minor))
        minors[e.node][static_cast<int>(*number_in(*minor))] = normalize_pci(value_text(*pci));
      continue;
    }
    if (e.trusted && e.source == "spank" && e.kind == kNeighbourTaskKind) {
      add_neighbour_task(allocation.nodes[e.node], e, job);
      continue;
    }
    if (!is_task_of(e, job, allocation)) continue;
    NodeAllocation& held = allocation.nodes[e.node];
    if (auto pid = e.fields.find("pid"); pid != e.fields.end() && number_in(*pid))
      add_unique(held.pids, *number_in(*pid));
    if (auto gpus = e.fields.find("gpus"); gpus != e.fields.end())
      for (int index : gpu_indices_in(value_text(*gpus))) add_unique(held.gpu_indices, index);
  }
  for (auto& [node, held] : allocation.nodes) {
    auto map = minors.find(node);
    if (map == minors.end()) continue;
    for (int index : held.gpu_indices) {
      auto pci = map->second.find(index);
      if (pci != map->second.end()) add_unique(held.gpus, pci->second);
    }
    std::map<std::string, std::string> by_bus;
    for (const auto& [gpu, other] : held.neighbour_gpus) {
      auto pci = all_digits(gpu) && gpu.size() <= 6 ? map->second.find(std::stoi(gpu)) : map->second.end();
      if (pci != map->second.end()) by_bus[pci->second] = other;
    }
    held.neighbour_gpus.insert(by_bus.begin(), by_bus.end());
  }
  for (auto& [node, held] : allocation.nodes) {
    std::sort(held.gpus.begin(), held.gpus.end());
    std::sort(held.gpu_indices.begin(), held.gpu_indices.end());
    std::sort(held.pids.begin(), held.pids.end());
  }
  return allocation;
}

std::optional<ForeignEvidence> foreign_evidence(const Event& e, bool node_wide, const JobFacts& job,
                                                const JobAllocation& allocation) {
  // The job's own output is its own by where it was read; a node-wide fault is everyone's.
  if (node_wide || is_application_source(e.source)) return std::nullopt;
  auto node = allocation.nodes.find(e.node);
  const NodeAllocation none;
  const NodeAllocation& held = node == allocation.nodes.end() ? none : node->second;
  // A process the SPANK records show as one of the job's tasks on that node is the job's.
  if (auto pid = e.fields.find("pid"); pid != e.fields.end()) {
    const auto number = number_in(*pid);
    if (number && contains(held.pids, *number)) return std::nullopt;
  }
  if (auto other = foreign_job(e, job, allocation)) return other;
  if (auto other = foreign_user(e, job)) return other;
  if (auto other = foreign_node(e, job)) return other;
  if (auto other = foreign_process(e, held)) return other;
  return foreign_gpu(e, held);
}

}  // namespace attrib::rules::detail
