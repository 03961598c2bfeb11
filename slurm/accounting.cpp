#include "slurm/accounting.h"

#include "core/error_codes.h"

namespace attrib::slurm {

std::vector<Status> Accounting::write_comments(const std::vector<CommentWrite>& writes) {
  std::vector<Status> out;
  out.reserve(writes.size());
  for (const CommentWrite& write : writes) {
    if (auto s = write_comment(write.cluster, write.job_id, write.comment); !s) {
      out.push_back(s);
      continue;
    }
    auto after = read_job(write.cluster, write.job_id);
    if (!after)
      out.push_back(after.error());
    else if (after->comment != write.comment)
      out.push_back(Error{kCommentVerify, "slurmdbd kept '" + after->comment + "' instead of the verdict comment"});
    else
      out.push_back(ok_status());
  }
  return out;
}

}  // namespace attrib::slurm
