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

struct JobRecordFacts {
  JobFacts facts;       // state, exit code/signal, start/end, nodes, attempt
  std::string comment;  // the job's current Comment (the user's --comment plus any attrib segment)
  bool final = false;   // the record has stopped changing (see slurmdbd lag)
};

class Accounting {
 public:
  virtual ~Accounting() = default;
  // Error code kSlurmdbNotFound when slurmdbd does not (yet) know the job.
  virtual Result<JobRecordFacts> read_job(const std::string& cluster, const std::string& job_id) = 0;
  virtual Status write_comment(const std::string& cluster, const std::string& job_id, const std::string& comment) = 0;
};

}  // namespace attrib::slurm
