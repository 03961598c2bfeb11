#include "attributiond/pipeline/job_comment.h"

#include <spdlog/spdlog.h>

#include "core/comment.h"
#include "core/json_text.h"

namespace attrib::pipeline {
namespace {

// Whether `segment` is one attrib wrote for the job id: the comment of a verdict the
// archive holds for one of its runs. A segment a user typed into their Comment
// (--comment "attrib: ... attempt=9") is not, whatever it claims.
Result<bool> archived_segment(store::JobStore& store, const store::JobKey& key, const std::string& segment) {
  auto newest = store.lookup(key.cluster, key.job_id);
  if (!newest) return newest.error();
  if (!*newest) return false;
  for (int64_t run = (*newest)->runs - 1; run >= 0; --run) {
    auto record = store.lookup(key.cluster, key.job_id, run);
    if (!record) return record.error();
    if (*record && (*record)->verdict_json &&
        json_string_or(nlohmann::json::parse(*(*record)->verdict_json), "comment") == segment)
      return true;
  }
  return false;
}

}  // namespace

Result<std::optional<std::string>> comment_to_write(slurm::Accounting& accounting, store::JobStore& store,
                                                    const store::JobKey& key, const std::string& segment,
                                                    std::optional<TimeUs> attempt_submit,
                                                    const std::optional<slurm::JobRecordFacts>& scoped) {
  Result<slurm::JobRecordFacts> before = scoped && scoped->sole_row ? Result<slurm::JobRecordFacts>(*scoped)
                                                                    : accounting.read_job(key.cluster, key.job_id);
  if (!before) return before.error();
  // slurmdbd writes the id's newest row. When a later job reuses the id, that row is not
  // this job's: its Comment is left alone (the verdict is in the archive).
  if (attempt_submit && before->job_submit && *attempt_submit < *before->job_submit) {
    spdlog::info("job {}: a later job reuses the id; its Comment is not written", key.job_id);
    return std::optional<std::string>();
  }
  // One Comment serves every attempt of a requeued job: an earlier attempt judged late
  // does not replace a later one's verdict, when attrib wrote that one.
  if (comment_attempt(before->comment) > comment_attempt(segment)) {
    auto ours = archived_segment(store, key, comment_segment(before->comment));
    if (!ours) return ours.error();
    if (*ours) return std::optional<std::string>();
    spdlog::warn("job {}: the comment holds an attrib segment attrib never wrote, replaced: {}", key.job_id,
                 sanitize_for_comment(comment_segment(before->comment)));
  }
  std::string merged = merge_comment(before->comment, segment);
  if (merged == before->comment) return std::optional<std::string>();  // written by an earlier attempt
  return std::optional<std::string>(std::move(merged));
}

}  // namespace attrib::pipeline
