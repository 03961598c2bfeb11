// The Slurm job field that shows the verdict: this file decides what is written there.
//
// The whole path, in the order a verdict takes it:
// - core/comment.h renders the one-line "attrib: ..." segment from the verdict and merges
//   it into the field's text without touching the user's own words;
// - slurm/comment_field.cpp names the field (head.comment_field: Comment, AdminComment or
//   SystemComment) as slurmdbd and sacct name it;
// - here, comment_to_write decides whether and what to write for a run: not for a job that
//   reused the id since, not over a later attempt's segment attrib wrote;
// - slurm::Accounting::write_comments (slurm/slurmdbd_accounting.cpp) writes each field
//   through slurmdbd as SlurmUser and reads it back (COMMENT_E_VERIFY when not
//   kept); attribution.cpp's write_staged_comments batches the writes and retries.
#pragma once

#include <optional>
#include <string>

#include "attributiond/store/job_store.h"
#include "core/result.h"
#include "slurm/accounting.h"

namespace attrib::pipeline {

// The job's comment field with the verdict's segment in it, keeping the text already there
// (the user's); nullopt when nothing is to be written. `scoped`: the record this run
// scoped the job with, which serves as the text already there when it is the id's only
// row (the row the write changes): one slurmdbd read less per job.
Result<std::optional<std::string>> comment_to_write(slurm::Accounting& accounting, store::JobStore& store,
                                                    const store::JobKey& key, const std::string& segment,
                                                    std::optional<TimeUs> attempt_submit,
                                                    const std::optional<slurm::JobRecordFacts>& scoped);

}  // namespace attrib::pipeline
