// A small C++ client for Slurm's accounting daemon (slurmdbd), through libslurm's
// slurmdb API: read a job's accounting record, write the job's Comment.
//
// Why slurmdbd and not slurmctld: a finished job's comment can no longer be changed
// through slurmctld ("Job has already finished"), while slurmdb_job_modify() works at
// any time, also after slurmctld has purged the job. The record lags the job's end by
// seconds, so callers poll read_job() until AccountingRecord::is_final().
//
// Needs SLURM_CONF (or /etc/slurm/slurm.conf) naming the cluster's slurmdbd, and runs as
// root or SlurmUser to modify other users' jobs. A connection is not thread-safe: use
// one per thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/types.h"
#include "slurm/accounting.h"

namespace attrib::slurm {

// Error codes (attrib::Error::code) returned by this client.

// A job id as Slurm prints it: "4242", an array task "4242_7" (array job id 4242,
// task 7) or a heterogeneous job component "4242+1" (het job 4242, offset 1).
struct JobRef {
  uint32_t job_id = 0;
  std::optional<uint32_t> array_task_id;
  std::optional<uint32_t> het_job_offset;
};
Result<JobRef> parse_job_ref(const std::string& text);

// One job step as slurmdbd recorded it.
struct StepRecord {
  std::string step_id;  // "12.0", "12.batch", "12.extern", "12.interactive", "12.0+1" (het)
  std::string name;
  std::string state;  // COMPLETED FAILED CANCELLED OUT_OF_MEMORY NODE_FAIL ...
  int exit_code = 0;
  int signal = 0;
  std::optional<TimeUs> start;
  std::optional<TimeUs> end;
  std::string node_expr;
  std::vector<std::string> nodes;
  uint32_t ntasks = 0;
  std::string layout;  // node-level task distribution, as sacct's Layout: Block Cyclic
                       // Plane Arbitrary Unknown
};

// Task id (rank) -> node for one step, from its recorded layout. slurmdbd keeps the
// node list, the task count and the distribution, not where each task ran, so only
// layouts that those determine are mapped: one task per node, or an even Block or
// Cyclic split. Anything else (uneven, Plane, Arbitrary) gives an empty map rather than
// a guess.
std::map<int, std::string> step_rank_nodes(const StepRecord& step);

// Restarts inside the allocation: numbered steps that started after an earlier numbered
// step of the same name and task count had failed (a retry loop around srun: `for i in
// 1 2 3; do srun train && break; done`). A different step after a failure (a cleanup
// step) and the steps of a job that never failed are not restarts.
int count_restarts(const std::vector<StepRecord>& steps);

// The layout of the job's application step: the numbered step with the most tasks
// (ties: the earliest), whose ranks the job's "[rankN]:" / srun --label lines name.
// Empty when the record has no such step or its layout is not determined.
std::map<int, std::string> job_rank_nodes(const std::vector<StepRecord>& steps);

// What slurmdbd's job record says (steps only when asked for).
struct AccountingRecord {
  std::string job_id;                    // as asked for ("4242", "4242_7", "4242+1")
  uint32_t db_job_id = 0;                // the job's own (raw) id; differs from job_id for "N_T" / "N+O"
  std::optional<uint32_t> array_job_id;  // set for array tasks
  std::optional<uint32_t> array_task_id;
  std::optional<uint32_t> het_job_id;  // set for a heterogeneous job's components
  std::optional<uint32_t> het_job_offset;
  std::string cluster;
  std::string job_name;
  std::string state;             // COMPLETED FAILED TIMEOUT CANCELLED NODE_FAIL OUT_OF_MEMORY
                                 // PREEMPTED BOOT_FAIL DEADLINE PENDING RUNNING REQUEUED ...
  bool completing = false;       // the COMPLETING flag (epilogs still running)
  uint32_t raw_exit_status = 0;  // wait(2) status as stored
  int exit_code = 0;             // (status >> 8) & 0xff
  int signal = 0;                // status & 0x7f
  std::optional<TimeUs> submit;
  std::optional<TimeUs> start;     // epoch µs; absent when the job never started
  std::optional<TimeUs> end;       // epoch µs; absent while it runs
  std::string node_expr;           // as stored, e.g. "n[1-3]" or "None assigned"
  std::vector<std::string> nodes;  // node_expr expanded; empty when none assigned
  uint32_t alloc_nodes = 0;        // node count Slurm allocated
  std::string user;                // user name (uid as text when slurmdbd could not resolve it)
  uint32_t uid = 0;
  std::string partition;
  // Comment (derived_es), AdminComment and SystemComment; read_job takes all three from
  // the job's newest row, where slurmdbd writes them.
  std::string comment;
  std::string admin_comment;
  std::string system_comment;
  int requeue_count = 0;  // the attempt's number within its job (number_attempts)
  // read_job: the id has other rows (attempts, het components, an earlier job that had
  // the id). The placeholder row's JobName ("allocation") then misnumbers the attempt
  // until the row is final, so only an id's sole row is used before then.
  bool other_rows = false;
  // pick_attempt: a row of the id submitted after this one (the next attempt, or a later
  // job that reuses the id) shows that it came after the hook that ran at `ended_by`, so
  // that the hook's report is this row's: it has started (attempt_row picks the newest row
  // that had started by `ended_by`, so it started after that), it ended without starting
  // (cancelled while pending: it ran no hook), or it was submitted more than a second
  // after `ended_by` (a hook runs after its attempt's submit; the second allows for a
  // node's clock). slurmdbd records an id's rows in the order slurmctld sends them, so
  // the attempts before such a row are there, this one the newest that had started. (A
  // requeued job's next attempt is submitted once the attempt's EpilogSlurmctld and slurmd
  // Epilogs are done, cleanup_completing: a hook that ran twice meanwhile is shown.)
  // Without one, a next attempt whose row slurmdbd has not recorded yet (or not yet as
  // started) reads as this row.
  bool later_row_after_hook = false;
  std::optional<TimeUs> job_submit;  // submit of its job's first attempt: a job that reuses the id has its own
  std::string reason;                // why the job ended as it did (Slurm's last state reason), e.g. NonZeroExitCode
  std::optional<uint32_t> requid;    // uid that requested the cancel (slurmdbd's requid); absent when none is
                                     // recorded (Slurm stores -1, read back as INFINITE, or NO_VAL)
  std::string requser;               // requid's user name (getpwuid_r), or the uid as text when it has none
  std::vector<StepRecord> steps;     // read_job(..., with_steps = true) only
  std::vector<JobComponent> components;    // a het job read as a whole (join_het_components)
  std::vector<uint32_t> component_db_ids;  // the same: each component's own (raw) id

  // True when the record says how the job ended: a terminal state without the COMPLETING
  // flag, and an end time. slurmdbd may still be filling in the allocation (the
  // placeholder row below, for about 2.5 s after the end on the test cluster), which
  // matters only to a reader that takes the job's nodes from the record.
  bool has_ended() const;

  // True when the record has stopped changing: it has ended, and shows none of the signs
  // of the placeholder row slurmdbd shows for seconds after a job starts and ends
  // (JobName "allocation", only the batch host, alloc_nodes 0, PENDING). A job that never got nodes (cancelled while
  // pending) is final without nodes. Callers should still bound their polling.
  bool is_final() const;

  // The subset the rules engine uses.
  JobFacts to_job_facts() const;

  // The text of one of the three comment fields.
  const std::string& comment_in(CommentField field) const;
};

// Whether text is a hostlist as Slurm prints one: comma-separated names, each with
// bracketed groups of decimal numbers and ranges ("n[1-3,7],rack[1-2]-gpu[01-08]"). ""
// and "None assigned" are (empty) hostlists. libslurm's parser leaks on some malformed
// groups (fuzz/regressions/job_ended), so nothing else reaches it.
bool is_hostlist(std::string_view text);

// Expands a Slurm hostlist expression ("n[1-3],gpu07") into names, in order, at most
// kMaxHostlistNames of them (more is not a job's allocation).
// "", "None assigned" and text that is not a hostlist give an empty list.
inline constexpr size_t kMaxHostlistNames = 100000;
std::vector<std::string> expand_hostlist(const std::string& expr);

// Whether the sweep and the backfill list `row` for [since, until): it shows how its
// attempt ended (has_ended), and its end is in the window at slurmdbd's whole seconds.
// Not only a final row: slurmdbd fills in the allocation count seconds after the end (more
// under load), and a one-shot listing (attrib-show --backfill, --attribute) that skipped
// the row then never counted the attempt at all; the worker waits for the whole row. And
// `since` counts from the start of its second: an end is stored rounded down, so an
// attempt that ended in that second, after `since`, is not left out.
bool listed_in_window(const AccountingRecord& row, TimeUs since, TimeUs until);

// Which of a job id's database rows (sacct -D: one per attempt, and one per earlier job
// that had the id) is the attempt that had ended when the hook ran at `ended_by`: the
// newest row that had started by then. "Newest" alone is wrong for a requeued job: by
// the time its EpilogSlurmctld runs, the next attempt's row is already there, pending,
// and it stays pending until that hook is done. Without a time, or when no row had
// started by then (cancelled while pending), the newest row. Ties on submit keep the
// later row. Rows in any order; returns an index into rows (rows must not be empty).
size_t attempt_row(const std::vector<AccountingRecord>& rows, std::optional<TimeUs> ended_by);

// Whether a row in `state` shows that its attempt ended and its job was not requeued: a
// terminal state Slurm does not requeue from (COMPLETED FAILED CANCELLED TIMEOUT
// OUT_OF_MEMORY DEADLINE). No later attempt of the job follows such a row, but for an
// admin's `scontrol requeue` of the finished job, which turns the row REQUEUED (slurmctld
// sends that before the next attempt can start).
bool ended_without_requeue(std::string_view state);

// Numbers one job id's rows (sorted oldest first) as attempts of the jobs that had the id:
// a row continues the job of the row before it when that row ended in a state Slurm
// requeues from (REQUEUED, REQUEUE_HOLD, SPECIAL_EXIT, REQUEUE_FED, NODE_FAIL, PREEMPTED,
// BOOT_FAIL) and names the same user and job name. Any other row is a new job that reuses
// the id (MaxJobId wrapped, FirstJobId changed, slurmctld's state lost): attempt 0 again.
// Sets requeue_count and job_submit.
void number_attempts(std::vector<AccountingRecord>& rows);

// A heterogeneous job read as one (the joint verdict): the components of rows[chosen]'s
// het job and attempt (same het job id and submit time), in offset order, as one record
// named job_id: every component's nodes, steps and state in `components`; the state,
// exit code and signal of the first component that did not complete; the earliest start
// and the latest end. Final only when every component is. Any other row comes back as is.
AccountingRecord join_het_components(const std::vector<AccountingRecord>& rows, size_t chosen,
                                     const std::string& job_id);

// Of one job id's rows (sorted oldest first, numbered), the record SlurmdbdConnection::
// read_job answers: the attempt that had ended by `ended_by` (attempt_row; a het job's
// components joined), with the comment fields of the newest row the id itself names (the
// one slurmdb_job_modify writes) and other_rows and later_row_after_hook set. rows must
// not be empty.
AccountingRecord pick_attempt(std::vector<AccountingRecord> rows, const std::string& job_id,
                              std::optional<TimeUs> ended_by);

// The record of `job_id`'s attempt ended by `ended_by` (pick_attempt) from rows this
// process read with steps (a job's own read or its array's) less than `max_age` ago, when
// that attempt's row is final: such a row no longer changes. The head's slurm_accounting
// collector reads the job the head has just scoped; this saves slurmdbd the second read.
std::optional<AccountingRecord> recent_final_record(const std::string& cluster, const std::string& job_id,
                                                    std::optional<TimeUs> ended_by, TimeUs max_age);

// Requests this process has sent to slurmdbd, for the head's metrics, each one round trip:
// connections opened, job reads, comment writes, and the DBD_FINI that ends each read's or
// write's transaction (commits or rolls it back).
uint64_t slurmdbd_requests();

class SlurmdbdConnection {
 public:
  // Connects to the slurmdbd named by slurm.conf (calls slurm_init once per process).
  static Result<std::unique_ptr<SlurmdbdConnection>> open();
  ~SlurmdbdConnection();
  SlurmdbdConnection(const SlurmdbdConnection&) = delete;
  SlurmdbdConnection& operator=(const SlurmdbdConnection&) = delete;

  // The record of the job's attempt that had ended by `ended_by` (attempt_row), the newest
  // without it, with requeue_count set to its number and comment to the newest row's.
  // Error kSlurmdbNotFound when slurmdbd has none.
  Result<AccountingRecord> read_job(const std::string& cluster, const std::string& job_id, bool with_steps = false,
                                    std::optional<TimeUs> ended_by = std::nullopt);

  // Every task of the array `array_job_id` in one request: its rows (as rows_of gives
  // one id's) by task id as Slurm prints it ("4242_7"). An array's tasks end in a burst,
  // and one read serves them all.
  Result<std::map<std::string, std::vector<AccountingRecord>>> array_task_rows(const std::string& cluster,
                                                                               uint32_t array_job_id, bool with_steps);

  // Every row of one job id (one per attempt, and per earlier job that had the id) that
  // shows how its attempt ended (has_ended: final, or still without its allocation count),
  // oldest first; requeue_count is each row's attempt number.
  Result<std::vector<AccountingRecord>> job_attempts(const std::string& cluster, const std::string& job_id);

  // Every attempt whose row shows its end in [since, until) (listed_in_window): what the
  // head's sweep compares with the archive. job_id as Slurm prints it ("4242", "4242_7",
  // "4242+1"); requeue_count is not set (each row stands alone).
  Result<std::vector<AccountingRecord>> ended_attempts(const std::string& cluster, TimeUs since, TimeUs until);

  // Replaces the job's Comment (or the other `field`) with exactly `comment` (case, spaces
  // and punctuation kept; slurmdbd stores TEXT and cuts silently at 65,535 bytes). Error
  // kSlurmdbNotFound when no record matched.
  Status write_comment(const std::string& cluster, const std::string& job_id, const std::string& comment,
                       CommentField field = CommentField::kComment);

  // Several jobs' comments in one transaction: each written, all read back in one request
  // (per cluster) inside it, then committed once: N + 2 round trips where write_comment
  // and a read each cost 2 (the request, and DBD_FINI to commit or end the read). One
  // status per write, in order: kSlurmdbNotFound when no record matched, kCommentVerify
  // when the field holds other text; every write fails alike when slurmdbd does (the
  // transaction is rolled back).
  std::vector<Status> write_comments(const std::vector<CommentWrite>& writes,
                                     CommentField field = CommentField::kComment);

  // May this process write `field` at all? A write of the field of a job id no job can
  // have (kNoSuchJobId), in a transaction always rolled back: OK when slurmdbd took the
  // request and matched nothing, its error otherwise (a refused user, a failed request).
  // Changes no job: attrib-doctor's dry run.
  Status probe_comment_write(const std::string& cluster, CommentField field);
  // The largest id of a job's own 26 bits (a federation's cluster bits lie above them),
  // above MaxJobId's default (67,043,328), where slurmctld wraps its job ids.
  static constexpr const char* kNoSuchJobId = "67108863";

 private:
  // slurmdb_job_modify of one job's field, inside the connection's open transaction.
  Status modify_comment(const std::string& cluster, const std::string& job_id, const std::string& comment,
                        CommentField field);
  explicit SlurmdbdConnection(void* db_conn) : db_conn_(db_conn) {}
  // Every database row of the job id (DUP), oldest first, requeue_count its attempt number.
  Result<std::vector<AccountingRecord>> rows_of(const std::string& cluster, const std::string& job_id, bool with_steps);
  void* db_conn_;  // libslurm's opaque connection handle
};

// libslurm's slurm_init, once per process (shared with other libslurm users, e.g. the
// head daemon's node drainer).
void init_libslurm_once();

}  // namespace attrib::slurm
