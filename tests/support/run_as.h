// Test support: running a program as another uid from a threaded test process, and
// MUNGE credentials made by another uid with munge(1). Header-only; used by the tests of
// authentication (auth, dashboard login) that need an ordinary user's credential.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace attrib::test {

inline std::string read_all(int fd) {
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<size_t>(n));
  return out;
}

// Runs argv as uid (and its primary group, no supplementary groups), with extra_env added
// to this process's environment, and returns what it wrote to fd 1 and 2 and its exit
// status. The child only drops privileges and execs: this process is threaded (gRPC),
// and a forked child that did more (malloc, libmunge) could deadlock on a lock another
// thread held at fork time, as it did under AddressSanitizer, whose allocator is not
// re-initialised in the child.
inline std::pair<std::string, int> run_as(uid_t uid, const std::vector<std::string>& argv,
                                   const std::vector<std::string>& extra_env = {}) {
  // Everything the child needs is made before fork: NSS and malloc are not safe after it.
  passwd* entry = getpwuid(uid);
  gid_t gid = entry != nullptr ? entry->pw_gid : uid;
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<char*> env;
  for (char** var = environ; *var != nullptr; ++var) env.push_back(*var);
  for (const std::string& var : extra_env) env.push_back(const_cast<char*>(var.c_str()));
  env.push_back(nullptr);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return {"", -1};  // dup2 clears it on fds 1 and 2
  pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(97);
    execve(args[0], args.data(), env.data());
    _exit(98);
  }
  close(pipe_fds[1]);
  std::string out = read_all(pipe_fds[0]);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// A MUNGE credential over payload made by uid, with munge(1), the tool munged ships.
inline std::pair<std::string, int> munge_as(uid_t uid, const std::string& socket, const std::string& payload,
                                     int ttl_s = 0) {
  auto [out, status] = run_as(uid, {"/usr/bin/munge", "--socket=" + socket, "--string=" + payload,
                                    "--ttl=" + std::to_string(ttl_s)});
  while (status == 0 && !out.empty() && out.back() == '\n') out.pop_back();
  return {out, status};
}

}  // namespace attrib::test
