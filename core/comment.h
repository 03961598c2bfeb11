// The one-line Slurm comment segment ("attrib: ...") and how it is merged into the
// user's own --comment text without touching the user's words.
#pragma once

#include <string>

#include "core/verdict.h"

namespace attrib {

// "attrib: GPU_HARDWARE node=n2 gpu=0000:3b:00.0 rule=gpu.fallen_off_bus action=DRAIN_NODE
//  symptoms=2 coverage=3/3" — sanitised, at most 1,000 characters.
std::string render_comment(const Verdict& verdict);

// Returns existing with any previous "attrib: ..." segment replaced by segment (or
// segment appended after " | " when there was none). The user's text is kept as is.
std::string merge_comment(const std::string& existing, const std::string& segment);

// The comment's attrib segment ("attrib: ..." up to the next " | " or the end); "" when
// it has none.
std::string comment_segment(const std::string& comment);

// The attempt whose verdict a comment's attrib segment shows ("attempt=K"; 0 without
// it), or -1 when the comment has no attrib segment.
int comment_attempt(const std::string& comment);

// Removes control characters and newlines from text that may reach the comment.
std::string sanitize_for_comment(const std::string& text);

}  // namespace attrib
