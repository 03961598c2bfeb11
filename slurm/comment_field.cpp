#include "slurm/accounting.h"

namespace attrib::slurm {

std::optional<CommentField> comment_field_named(const std::string& name) {
  for (CommentField field : {CommentField::kComment, CommentField::kAdminComment, CommentField::kSystemComment})
    if (name == comment_field_name(field)) return field;
  return std::nullopt;
}

const char* comment_field_name(CommentField field) {
  switch (field) {
    case CommentField::kAdminComment:
      return "AdminComment";
    case CommentField::kSystemComment:
      return "SystemComment";
    case CommentField::kComment:
      break;
  }
  return "Comment";
}

}  // namespace attrib::slurm
