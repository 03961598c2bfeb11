// The spool directory: where attrib-epilog leaves a JobEnded when the daemon cannot be
// reached, and where attributiond picks it up. Files appear atomically (write to a
// hidden temporary name, fsync, rename), so the daemon never reads a half-written job.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "attrib/v1/attrib.pb.h"
#include "core/result.h"

namespace attrib::common {

inline constexpr const char* kSpoolSuffix = ".jobended";

// Writes the message as <dir>/<cluster>_<job_id>_<time>_<pid>.jobended. Returns the path.
Result<std::filesystem::path> write_spool_file(const std::filesystem::path& dir, const v1::JobEnded& message);

// Finished spool files, oldest name first (temporary files are skipped).
std::vector<std::filesystem::path> list_spool_files(const std::filesystem::path& dir);

Result<v1::JobEnded> read_spool_file(const std::filesystem::path& file);

// Moves a file that cannot be parsed to <dir>/bad/ so it is kept for a human but not retried.
Status quarantine_spool_file(const std::filesystem::path& file);

}  // namespace attrib::common
