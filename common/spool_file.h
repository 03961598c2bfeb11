// Writing one job into the spool directory, without protobuf: what attrib-epilog does
// first, for every job, before anything else (spool.h reads the files back). A file
// appears atomically (written to a hidden temporary name, fsynced, renamed into place,
// the directory fsynced), so no reader ever sees half a job and a crash right after the
// hook returned loses nothing.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"

namespace attrib::common {

inline constexpr const char* kSpoolSuffix = ".jobended";

// Writes `bytes` as <dir>/<name> atomically and durably (hidden temporary, fsync, rename,
// directory fsync); an existing <name> is replaced. Returns the path.
Result<std::filesystem::path> write_file_durably(const std::filesystem::path& dir, const std::string& name,
                                                 const std::string& bytes);

// The regular files in dir whose names end in `suffix`, hidden ones (temporaries being
// written) left out, sorted by name; none when dir cannot be read.
std::vector<std::filesystem::path> list_files_with_suffix(const std::filesystem::path& dir, const std::string& suffix);

// The whole content of `file`; error SPOOL_E_IO naming it when it cannot be read.
Result<std::string> read_file_bytes(const std::filesystem::path& file);

// `text` with every character but letters, digits, '+' and '-' turned into '_', for
// file names ("unknown" when empty).
std::string safe_file_name(const std::string& text);

// Writes `bytes` (a serialized attrib.v1.JobEnded) as
// <dir>/<cluster>_<job_id>_<time>_<pid>.jobended. Returns the path.
Result<std::filesystem::path> write_spool_bytes(const std::filesystem::path& dir, const std::string& cluster,
                                                const std::string& job_id, const std::string& bytes);

}  // namespace attrib::common
