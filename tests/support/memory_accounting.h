// slurmdbd as unit tests need it: one in-memory stand-in for slurm::Accounting, shared by
// every test that replaces slurmdbd (the real one is exercised by the e2e suite and the
// slurmdbd client's own tests). Tests arrange and inspect it through MemoryAccounting::State.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/types.h"
#include "slurm/accounting.h"

namespace attrib::test {

class MemoryAccounting : public slurm::Accounting {
 public:
  struct State {
    std::mutex mutex;
    std::map<std::string, slurm::JobRecordFacts> records;  // by job id; a missing one is not found
    // The record turns final only after this many reads, like slurmdbd's row that lags the
    // hook by seconds; unset: each record is as final as the test made it.
    std::optional<int> lag_reads = 0;
    // What ended_attempts lists (the sweep), by the attempt's end.
    std::vector<slurm::JobRecordFacts> ended;
    // Simulated time (scoping tests), when `now` is set: slurmdbd cannot be reached before
    // reachable_from, and before final_from a row is as slurmctld left it before the job
    // ended (RUNNING, not final).
    const TimeUs* now = nullptr;
    TimeUs reachable_from = 0;
    TimeUs final_from = 0;
    // What the tests read back.
    std::map<std::string, int> reads;
    int comment_writes = 0;
    std::map<std::string, int> comment_writes_by_job;
    std::vector<size_t> comment_batches;    // the size of each write_comments call
    std::set<std::string> drop_next_write;  // answered success, not kept (once)
  };

  explicit MemoryAccounting(std::shared_ptr<State> state = std::make_shared<State>()) : state_(std::move(state)) {}
  State& state() { return *state_; }

  Result<slurm::JobRecordFacts> read_job(const std::string& cluster, const std::string& job_id) override {
    std::lock_guard lock(state_->mutex);
    const int reads = ++state_->reads[job_id];
    if (state_->now != nullptr && *state_->now < state_->reachable_from)
      return Error{kSlurmdbConnection, "cannot connect to slurmdbd: Connection refused"};
    auto it = state_->records.find(job_id);
    if (it == state_->records.end())
      return Error{kSlurmdbNotFound, "slurmdbd has no record of job " + job_id + " on cluster " + cluster};
    slurm::JobRecordFacts record = it->second;
    if (state_->now != nullptr && *state_->now < state_->final_from) {
      record.final = false;
      record.facts.state = "RUNNING";
      record.facts.end.reset();
      return record;
    }
    if (state_->lag_reads) record.final = reads > *state_->lag_reads;
    return record;
  }
  Status write_comment(const std::string&, const std::string& job_id, const std::string& comment) override {
    std::lock_guard lock(state_->mutex);
    if (!state_->drop_next_write.erase(job_id)) state_->records[job_id].comment = comment;
    ++state_->comment_writes;
    ++state_->comment_writes_by_job[job_id];
    return ok_status();
  }
  std::vector<Status> write_comments(const std::vector<slurm::CommentWrite>& writes) override {
    {
      std::lock_guard lock(state_->mutex);
      state_->comment_batches.push_back(writes.size());
    }
    return Accounting::write_comments(writes);  // each written and read back
  }
  Result<std::vector<slurm::JobRecordFacts>> ended_attempts(const std::string&, TimeUs since, TimeUs until) override {
    std::lock_guard lock(state_->mutex);
    std::vector<slurm::JobRecordFacts> out;
    for (const auto& attempt : state_->ended)
      if (attempt.facts.end && *attempt.facts.end >= since && *attempt.facts.end < until) out.push_back(attempt);
    return out;
  }

 private:
  std::shared_ptr<State> state_;
};

}  // namespace attrib::test
