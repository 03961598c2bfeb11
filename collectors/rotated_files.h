// A log file with its rotated generations, as logrotate leaves them: <path>.1,
// <path>.2.gz, ... (numbered) or <path>-20240405[.gz] (dateext), read oldest first.
#pragma once

#include <string>
#include <vector>

#include "collectors/source_files.h"
#include "core/types.h"

namespace attrib::collectors {

struct LogGeneration {
  std::string path;
  bool gzip = false;
  TimeUs modified = 0;  // when it was last written: none of its lines is later
};

// The newest `rotations` rotated generations of `path` and `path` itself (when present),
// oldest first: by modification time, then by rotation number. `capped`, when given, says
// whether older generations were left out.
std::vector<LogGeneration> log_generations(const std::string& path, int rotations, bool* capped = nullptr);

// Reads one generation: a plain file as read_source_file does; a .gz one decompressed, of
// which the last limits.max_bytes are kept. A .gz cut short (logrotate still compressing)
// gives what it holds; one that is not gzip at all is read as it is (zlib's transparent
// mode); a damaged one is State::Error.
FileContent read_log_generation(const LogGeneration& generation, const ReadLimits& limits);

}  // namespace attrib::collectors
