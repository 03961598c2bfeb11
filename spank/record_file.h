// Small, local, atomic file operations for the task spool (no network, no fsync: the
// write must not stall a task's launch or exit; rename makes it all-or-nothing).
#pragma once

#include <sys/types.h>

#include <string>

#include "core/result.h"

namespace attrib::spank {

// mkdir -p with `mode` for the directories it creates (existing ones are left as they are).
Status ensure_directory(const std::string& path, mode_t mode);

// Writes `content` to <dir>/.<name>.tmp.<pid>, then renames it to <dir>/<name>, so a
// reader never sees a partial record. Mode 0644: the records are root's, readable to all.
Status write_atomically(const std::string& dir, const std::string& name, const std::string& content);

}  // namespace attrib::spank
