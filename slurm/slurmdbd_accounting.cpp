#include "slurm/slurmdbd_accounting.h"

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

Result<JobRecordFacts> SlurmdbdAccounting::read_job(const std::string& cluster, const std::string& job_id) {
  return read_attempt(cluster, job_id, std::nullopt);
}

Result<JobRecordFacts> SlurmdbdAccounting::read_attempt(const std::string& cluster, const std::string& job_id,
                                                        std::optional<TimeUs> attempt_time) {
  if (auto s = connect(); !s) return s.error();
  // With steps: the application step's layout maps "[rankN]:" lines to their nodes.
  auto record = connection_->read_job(cluster, job_id, /*with_steps=*/true, attempt_time);
  if (!record) {
    if (record.error().code != kSlurmdbNotFound) connection_.reset();
    return record.error();
  }
  JobRecordFacts out;
  out.facts = record->to_job_facts();
  out.comment = record->comment_in(field_);
  out.final = record->is_final();
  out.ended = record->has_ended() && !record->other_rows;
  out.submit = record->submit;
  out.job_submit = record->job_submit;
  out.sole_row = !record->other_rows;
  return out;
}

namespace {

// An attempt's final row as the sweep and the backfill compare it with the archive.
std::vector<JobRecordFacts> attempt_facts(const std::vector<AccountingRecord>& rows, CommentField field) {
  std::vector<JobRecordFacts> out;
  for (const AccountingRecord& row : rows) {
    JobRecordFacts facts;
    facts.facts = row.to_job_facts();
    facts.comment = row.comment_in(field);
    facts.final = true;
    facts.ended = true;
    facts.submit = row.submit;
    facts.job_submit = row.job_submit;
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

}  // namespace attrib::slurm
