#include "slurm/accounting.h"

#include "core/error_codes.h"

namespace attrib::slurm {

Error comment_not_kept(const std::string& kept) {
  return Error{kCommentVerify, "slurmdbd kept '" + kept + "' instead of the verdict comment"};
}

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
      out.push_back(comment_not_kept(after->comment));
    else
      out.push_back(ok_status());
  }
  return out;
}

}  // namespace attrib::slurm
