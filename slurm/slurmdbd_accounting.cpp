#include "slurm/slurmdbd_accounting.h"

#include "core/clock.h"
#include "slurm/slurmdbd_client.h"

namespace attrib::slurm {

using slurm::SlurmdbdConnection;

SlurmdbdAccounting::SlurmdbdAccounting(CommentField field) : field_(field) {}
SlurmdbdAccounting::~SlurmdbdAccounting() = default;

// Connects lazily and again after any failure: slurmdbd restarts must not stall workers.
Status SlurmdbdAccounting::connect() {
  if (connection_) return ok_status();
  auto opened = SlurmdbdConnection::open();
  if (!opened) return opened.error();
  connection_ = std::move(*opened);
  return ok_status();
}

namespace {

JobRecordFacts facts_of(const AccountingRecord& record, CommentField field) {
  JobRecordFacts out;
  out.facts = record.to_job_facts();
  out.comment = record.comment_in(field);
  out.final = record.is_final();
  out.ended = record.has_ended() && !record.other_rows;
  out.submit = record.submit;
  out.job_submit = record.job_submit;
  out.sole_row = !record.other_rows;
  out.later_row_after_hook = record.later_row_after_hook;
  return out;
}

}  // namespace

Result<JobRecordFacts> SlurmdbdAccounting::read_job(const std::string& cluster, const std::string& job_id) {
  return read_attempt(cluster, job_id, std::nullopt);
}

Result<JobRecordFacts> SlurmdbdAccounting::read_attempt(const std::string& cluster, const std::string& job_id,
                                                        std::optional<TimeUs> attempt_time,
                                                        std::optional<TimeUs> reported_at) {
  if (auto s = connect(); !s) return s.error();
  std::optional<Result<AccountingRecord>> record;
  // An array task may be served by a read of its whole array.
  if (auto ref = parse_job_ref(job_id); ref && ref->array_task_id && !ref->het_job_offset && reported_at)
    record = from_array_read(cluster, *ref, job_id, attempt_time, *reported_at);
  // With steps: the application step's layout maps "[rankN]:" lines to their nodes.
  if (!record) record = connection_->read_job(cluster, job_id, /*with_steps=*/true, attempt_time);
  if (!*record) {
    if (record->error().code != kSlurmdbNotFound) connection_.reset();
    return record->error();
  }
  return facts_of(**record, field_);
}

// The tasks of an array end in a burst (a 10,000-task array ends 10,000 jobs), and each
// would cost a read of its own. When the head is behind (this task was reported more than
// kBehind ago: a queue has built up), one read of the whole array (array_task_rows) serves
// this task and is kept for a minute for the others: it serves every task reported before
// it (on the head's clock, so its ended row was there) whose row there is final, which no
// longer changes (a requeued task's later attempt is reported after the read, and read
// afresh). A head that keeps up reads each task alone: reading the whole array for every
// task of a trickle would cost slurmdbd the square of the array. Nor is the array read
// again within kReread of the last read: a task whose row was not final then (slurmdbd
// lags in a burst) is read alone.
std::optional<Result<AccountingRecord>> SlurmdbdAccounting::from_array_read(const std::string& cluster,
                                                                            const JobRef& ref,
                                                                            const std::string& job_id,
                                                                            std::optional<TimeUs> attempt_time,
                                                                            TimeUs reported_at) {
  constexpr TimeUs kLifetime = 60 * 1000000LL;
  constexpr TimeUs kBehind = 2 * 1000000LL;
  constexpr TimeUs kReread = 5 * 1000000LL;
  const TimeUs now = wall_clock_us();
  const auto key = std::make_pair(cluster, ref.job_id);
  auto kept = arrays_.find(key);
  if (kept != arrays_.end() && now - kept->second.read_at < kLifetime && reported_at < kept->second.read_at)
    if (auto rows = kept->second.tasks.find(job_id); rows != kept->second.tasks.end()) {
      AccountingRecord record = pick_attempt(rows->second, job_id, attempt_time);
      if (record.is_final()) return record;
    }
  if (now - reported_at < kBehind || (kept != arrays_.end() && now - kept->second.read_at < kReread))
    return std::nullopt;
  auto tasks = connection_->array_task_rows(cluster, ref.job_id, /*with_steps=*/true);
  if (!tasks) return std::nullopt;  // the task's own read says what is wrong
  std::erase_if(arrays_, [&](const auto& entry) { return now - entry.second.read_at >= kLifetime; });
  ArrayRead& read = arrays_[key] = ArrayRead{now, std::move(*tasks)};
  auto rows = read.tasks.find(job_id);
  if (rows == read.tasks.end())
    return Result<AccountingRecord>(
        Error{kSlurmdbNotFound, "slurmdbd has no record of job " + job_id + " on cluster " + cluster});
  return Result<AccountingRecord>(pick_attempt(rows->second, job_id, attempt_time));
}

namespace {

// An attempt's row, ended (listed_in_window, job_attempts), as the sweep and the backfill
// compare it with the archive; final or still without its allocation count. These rows
// are listed one by one, so whether the id has others is not known here.
std::vector<JobRecordFacts> attempt_facts(const std::vector<AccountingRecord>& rows, CommentField field) {
  std::vector<JobRecordFacts> out;
  for (const AccountingRecord& row : rows) {
    JobRecordFacts facts = facts_of(row, field);
    facts.final = row.is_final();
    facts.ended = true;
    facts.sole_row = false;
    out.push_back(std::move(facts));
  }
  return out;
}

}  // namespace

Result<std::vector<JobRecordFacts>> SlurmdbdAccounting::ended_attempts(const std::string& cluster, TimeUs since,
                                                                       TimeUs until) {
  if (auto s = connect(); !s) return s.error();
  auto rows = connection_->ended_attempts(cluster, since, until);
  if (!rows) {
    connection_.reset();
    return rows.error();
  }
  return attempt_facts(*rows, field_);
}

Result<std::vector<JobRecordFacts>> SlurmdbdAccounting::job_attempts(const std::string& cluster,
                                                                     const std::string& job_id) {
  if (auto s = connect(); !s) return s.error();
  auto rows = connection_->job_attempts(cluster, job_id);
  if (!rows) {
    if (rows.error().code != kSlurmdbNotFound) connection_.reset();
    return rows.error();
  }
  return attempt_facts(*rows, field_);
}

Status SlurmdbdAccounting::write_comment(const std::string& cluster, const std::string& job_id,
                                         const std::string& comment) {
  if (auto s = connect(); !s) return s;
  auto written = connection_->write_comment(cluster, job_id, comment, field_);
  if (!written && written.error().code != kSlurmdbNotFound) connection_.reset();
  return written;
}

std::vector<Status> SlurmdbdAccounting::write_comments(const std::vector<CommentWrite>& writes) {
  if (auto s = connect(); !s) return std::vector<Status>(writes.size(), s);
  std::vector<Status> out = connection_->write_comments(writes, field_);
  for (const Status& s : out)
    if (!s && s.error().code == kSlurmdbQuery) {
      connection_.reset();
      break;
    }
  return out;
}

}  // namespace attrib::slurm
