// File access shared by the file-based collectors (kmsg, Fabric Manager log, SPANK
// records, GPU map, application output): path templates and reads that can never hang.
//
// Reads open with O_NONBLOCK (a FIFO or device never blocks the daemon: a read stops
// at EAGAIN or end of data) and are capped in size. Collectors run with more rights
// than users and some paths are chosen by users (a job's output file): those are read
// with read_user_file, which also checks who owns the file and how the path gets there.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/option_table.h"
#include "core/result.h"

namespace attrib::collectors {

// Stable error code of option values that have the right type but are not usable
// (a glob in a path template, an unknown placeholder, a malformed number).

// What is wrong with a path template (CONFIG_E_VALUE), or nullopt: it must be absolute,
// hold no glob characters, and use only the placeholders in `allowed` (written "{name}").
OptionProblem path_template_problem(const std::string& path_template, const std::vector<std::string>& allowed);

// Replaces each "{name}" by its value. A value that could escape the intended
// directory ("", ".", "..", or containing '/' or a NUL) is refused.
Result<std::string> expand_path_template(const std::string& path_template,
                                         const std::map<std::string, std::string>& values);

struct ReadLimits {
  uint64_t max_bytes = 64ull << 20;  // regular files: only the last max_bytes are read
};

struct FileContent {
  enum class State { Read, Missing, Error, Refused };
  State state = State::Error;
  std::string data;           // the bytes read (for a tail read: starting at a line start)
  std::string error;          // State::Error / Refused: what failed or why it was refused, naming the path
  bool truncated = false;     // the start of a regular file was skipped (max_bytes), or a
                              // FIFO/device had more than max_bytes ready
  uint64_t size = 0;          // regular files: the file size when opened
  uint64_t records_lost = 0;  // EPIPE from a kmsg device: records overwritten while reading
};

// Reads everything currently readable from `path` without blocking. `storage`: a buffer
// whose memory the result's data reuses (a collector that reads a window per job hands
// back the last one: a fresh buffer of megabytes costs more in page faults than the scan).
FileContent read_source_file(const std::string& path, const ReadLimits& limits, std::string storage = {});

// Reads a file the job's user wrote (its stdout/stderr), as a regular file of at most
// max_bytes (the tail), only when it is safe for a privileged reader: `path` is absolute
// without "..", is opened one component at a time with O_NOFOLLOW (a symbolic link
// anywhere in the path, even a parent directory swapped for one, is refused), and the
// file is owned by `owner_uid`. Otherwise State::Refused with the reason; an unknown
// owner (nullopt) refuses every file.
FileContent read_user_file(const std::string& path, std::optional<uint32_t> owner_uid, uint64_t max_bytes);

// Whether `path` is a regular file (not a link) owned by root and writable by no one
// else: what a trusted record (the SPANK plugin's, the driver's procfs) must be.
bool root_owned_and_protected(const std::string& path);

// Splits text into lines at '\n' (a final line without '\n' is kept; a '\r' before
// '\n' is dropped).
std::vector<std::string> split_lines(const std::string& text);

}  // namespace attrib::collectors
