// Accounting served by the real slurmdbd (libslurm's slurmdb API).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "slurm/accounting.h"
#include "slurm/slurmdbd_client.h"

namespace attrib::slurm {

// One per worker thread; reconnects after an error. `comment` and write_comment are the
// job's `field` (head.comment_field).
class SlurmdbdAccounting : public Accounting {
 public:
  explicit SlurmdbdAccounting(CommentField field = CommentField::kComment);
  ~SlurmdbdAccounting() override;
  Result<JobRecordFacts> read_job(const std::string& cluster, const std::string& job_id) override;
  Result<JobRecordFacts> read_attempt(const std::string& cluster, const std::string& job_id,
                                      std::optional<TimeUs> attempt_time,
                                      std::optional<TimeUs> reported_at = std::nullopt) override;
  Status write_comment(const std::string& cluster, const std::string& job_id, const std::string& comment) override;
  // All in one slurmdbd transaction (SlurmdbdConnection::write_comments).
  std::vector<Status> write_comments(const std::vector<CommentWrite>& writes) override;
  Result<std::vector<JobRecordFacts>> ended_attempts(const std::string& cluster, TimeUs since, TimeUs until) override;
  Result<std::vector<JobRecordFacts>> job_attempts(const std::string& cluster, const std::string& job_id) override;

 private:
  Status connect();
  // A task of an array ("4242_7") from one read of the whole array (see read_attempt);
  // nullopt when that read cannot serve it.
  std::optional<Result<AccountingRecord>> from_array_read(const std::string& cluster, const JobRef& ref,
                                                          const std::string& job_id, std::optional<TimeUs> attempt_time,
                                                          TimeUs reported_at);

  CommentField field_;
  std::unique_ptr<slurm::SlurmdbdConnection> connection_;
  struct ArrayRead {
    TimeUs read_at = 0;
    std::map<std::string, std::vector<AccountingRecord>> tasks;
  };
  std::map<std::pair<std::string, uint32_t>, ArrayRead> arrays_;  // (cluster, array job id)
};

}  // namespace attrib::slurm
