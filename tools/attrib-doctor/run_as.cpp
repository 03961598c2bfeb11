#include "tools/attrib-doctor/run_as.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

namespace attrib::doctor {
namespace {

// Runs `check` in a child as `who` (only system calls there: the parent may have threads);
// true when it exits 0.
template <typename Check>
bool as_user(const Identity& who, Check check) {
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(who.gid) != 0 || setuid(who.uid) != 0) _exit(2);
    _exit(check() ? 0 : 1);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

bool can_execute_as(const Identity& who, const std::string& path) {
  const char* file = path.c_str();
  return as_user(who, [file] { return access(file, X_OK) == 0; });
}

bool can_write_in_as(const Identity& who, const std::string& dir) {
  const std::string probe_path = dir + "/.attrib-doctor-probe";
  const char* probe = probe_path.c_str();
  return as_user(who, [probe] {
    const int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    const bool written = write(fd, "probe\n", 6) == 6 && fsync(fd) == 0;
    close(fd);
    return unlink(probe) == 0 && written;
  });
}

}  // namespace attrib::doctor
