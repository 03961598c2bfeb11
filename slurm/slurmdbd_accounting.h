// Accounting served by the real slurmdbd (libslurm's slurmdb API).
#pragma once

#include <memory>

#include "slurm/accounting.h"

namespace attrib::slurm {
class SlurmdbdConnection;
}

namespace attrib::slurm {

// One per worker thread; reconnects after an error. `comment` and write_comment are the
// job's `field` (head.comment_field).
class SlurmdbdAccounting : public Accounting {
 public:
  explicit SlurmdbdAccounting(CommentField field = CommentField::kComment);
  ~SlurmdbdAccounting() override;
  Result<JobRecordFacts> read_job(const std::string& cluster, const std::string& job_id) override;
  Result<JobRecordFacts> read_attempt(const std::string& cluster, const std::string& job_id,
                                      std::optional<TimeUs> attempt_time) override;
  Status write_comment(const std::string& cluster, const std::string& job_id, const std::string& comment) override;
  Result<std::vector<JobRecordFacts>> ended_attempts(const std::string& cluster, TimeUs since, TimeUs until) override;
  Result<std::vector<JobRecordFacts>> job_attempts(const std::string& cluster, const std::string& job_id) override;

 private:
  Status connect();
  CommentField field_;
  std::unique_ptr<slurm::SlurmdbdConnection> connection_;
};

}  // namespace attrib::slurm
