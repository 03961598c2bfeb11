// What attribution needs from Slurm's accounting: the job's final record (to scope it)
// and a place to write the verdict's comment. slurmdbd serves both in production
// (slurmdbd_accounting.cpp); a recorded-bundle implementation serves benchmarks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/types.h"

namespace attrib::slurm {

// The job field that holds the verdict's segment (head.comment_field). Comment is what
// users see first, but users write it too (--comment, scontrol update), so a segment there
// may be theirs until attrib replaces it; AdminComment only operators and admins can
// write; SystemComment only slurmctld and slurmdbd clients such as attrib.
enum class CommentField { kComment, kAdminComment, kSystemComment };

// "Comment", "AdminComment" or "SystemComment" (as sacct names the fields); nullopt else.
std::optional<CommentField> comment_field_named(const std::string& name);
const char* comment_field_name(CommentField field);

struct JobRecordFacts {
  JobFacts facts;       // state, exit code/signal, start/end, nodes, attempt
  std::string comment;  // the job's current text in the configured CommentField (for Comment: the user's
                        // --comment plus any attrib segment)
  bool final = false;   // the record has stopped changing (see slurmdbd lag)
  // How the job ended is there (state, exit code, end), though the allocation may still
  // lag: enough when the hook names the job's nodes (AccountingRecord::has_ended). Only
  // for an id's sole row: a later attempt's number needs its row to be final.
  bool ended = false;
  // When the attempt's row was submitted: with the job id, what tells one attempt from
  // another (a requeue adds a row, and so does a new job that reuses the id).
  std::optional<TimeUs> submit;
  // When its job's first attempt was submitted (slurm::number_attempts): attempts of one
  // job share it; a later job that reuses the id does not.
  std::optional<TimeUs> job_submit;
  // The id has this row alone, so it is also the row a comment write changes (slurmdbd
  // writes an id's newest row): its comment may stand for a fresh read of the job.
  bool sole_row = false;
  // A row of the id submitted after this one shows that it came after the hook this row
  // was read for, by its time (AccountingRecord::later_row_after_hook): the report is of
  // this row's attempt, not of a next attempt slurmdbd has not recorded yet.
  bool later_row_after_hook = false;
};

// One job's comment field, as a whole, to be written (Accounting::write_comments).
struct CommentWrite {
  std::string cluster;
  std::string job_id;
  std::string comment;
};

// What write_comments answers for a comment that slurmdbd answered for but did not keep
// (kCommentVerify), naming what the field holds instead.
Error comment_not_kept(const std::string& kept);

class Accounting {
 public:
  virtual ~Accounting() = default;
  // The job's newest attempt; error code kSlurmdbNotFound when slurmdbd does not (yet)
  // know the job. The comment is always the job's current one.
  virtual Result<JobRecordFacts> read_job(const std::string& cluster, const std::string& job_id) = 0;
  // The attempt that had started by `attempt_time` (slurm::attempt_row): its start, or
  // when its hook ran. For a requeued job that is not the newest row, which is the next
  // attempt, still pending. An accounting without attempts answers with the job.
  // `reported_at`: when the head received the attempt's report, on the head's own clock
  // (a read made after it holds the attempt's row; see SlurmdbdAccounting's array reads).
  virtual Result<JobRecordFacts> read_attempt(const std::string& cluster, const std::string& job_id,
                                              std::optional<TimeUs> attempt_time,
                                              std::optional<TimeUs> reported_at = std::nullopt) {
    (void)attempt_time, (void)reported_at;
    return read_job(cluster, job_id);
  }
  virtual Status write_comment(const std::string& cluster, const std::string& job_id, const std::string& comment) = 0;
  // Writes each job's comment and reads it back: one status per write, in order; error
  // kCommentVerify when the job's field then holds other text (slurmdbd can answer success
  // for a change it did not keep: TEXT cut at 65,535 bytes, a row changed meanwhile). This
  // default writes and reads each job alone (two requests a job). slurmdbd's accounting
  // writes them all in one transaction, read back in one request and committed once.
  virtual std::vector<Status> write_comments(const std::vector<CommentWrite>& writes);
  // Every attempt of one job id whose record shows how it ended, final or not yet
  // (attrib-show --attribute).
  virtual Result<std::vector<JobRecordFacts>> job_attempts(const std::string& cluster, const std::string& job_id) {
    (void)cluster, (void)job_id;
    return Error{kSlurmdbQuery, "this accounting cannot list a job's attempts"};
  }
  // The attempts whose record shows their end in [since, until), final or not yet (the
  // head's sweep for jobs no hook reported, and attrib-show --backfill). An accounting that
  // cannot list says so.
  virtual Result<std::vector<JobRecordFacts>> ended_attempts(const std::string& cluster, TimeUs since, TimeUs until) {
    (void)cluster, (void)since, (void)until;
    return Error{kSlurmdbQuery, "this accounting cannot list ended jobs"};
  }
};

}  // namespace attrib::slurm
