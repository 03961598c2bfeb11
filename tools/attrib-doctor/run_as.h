// Checks made as another user (the SlurmUser that runs the hook): in a child process that
// drops to that uid and gid, so the kernel answers, not a reading of modes and ACLs.
#pragma once

#include <sys/types.h>

#include <string>

namespace attrib::doctor {

struct Identity {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
};

// Can `who` execute `path` (every directory above it included)?
bool can_execute_as(const Identity& who, const std::string& path);
// Can `who` create, write and remove a file in directory `dir`? The probe's name starts
// with a dot and lacks the spool suffix, so the head never takes it for a report.
bool can_write_in_as(const Identity& who, const std::string& dir);

}  // namespace attrib::doctor
