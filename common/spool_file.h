// Writing one job into the spool directory, without protobuf: what attrib-epilog does
// first, for every job, before anything else (spool.h reads the files back). A file
// appears atomically (written to a hidden temporary name, fsynced, renamed into place,
// the directory fsynced), so no reader ever sees half a job and a crash right after the
// hook returned loses nothing.
#pragma once

#include <filesystem>
#include <string>

#include "core/result.h"

namespace attrib::common {

inline constexpr const char* kSpoolSuffix = ".jobended";

// Writes `bytes` (a serialized attrib.v1.JobEnded) as
// <dir>/<cluster>_<job_id>_<time>_<pid>.jobended. Returns the path.
Result<std::filesystem::path> write_spool_bytes(const std::filesystem::path& dir, const std::string& cluster,
                                                const std::string& job_id, const std::string& bytes);

}  // namespace attrib::common
