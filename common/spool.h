// The spool directory: where attrib-epilog writes every job first (spool_file.h), where
// attributiond picks it up, and where attrib-epilog-send re-sends what no head read.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "attrib/v1/attrib.pb.h"
#include "common/spool_file.h"
#include "core/result.h"

namespace attrib::common {

// Writes the message as <dir>/<cluster>_<job_id>_<time>_<pid>.jobended. Returns the path.
Result<std::filesystem::path> write_spool_file(const std::filesystem::path& dir, const v1::JobEnded& message);

// Finished spool files, oldest name first (temporary files are skipped).
std::vector<std::filesystem::path> list_spool_files(const std::filesystem::path& dir);

Result<v1::JobEnded> read_spool_file(const std::filesystem::path& file);

// Moves a file that cannot be parsed to <dir>/bad/ so it is kept for a human but not retried.
Status quarantine_spool_file(const std::filesystem::path& file);

}  // namespace attrib::common
