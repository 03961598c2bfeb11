// How the slurmdb API must be called (verified against a real Slurm 22.05 slurmdbd):
// - condition lists are created with slurm_list_create(nullptr): no destructor, the
//   list only borrows our strings and structs;
// - slurmdb_job_cond_t.db_flags must be SLURMDB_JOB_FLAG_NOTSET or no job matches;
// - every request runs in a database transaction that stays open on the connection,
//   so reads end it (commit false) to see later changes; ending it (DBD_FINI) is a
//   round trip of its own, counted like any request;
// - a modification needs derived_ec = NO_VAL and is committed only when slurmdbd
//   reports a modified record.
#include "slurm/slurmdbd_client.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "slurm/libslurm.h"

namespace attrib::slurm {
namespace {

std::atomic<uint64_t> requests_sent{0};

// DBD_FINI: commits (or rolls back) the connection's database transaction. slurmdbd
// answers it like any request, so it counts as one.
int end_transaction(void* db_conn, bool commit) {
  ++requests_sent;
  return slurmdb_connection_commit(db_conn, commit);
}

// Rows read with steps, by (cluster, job id), for recent_final_record; kept two minutes.
struct RecentRows {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, std::pair<TimeUs, std::vector<AccountingRecord>>> rows;
};
RecentRows& recent_rows() {
  static RecentRows recent;
  return recent;
}
void remember_rows(const std::string& cluster, const std::map<std::string, std::vector<AccountingRecord>>& by_id) {
  constexpr TimeUs kKept = 120 * 1000000LL;
  const TimeUs now = wall_clock_us();
  RecentRows& recent = recent_rows();
  std::lock_guard lock(recent.mutex);
  std::erase_if(recent.rows, [&](const auto& entry) { return now - entry.second.first >= kKept; });
  for (const auto& [id, rows] : by_id) recent.rows[{cluster, id}] = {now, rows};
}

// --- RAII for libslurm handles -------------------------------------------------------

struct ListDeleter {
  void operator()(xlist* list) const { slurm_list_destroy(list); }
};
using ListPtr = std::unique_ptr<xlist, ListDeleter>;

struct ListIteratorDeleter {
  void operator()(listIterator* it) const { slurm_list_iterator_destroy(it); }
};
using ListIteratorPtr = std::unique_ptr<listIterator, ListIteratorDeleter>;

struct HostlistDeleter {
  void operator()(hostlist* hl) const { slurm_hostlist_destroy(hl); }
};
using HostlistPtr = std::unique_ptr<hostlist, HostlistDeleter>;

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};

// Calls fn(item) for every element of a slurm List.
template <typename T, typename Fn>
void for_each_item(xlist* list, Fn&& fn) {
  if (list == nullptr) return;
  ListIteratorPtr it(slurm_list_iterator_create(list));
  while (void* item = slurm_list_next(it.get())) fn(static_cast<T*>(item));
}

std::string text_or_empty(const char* s) { return s ? std::string(s) : std::string(); }

std::optional<TimeUs> time_us(time_t seconds) {
  // 0 = not yet; NO_VAL (and above) = never, e.g. the start of a job cancelled while pending.
  if (seconds <= 0 || seconds >= static_cast<time_t>(NO_VAL)) return std::nullopt;
  return static_cast<TimeUs>(seconds) * 1000000;
}

std::string last_slurm_error(const char* what) {
  int err = errno;
  return std::string(what) + ": " + (err ? slurm_strerror(err) : "unknown error");
}

std::optional<uint32_t> parse_u32(std::string_view text) {
  uint32_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The job condition that selects the jobs named by `refs` (all database rows of each).
// The condition lists borrow `cluster` and the steps, which must outlive the condition.
struct JobSelection {
  std::vector<slurm_selected_step_t> steps;
  slurmdb_job_cond_t cond{};
  ListPtr cluster_list{slurm_list_create(nullptr)};
  ListPtr step_list{slurm_list_create(nullptr)};

  JobSelection(const std::string& cluster, const std::vector<JobRef>& refs) : steps(refs.size()) {
    for (size_t i = 0; i < refs.size(); ++i) {
      slurm_selected_step_t& step = steps[i];
      step.step_id.job_id = refs[i].job_id;
      step.step_id.step_id = NO_VAL;
      step.step_id.step_het_comp = NO_VAL;
      step.array_task_id = refs[i].array_task_id.value_or(NO_VAL);
      step.het_job_offset = refs[i].het_job_offset.value_or(NO_VAL);
      slurm_list_append(step_list.get(), &step);
    }
    slurm_list_append(cluster_list.get(), const_cast<char*>(cluster.c_str()));
    cond.cluster_list = cluster_list.get();
    cond.step_list = step_list.get();
    // Mandatory: 0 would add "(flags & 0)" to the query and match no job at all.
    cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
  }
  JobSelection(const std::string& cluster, const JobRef& ref) : JobSelection(cluster, std::vector<JobRef>{ref}) {}
  JobSelection(const JobSelection&) = delete;
  JobSelection& operator=(const JobSelection&) = delete;
};

// Whether a row slurmdbd answered for `ref`'s selection is one of that id's rows. A plain
// id also matches every task of the array with that array job id: the job whose own (raw)
// id it is counts, as EpilogSlurmctld's SLURM_JOB_ID names it, and, for a het job, every
// component (a het job is judged as one, join_het_components).
bool row_of(const slurmdb_job_rec_t& job, const JobRef& ref) {
  if (ref.array_task_id) return job.array_job_id == ref.job_id && job.array_task_id == *ref.array_task_id;
  if (ref.het_job_offset) return job.het_job_id == ref.job_id && job.het_job_offset == *ref.het_job_offset;
  return job.jobid == ref.job_id || job.het_job_id == ref.job_id;
}

// Of one id's rows, oldest first: the newest row whose own id is the id asked for (a het
// job's first component), the one slurmdb_job_modify writes.
const AccountingRecord& commented_row(const std::vector<AccountingRecord>& rows) {
  for (auto row = rows.rbegin(); row != rows.rend(); ++row)
    if (!row->het_job_id || row->db_job_id == *row->het_job_id) return *row;
  return rows.back();
}

void sort_oldest_first(std::vector<AccountingRecord>& rows) {
  // Ties keep slurmdbd's order: a row's index is its attempt number.
  std::stable_sort(rows.begin(), rows.end(), [](const AccountingRecord& a, const AccountingRecord& b) {
    return a.submit.value_or(0) < b.submit.value_or(0);
  });
}

// States after which an attempt's row no longer changes. The requeue states name an
// attempt that ended and was put back in the queue (libslurm names the flag, as sacct
// -D shows the row): REQUEUED (scontrol requeue, --requeue after a node failure),
// REQUEUE_HOLD, SPECIAL_EXIT and REQUEUE_FED.
const std::set<std::string, std::less<>>& terminal_states() {
  static const std::set<std::string, std::less<>> states = {
      "COMPLETED", "CANCELLED",     "FAILED",   "TIMEOUT",      "NODE_FAIL",    "PREEMPTED",  "BOOT_FAIL",
      "DEADLINE",  "OUT_OF_MEMORY", "REQUEUED", "REQUEUE_HOLD", "SPECIAL_EXIT", "REQUEUE_FED"};
  return states;
}

// The terminal states Slurm requeues a job from: its next attempt may follow the row.
const std::set<std::string, std::less<>>& requeued_from() {
  static const std::set<std::string, std::less<>> states = {"REQUEUED",  "REQUEUE_HOLD", "SPECIAL_EXIT", "REQUEUE_FED",
                                                            "NODE_FAIL", "PREEMPTED",    "BOOT_FAIL"};
  return states;
}

std::string step_name(const slurm_step_id_t& id) {
  std::string out = std::to_string(id.job_id) + ".";
  switch (id.step_id) {
    case SLURM_BATCH_SCRIPT:
      out += "batch";
      break;
    case SLURM_EXTERN_CONT:
      out += "extern";
      break;
    case SLURM_INTERACTIVE_STEP:
      out += "interactive";
      break;
    default:
      out += std::to_string(id.step_id);
  }
  if (id.step_het_comp != NO_VAL) out += "+" + std::to_string(id.step_het_comp);
  return out;
}

// The node-level part of a step's task distribution, named as sacct names it.
std::string layout_name(uint32_t task_dist) {
  uint32_t base = task_dist & SLURM_DIST_STATE_BASE;
  if (base == SLURM_DIST_UNKNOWN) return "Unknown";
  if (base == SLURM_DIST_ARBITRARY) return "Arbitrary";
  if (base == SLURM_DIST_PLANE) return "Plane";
  switch (base & 0x000F) {  // node level of e.g. SLURM_DIST_BLOCK_CYCLIC
    case SLURM_DIST_NODECYCLIC:
      return "Cyclic";
    case SLURM_DIST_NODEBLOCK:
      return "Block";
    default:
      return "Unknown";
  }
}

StepRecord to_step(const slurmdb_step_rec_t& step) {
  StepRecord r;
  r.step_id = step_name(step.step_id);
  r.name = text_or_empty(step.stepname);
  r.state = text_or_empty(slurm_job_state_string(step.state & ~static_cast<uint32_t>(JOB_COMPLETING)));
  r.exit_code = static_cast<int>((static_cast<uint32_t>(step.exitcode) >> 8) & 0xff);
  r.signal = static_cast<int>(static_cast<uint32_t>(step.exitcode) & 0x7f);
  r.start = time_us(step.start);
  r.end = time_us(step.end);
  r.node_expr = text_or_empty(step.nodes);
  r.nodes = expand_hostlist(r.node_expr);
  r.ntasks = step.ntasks;
  r.layout = layout_name(step.task_dist);
  return r;
}

// The user name of `uid` on this host, or the uid as text (as sacct prints an unknown
// user). getpwuid_r: the collector may serve several jobs from different threads.
std::string user_name(uint32_t uid) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(size > 0 ? static_cast<size_t>(size) : 16384);
  struct passwd entry {};
  struct passwd* found = nullptr;
  while (true) {
    int rc = getpwuid_r(static_cast<uid_t>(uid), &entry, buffer.data(), buffer.size(), &found);
    if (rc == ERANGE && buffer.size() < (1u << 20)) {
      buffer.resize(buffer.size() * 2);
      continue;
    }
    if (rc == 0 && found != nullptr && found->pw_name != nullptr && found->pw_name[0] != '\0') return found->pw_name;
    return std::to_string(uid);
  }
}

AccountingRecord to_record(const slurmdb_job_rec_t& job, const std::string& asked_id, const std::string& cluster) {
  AccountingRecord r;
  r.job_id = asked_id;
  r.db_job_id = job.jobid;
  if (job.array_job_id != 0 && job.array_task_id != NO_VAL) {
    r.array_job_id = job.array_job_id;
    r.array_task_id = job.array_task_id;
  }
  if (job.het_job_id != 0 && job.het_job_offset != NO_VAL) {
    r.het_job_id = job.het_job_id;
    r.het_job_offset = job.het_job_offset;
  }
  r.cluster = job.cluster ? job.cluster : cluster;
  r.job_name = text_or_empty(job.jobname);
  r.completing = (job.state & JOB_COMPLETING) != 0;
  // Name without the COMPLETING flag (which would mask the base state); other flags such
  // as REQUEUED name themselves, as in sacct.
  r.state = text_or_empty(slurm_job_state_string(job.state & ~static_cast<uint32_t>(JOB_COMPLETING)));
  r.raw_exit_status = job.exitcode;
  r.exit_code = static_cast<int>((job.exitcode >> 8) & 0xff);
  r.signal = static_cast<int>(job.exitcode & 0x7f);
  r.submit = time_us(job.submit);
  r.start = time_us(job.start);
  r.end = time_us(job.end);
  r.node_expr = text_or_empty(job.nodes);
  r.nodes = expand_hostlist(r.node_expr);
  r.alloc_nodes = job.alloc_nodes;
  r.uid = job.uid;
  r.user = job.user ? std::string(job.user) : std::to_string(job.uid);
  r.partition = text_or_empty(job.partition);
  r.comment = text_or_empty(job.derived_es);
  r.admin_comment = text_or_empty(job.admin_comment);
  r.system_comment = text_or_empty(job.system_comment);
  r.reason = text_or_empty(state_reason_name(static_cast<job_state_reason>(job.state_reason_prev)));
  // slurmdbd keeps -1 (INFINITE once read) when nobody asked for the job to end; NO_VAL
  // is Slurm's other "not set".
  if (job.requid != INFINITE && job.requid != NO_VAL) {
    r.requid = job.requid;
    r.requser = user_name(job.requid);
  }
  if (job.steps != nullptr)
    for_each_item<slurmdb_step_rec_t>(job.steps, [&](slurmdb_step_rec_t* step) { r.steps.push_back(to_step(*step)); });
  return r;
}

}  // namespace

void init_libslurm_once() {
  static std::once_flag once;
  std::call_once(once, [] { slurm_init(nullptr); });  // reads SLURM_CONF or the default path
}

// --- job ids and hostlists ---------------------------------------------------------------

Result<JobRef> parse_job_ref(const std::string& text) {
  JobRef ref;
  std::string_view rest = text;
  size_t sep = rest.find_first_of("_+");
  auto job_id = parse_u32(rest.substr(0, sep));
  if (!job_id || *job_id == 0) {
    return Error{kSlurmdbBadJobId, "not a Slurm job id: '" + text + "'"};
  }
  ref.job_id = *job_id;
  if (sep != std::string_view::npos) {
    auto suffix = parse_u32(rest.substr(sep + 1));
    if (!suffix) return Error{kSlurmdbBadJobId, "not a Slurm job id: '" + text + "'"};
    if (rest[sep] == '_') {
      ref.array_task_id = *suffix;
    } else {
      ref.het_job_offset = *suffix;
    }
  }
  return ref;
}

namespace {

// "1-3,7" inside a hostlist's brackets: numbers and ascending ranges of them, each of at
// most kMaxRangeNames names (libslurm leaks on a descending range and on one it finds
// too long, fuzz/regressions/job_ended).
constexpr uint64_t kMaxRangeNames = 65536;  // libslurm's own limit (MAX_RANGE)

bool is_range_group(std::string_view group) {
  if (group.empty()) return false;
  for (size_t start = 0; start <= group.size();) {
    size_t end = group.find(',', start);
    if (end == std::string_view::npos) end = group.size();
    const std::string_view range = group.substr(start, end - start);
    const size_t dash = range.find('-');
    const std::string_view low = range.substr(0, dash);
    const std::string_view high = dash == std::string_view::npos ? low : range.substr(dash + 1);
    uint64_t low_value = 0;
    uint64_t high_value = 0;
    for (const auto& [digits, value] : {std::pair{low, &low_value}, std::pair{high, &high_value}}) {
      if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string_view::npos)
        return false;
      std::from_chars(digits.data(), digits.data() + digits.size(), *value);
    }
    if (low_value > high_value || high_value - low_value >= kMaxRangeNames) return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

bool is_hostlist(std::string_view text) {
  if (text.empty() || text == "None assigned") return true;
  bool name_started = false;  // since the last comma outside brackets
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[') {
      const size_t close = text.find(']', i);
      if (close == std::string_view::npos || !is_range_group(text.substr(i + 1, close - i - 1))) return false;
      i = close;
      name_started = true;
    } else if (c == ',') {
      if (!name_started) return false;
      name_started = false;
    } else if (c == ']' || static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      return false;
    } else {
      name_started = true;
    }
  }
  return name_started;
}

std::vector<std::string> expand_hostlist(const std::string& expr) {
  std::vector<std::string> names;
  if (expr.empty() || expr == "None assigned" || !is_hostlist(expr)) return names;
  HostlistPtr hl(slurm_hostlist_create(expr.c_str()));
  if (!hl) return names;
  while (names.size() < kMaxHostlistNames) {
    std::unique_ptr<char, FreeDeleter> name(slurm_hostlist_shift(hl.get()));
    if (!name) break;
    names.emplace_back(name.get());
  }
  return names;
}

// --- the record ------------------------------------------------------------------------

const std::string& AccountingRecord::comment_in(CommentField field) const {
  switch (field) {
    case CommentField::kAdminComment:
      return admin_comment;
    case CommentField::kSystemComment:
      return system_comment;
    case CommentField::kComment:
      break;
  }
  return comment;
}

bool AccountingRecord::has_ended() const { return !completing && terminal_states().contains(state) && end; }

bool AccountingRecord::is_final() const {
  if (!has_ended()) return false;
  // Never got nodes (cancelled while pending or held): nothing more will be written.
  // The lagging placeholder row always names at least the batch host.
  if (nodes.empty()) return true;
  // The placeholder row (JobName "allocation") names only the batch host and has no
  // allocation count yet (alloc_nodes 0). Recognising it by the count rather than the
  // name keeps a job that is really called "allocation" from never becoming final.
  return nodes.size() == alloc_nodes;
}

bool listed_in_window(const AccountingRecord& row, TimeUs since, TimeUs until) {
  constexpr TimeUs kSecondUs = 1000000;
  const TimeUs since_second = (since >= 0 ? since : since - (kSecondUs - 1)) / kSecondUs * kSecondUs;
  return row.has_ended() && *row.end >= since_second && *row.end < until;
}

size_t attempt_row(const std::vector<AccountingRecord>& rows, std::optional<TimeUs> ended_by) {
  auto later = [&](size_t a, size_t b) {  // is row a submitted after row b (ties: the later row)
    return rows[a].submit.value_or(0) >= rows[b].submit.value_or(0);
  };
  std::optional<size_t> newest, newest_started;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!newest || later(i, *newest)) newest = i;
    const bool started = rows[i].start && ended_by && *rows[i].start <= *ended_by;
    if (started && (!newest_started || later(i, *newest_started))) newest_started = i;
  }
  return newest_started.value_or(newest.value_or(0));
}

bool ended_without_requeue(std::string_view state) {
  return terminal_states().contains(state) && !requeued_from().contains(state);
}

void number_attempts(std::vector<AccountingRecord>& rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const AccountingRecord* before = i > 0 ? &rows[i - 1] : nullptr;
    const bool continues = before != nullptr && requeued_from().contains(before->state) && before->uid == rows[i].uid &&
                           before->job_name == rows[i].job_name;
    rows[i].requeue_count = continues ? before->requeue_count + 1 : 0;
    rows[i].job_submit = continues ? before->job_submit : rows[i].submit;
  }
}

std::map<int, std::string> step_rank_nodes(const StepRecord& step) {
  std::map<int, std::string> ranks;
  const size_t nodes = step.nodes.size();
  if (nodes == 0 || step.ntasks == 0) return ranks;
  if (step.ntasks == nodes) {  // one task per node: Block and Cyclic agree
    for (size_t r = 0; r < nodes; ++r) ranks[static_cast<int>(r)] = step.nodes[r];
    return ranks;
  }
  if (step.ntasks % nodes != 0) return ranks;
  const size_t per_node = step.ntasks / nodes;
  for (size_t r = 0; r < step.ntasks; ++r) {
    if (step.layout == "Block") {
      ranks[static_cast<int>(r)] = step.nodes[r / per_node];
    } else if (step.layout == "Cyclic") {
      ranks[static_cast<int>(r)] = step.nodes[r % nodes];
    } else {
      return {};
    }
  }
  return ranks;
}

std::map<int, std::string> job_rank_nodes(const std::vector<StepRecord>& steps) {
  const StepRecord* chosen = nullptr;
  for (const StepRecord& step : steps) {
    // Numbered steps only ("12.0", "12.3+1"): batch, extern and interactive run no ranks.
    std::string number = step.step_id.substr(step.step_id.find('.') + 1);
    if (number.empty() || !std::isdigit(static_cast<unsigned char>(number[0]))) continue;
    if (chosen == nullptr || step.ntasks > chosen->ntasks) chosen = &step;
  }
  return chosen ? step_rank_nodes(*chosen) : std::map<int, std::string>{};
}

int count_restarts(const std::vector<StepRecord>& steps) {
  // The step's number ("12.3" -> 3): slurmdbd's times are whole seconds, so the order of
  // quick steps is their numbers'. Batch, extern and interactive steps have none.
  auto number = [](const StepRecord& step) -> std::optional<unsigned long> {
    const char* text = step.step_id.c_str() + step.step_id.find('.') + 1;
    if (step.step_id.find('.') == std::string::npos || !std::isdigit(static_cast<unsigned char>(*text)))
      return std::nullopt;
    return std::strtoul(text, nullptr, 10);
  };
  auto failed = [](const StepRecord& step) {
    return step.state != "COMPLETED" && step.state != "RUNNING" && step.state != "PENDING" && step.end;
  };
  int restarts = 0;
  for (const StepRecord& step : steps) {
    const auto n = number(step);
    if (!n || !step.start) continue;
    const bool again = std::any_of(steps.begin(), steps.end(), [&](const StepRecord& before) {
      const auto m = number(before);
      return m && *m < *n && failed(before) && before.name == step.name && before.ntasks == step.ntasks &&
             *before.end <= *step.start;
    });
    if (again) ++restarts;
  }
  return restarts;
}

JobFacts AccountingRecord::to_job_facts() const {
  JobFacts facts;
  facts.job_id = job_id;
  facts.cluster = cluster;
  facts.attempt = requeue_count;
  facts.state = state;
  facts.exit_code = exit_code;
  facts.signal = signal;
  facts.start = start;
  facts.end = end;
  facts.nodes = nodes;
  facts.ranks = job_rank_nodes(steps);
  facts.uid = uid;
  facts.components = components;
  facts.restarts = count_restarts(steps);
  // The ids a node's logs name the attempt by (job_N, StepId=N.M): an array task's and a
  // het component's own, not the "N_T" / "N+O" the job is known by.
  if (db_job_id != 0) facts.allocation.slurm_ids.push_back(std::to_string(db_job_id));
  for (uint32_t id : component_db_ids)
    if (id != db_job_id) facts.allocation.slurm_ids.push_back(std::to_string(id));
  return facts;
}

AccountingRecord join_het_components(const std::vector<AccountingRecord>& rows, size_t chosen,
                                     const std::string& job_id) {
  const AccountingRecord& picked = rows[chosen];
  if (!picked.het_job_id) return picked;
  std::vector<const AccountingRecord*> members;
  for (const AccountingRecord& row : rows)
    if (row.het_job_id == picked.het_job_id && row.submit == picked.submit) members.push_back(&row);
  std::stable_sort(members.begin(), members.end(), [](const AccountingRecord* a, const AccountingRecord* b) {
    return a->het_job_offset.value_or(0) < b->het_job_offset.value_or(0);
  });
  AccountingRecord joint = *members.front();
  joint.job_id = job_id;
  joint.node_expr.clear();
  joint.nodes.clear();
  joint.alloc_nodes = 0;
  joint.steps.clear();
  const AccountingRecord* deciding = nullptr;
  bool all_final = true;
  for (const AccountingRecord* member : members) {
    // Node counts add up per component (is_final compares them), so a node two
    // components share is listed twice here; the pipeline keeps it once.
    joint.node_expr += (joint.node_expr.empty() ? "" : ",") + member->node_expr;
    joint.nodes.insert(joint.nodes.end(), member->nodes.begin(), member->nodes.end());
    joint.alloc_nodes += member->alloc_nodes;
    joint.steps.insert(joint.steps.end(), member->steps.begin(), member->steps.end());
    if (member->start && (!joint.start || *member->start < *joint.start)) joint.start = member->start;
    if (!member->end)
      joint.end.reset();
    else if (joint.end && *member->end > *joint.end)
      joint.end = member->end;
    all_final = all_final && member->is_final();
    if (deciding == nullptr && member->state != "COMPLETED") deciding = member;
    joint.component_db_ids.push_back(member->db_job_id);
    joint.components.push_back(
        {std::to_string(*member->het_job_id) + "+" + std::to_string(member->het_job_offset.value_or(0)), member->state,
         member->exit_code, member->signal, member->nodes});
  }
  if (deciding != nullptr) {
    joint.state = deciding->state;
    joint.raw_exit_status = deciding->raw_exit_status;
    joint.exit_code = deciding->exit_code;
    joint.signal = deciding->signal;
    joint.reason = deciding->reason;
    joint.requid = deciding->requid;
    joint.requser = deciding->requser;
  }
  joint.completing = joint.completing || !all_final;  // one component still ending: not final
  return joint;
}

// --- the connection ----------------------------------------------------------------------

Result<std::unique_ptr<SlurmdbdConnection>> SlurmdbdConnection::open() {
  init_libslurm_once();
  errno = 0;
  ++requests_sent;  // the connection's init message, answered by slurmdbd
  void* db_conn = slurmdb_connection_get(nullptr);
  // Like sacct: the handle can be returned even when slurmdbd was unreachable; errno tells.
  if (db_conn == nullptr || errno != 0) {
    Error error{kSlurmdbConnection, last_slurm_error("cannot connect to slurmdbd")};
    if (db_conn != nullptr) slurmdb_connection_close(&db_conn);
    return error;
  }
  return std::unique_ptr<SlurmdbdConnection>(new SlurmdbdConnection(db_conn));
}

SlurmdbdConnection::~SlurmdbdConnection() {
  if (db_conn_ != nullptr) slurmdb_connection_close(&db_conn_);
}

Result<std::vector<AccountingRecord>> SlurmdbdConnection::rows_of(const std::string& cluster, const std::string& job_id,
                                                                  bool with_steps) {
  auto ref = parse_job_ref(job_id);
  if (!ref) return ref.error();

  JobSelection selection(cluster, *ref);
  // DUP: every database row of this job id, one per attempt (attempt_row).
  selection.cond.flags = JOBCOND_FLAG_NO_TRUNC | JOBCOND_FLAG_DUP | (with_steps ? 0 : JOBCOND_FLAG_NO_STEP);

  errno = 0;
  ++requests_sent;
  ListPtr jobs(slurmdb_jobs_get(db_conn_, &selection.cond));
  // slurmdbd answers inside a database transaction that stays open on this connection;
  // without ending it every later read sees the same snapshot (a job that ends after the
  // first read would never appear final).
  end_transaction(db_conn_, false);
  if (!jobs) {
    return Error{kSlurmdbQuery, last_slurm_error(("reading job " + job_id + " from slurmdbd").c_str())};
  }
  // A task's or component's selection answers its own rows (and, for a task of an array
  // still pending as one row, that row); a plain id's is filtered (row_of).
  const bool plain_id = !ref->array_task_id && !ref->het_job_offset;
  std::vector<AccountingRecord> rows;
  for_each_item<slurmdb_job_rec_t>(jobs.get(), [&](slurmdb_job_rec_t* job) {
    if (!plain_id || row_of(*job, *ref)) rows.push_back(to_record(*job, job_id, cluster));
  });
  if (rows.empty()) {
    return Error{kSlurmdbNotFound, "slurmdbd has no record of job " + job_id + " on cluster " + cluster};
  }
  sort_oldest_first(rows);
  number_attempts(rows);
  if (with_steps) remember_rows(cluster, {{job_id, rows}});
  return rows;
}

Result<std::vector<AccountingRecord>> SlurmdbdConnection::job_attempts(const std::string& cluster,
                                                                       const std::string& job_id) {
  auto rows = rows_of(cluster, job_id, /*with_steps=*/false);
  if (!rows) return rows.error();
  std::vector<AccountingRecord> out;
  for (size_t i = 0; i < rows->size(); ++i) {
    // A het job is one attempt, read through its first component.
    if ((*rows)[i].het_job_offset.value_or(0) != 0) continue;
    AccountingRecord attempt = join_het_components(*rows, i, job_id);
    if (attempt.has_ended()) out.push_back(std::move(attempt));
  }
  return out;
}

uint64_t slurmdbd_requests() { return requests_sent.load(); }

std::optional<AccountingRecord> recent_final_record(const std::string& cluster, const std::string& job_id,
                                                    std::optional<TimeUs> ended_by, TimeUs max_age) {
  std::vector<AccountingRecord> rows;
  {
    RecentRows& recent = recent_rows();
    std::lock_guard lock(recent.mutex);
    auto it = recent.rows.find({cluster, job_id});
    if (it == recent.rows.end() || wall_clock_us() - it->second.first >= max_age) return std::nullopt;
    rows = it->second.second;
  }
  AccountingRecord record = pick_attempt(std::move(rows), job_id, ended_by);
  if (!record.is_final()) return std::nullopt;
  return record;
}

AccountingRecord pick_attempt(std::vector<AccountingRecord> rows, const std::string& job_id,
                              std::optional<TimeUs> ended_by) {
  // The rows are numbered; the comment fields are read from the row a comment write changes.
  const AccountingRecord* commented = &commented_row(rows);
  std::string comment = commented->comment;
  std::string admin_comment = commented->admin_comment;
  std::string system_comment = commented->system_comment;
  const size_t chosen = attempt_row(rows, ended_by);
  // Strictly later submits: a het job's components share their attempt's submit.
  const TimeUs chosen_submit = rows[chosen].submit.value_or(0);
  constexpr TimeUs kClockSlack = 1000000;  // a slurmd Epilog's time is its node's clock
  const bool later_row_after_hook = std::any_of(rows.begin(), rows.end(), [&](const AccountingRecord& row) {
    const TimeUs submit = row.submit.value_or(0);
    if (submit <= chosen_submit) return false;
    return row.start || row.end || (ended_by && submit > *ended_by + kClockSlack);
  });
  // "H+O" asks for one component (an older hook's report): read as it is.
  AccountingRecord record =
      job_id.find('+') == std::string::npos ? join_het_components(rows, chosen, job_id) : std::move(rows[chosen]);
  record.comment = std::move(comment);
  record.admin_comment = std::move(admin_comment);
  record.system_comment = std::move(system_comment);
  record.other_rows = rows.size() > 1;
  record.later_row_after_hook = later_row_after_hook;
  return record;
}

Result<AccountingRecord> SlurmdbdConnection::read_job(const std::string& cluster, const std::string& job_id,
                                                      bool with_steps, std::optional<TimeUs> ended_by) {
  auto found = rows_of(cluster, job_id, with_steps);
  if (!found) return found.error();
  return pick_attempt(std::move(*found), job_id, ended_by);
}

Result<std::map<std::string, std::vector<AccountingRecord>>> SlurmdbdConnection::array_task_rows(
    const std::string& cluster, uint32_t array_job_id, bool with_steps) {
  // A plain id: every task of the array.
  JobSelection selection(cluster, JobRef{.job_id = array_job_id, .array_task_id = {}, .het_job_offset = {}});
  selection.cond.flags = JOBCOND_FLAG_NO_TRUNC | JOBCOND_FLAG_DUP | (with_steps ? 0 : JOBCOND_FLAG_NO_STEP);
  errno = 0;
  ++requests_sent;
  ListPtr jobs(slurmdb_jobs_get(db_conn_, &selection.cond));
  end_transaction(db_conn_, false);  // see rows_of: end the read's transaction
  const std::string id = std::to_string(array_job_id);
  if (!jobs) return Error{kSlurmdbQuery, last_slurm_error(("reading array " + id + " from slurmdbd").c_str())};
  std::map<std::string, std::vector<AccountingRecord>> tasks;
  for_each_item<slurmdb_job_rec_t>(jobs.get(), [&](slurmdb_job_rec_t* job) {
    if (job->array_job_id != array_job_id || job->array_task_id == NO_VAL) return;
    const std::string task = id + "_" + std::to_string(job->array_task_id);
    tasks[task].push_back(to_record(*job, task, cluster));
  });
  for (auto& [task, rows] : tasks) {  // as rows_of orders and numbers one id's rows
    sort_oldest_first(rows);
    number_attempts(rows);
  }
  if (with_steps) remember_rows(cluster, tasks);
  return tasks;
}

Result<std::vector<AccountingRecord>> SlurmdbdConnection::ended_attempts(const std::string& cluster, TimeUs since,
                                                                         TimeUs until) {
  slurmdb_job_cond_t cond{};
  ListPtr cluster_list(slurm_list_create(nullptr));
  slurm_list_append(cluster_list.get(), const_cast<char*>(cluster.c_str()));
  cond.cluster_list = cluster_list.get();
  cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;  // mandatory (see JobSelection)
  // Jobs that ran (were eligible) during the window, every row of each (DUP): the rows
  // that ended inside it are kept below.
  cond.usage_start = static_cast<time_t>(since / 1000000);
  cond.usage_end = static_cast<time_t>(until / 1000000) + 1;
  cond.flags = JOBCOND_FLAG_NO_TRUNC | JOBCOND_FLAG_DUP | JOBCOND_FLAG_NO_STEP;
  errno = 0;
  ++requests_sent;
  ListPtr jobs(slurmdb_jobs_get(db_conn_, &cond));
  end_transaction(db_conn_, false);  // see rows_of: end the read's transaction
  if (!jobs) return Error{kSlurmdbQuery, last_slurm_error("listing the jobs that ended")};
  std::vector<AccountingRecord> out;
  for_each_item<slurmdb_job_rec_t>(jobs.get(), [&](slurmdb_job_rec_t* job) {
    std::string id = std::to_string(job->jobid);
    if (job->array_job_id != 0 && job->array_task_id != NO_VAL)
      id = std::to_string(job->array_job_id) + "_" + std::to_string(job->array_task_id);
    else if (job->het_job_id != 0 && job->het_job_offset != NO_VAL && job->het_job_offset != 0)
      return;  // a het job is one attempt: reported once, by its first component, as "H"
    else if (job->het_job_id != 0)
      id = std::to_string(job->het_job_id);
    AccountingRecord record = to_record(*job, id, cluster);
    if (listed_in_window(record, since, until)) out.push_back(std::move(record));
  });
  return out;
}

Status SlurmdbdConnection::modify_comment(const std::string& cluster, const std::string& job_id,
                                          const std::string& comment, CommentField field) {
  auto ref = parse_job_ref(job_id);
  if (!ref) return ref.error();

  JobSelection selection(cluster, *ref);
  slurmdb_job_rec_t change{};
  change.derived_ec = NO_VAL;  // mandatory: 0 would overwrite the derived exit code
  // slurmdbd updates each of the three when set (checked on 22.05 and 24.11).
  char* text = const_cast<char*>(comment.c_str());
  switch (field) {
    case CommentField::kComment:
      change.derived_es = text;
      break;
    case CommentField::kAdminComment:
      change.admin_comment = text;
      break;
    case CommentField::kSystemComment:
      change.system_comment = text;
      break;
  }

  errno = 0;
  ++requests_sent;
  ListPtr modified(slurmdb_job_modify(db_conn_, &selection.cond, &change));
  if (modified && slurm_list_count(modified.get()) > 0) return ok_status();
  if (modified || errno == 0 || errno == SLURM_NO_CHANGE_IN_DATA)
    return Error{kSlurmdbNotFound, "slurmdbd modified no record for job " + job_id + " on cluster " + cluster};
  return Error{
      kSlurmdbQuery,
      last_slurm_error(("writing the " + std::string(comment_field_name(field)) + " of job " + job_id).c_str())};
}

Status SlurmdbdConnection::write_comment(const std::string& cluster, const std::string& job_id,
                                         const std::string& comment, CommentField field) {
  Status written = modify_comment(cluster, job_id, comment, field);
  if (!written) {
    const int err = errno;
    end_transaction(db_conn_, false);
    errno = err;
    return written;
  }
  if (end_transaction(db_conn_, true) != SLURM_SUCCESS)
    return Error{
        kSlurmdbQuery,
        last_slurm_error(("committing the " + std::string(comment_field_name(field)) + " of job " + job_id).c_str())};
  return ok_status();
}

Status SlurmdbdConnection::probe_comment_write(const std::string& cluster, CommentField field) {
  Status written = modify_comment(cluster, kNoSuchJobId, "attrib-doctor dry run", field);
  const int err = errno;
  end_transaction(db_conn_, false);
  errno = err;
  if (written || written.error().code == kSlurmdbNotFound) return ok_status();
  return written;
}

std::vector<Status> SlurmdbdConnection::write_comments(const std::vector<CommentWrite>& writes, CommentField field) {
  std::vector<Status> out(writes.size(), ok_status());
  std::vector<size_t> written;
  for (size_t i = 0; i < writes.size(); ++i) {
    out[i] = modify_comment(writes[i].cluster, writes[i].job_id, writes[i].comment, field);
    if (out[i]) {
      written.push_back(i);
    } else if (out[i].error().code == kSlurmdbQuery) {
      // slurmdbd failed mid-transaction: nothing of it is kept, every write is tried again.
      end_transaction(db_conn_, false);
      for (size_t j = 0; j < writes.size(); ++j)
        if (out[j]) out[j] = out[i];
      return out;
    }
  }
  if (written.empty()) {
    end_transaction(db_conn_, false);
    return out;
  }
  // Read back inside the transaction, which sees its own writes: one request per cluster
  // for every job written, instead of one a job after the commit.
  std::map<std::string, std::vector<size_t>> by_cluster;
  for (size_t i : written) by_cluster[writes[i].cluster].push_back(i);
  for (const auto& cluster_and_indexes : by_cluster) {
    // Named references, not a structured binding: clang before 16 cannot capture those in
    // the lambda below.
    const std::string& cluster = cluster_and_indexes.first;
    const std::vector<size_t>& indexes = cluster_and_indexes.second;
    std::vector<JobRef> refs;
    for (size_t i : indexes) refs.push_back(*parse_job_ref(writes[i].job_id));
    JobSelection selection(cluster, refs);
    selection.cond.flags = JOBCOND_FLAG_NO_TRUNC | JOBCOND_FLAG_DUP | JOBCOND_FLAG_NO_STEP;
    errno = 0;
    ++requests_sent;
    ListPtr jobs(slurmdb_jobs_get(db_conn_, &selection.cond));
    if (!jobs) {
      Error failed{kSlurmdbQuery, last_slurm_error("reading the written comments back from slurmdbd")};
      end_transaction(db_conn_, false);
      for (size_t i : written) out[i] = failed;
      return out;
    }
    std::vector<std::vector<AccountingRecord>> rows(indexes.size());
    for_each_item<slurmdb_job_rec_t>(jobs.get(), [&](slurmdb_job_rec_t* job) {
      for (size_t k = 0; k < indexes.size(); ++k)
        if (row_of(*job, refs[k])) rows[k].push_back(to_record(*job, writes[indexes[k]].job_id, cluster));
    });
    for (size_t k = 0; k < indexes.size(); ++k) {
      const CommentWrite& write = writes[indexes[k]];
      if (rows[k].empty()) {
        out[indexes[k]] = Error{kCommentVerify, "slurmdbd has no record of job " + write.job_id + " to read back"};
        continue;
      }
      sort_oldest_first(rows[k]);
      const std::string& kept = commented_row(rows[k]).comment_in(field);
      if (kept != write.comment) out[indexes[k]] = comment_not_kept(kept);
    }
  }
  if (end_transaction(db_conn_, true) != SLURM_SUCCESS) {
    Error failed{kSlurmdbQuery, last_slurm_error("committing the written comments")};
    for (size_t i : written) out[i] = failed;
  }
  return out;
}

}  // namespace attrib::slurm
