// The one way attrib reads a whole file into memory (configuration, rule files, spool
// files, token files). Each caller turns a failure into its own error, naming the file.
// Evidence from a job's user is not read here: collectors/source_files.h reads it as the
// user, bounded.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace attrib {

// The file's bytes; nullopt when it cannot be opened or read.
std::optional<std::string> read_whole_file(const std::filesystem::path& file);

}  // namespace attrib
