// A private munged for tests that need real MUNGE credentials: its own key, socket, pid,
// log and seed files under one directory, started on construction and stopped (and the
// directory removed) on destruction. Needs root and /usr/sbin/munged; started() says
// whether it came up, and output() what it printed when it did not.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/whole_file.h"

extern char** environ;

namespace attrib::test {

class PrivateMunged {
 public:
  explicit PrivateMunged(const std::string& name) {
    namespace fs = std::filesystem;
    if (geteuid() != 0 || access("/usr/sbin/munged", X_OK) != 0) return;
    base_ = fs::temp_directory_path() / (name + "-" + std::to_string(getpid()));
    fs::remove_all(base_);
    fs::create_directories(base_);
    // munged insists every directory above its socket is searchable by all, and tests'
    // unprivileged children need to reach the socket.
    fs::permissions(base_, fs::perms(0755));
    const std::string key = (base_ / "munge.key").string();
    {
      std::ifstream random("/dev/urandom", std::ios::binary);
      std::string bytes(1024, '\0');
      random.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      std::ofstream(key, std::ios::binary) << bytes;
    }
    chmod(key.c_str(), 0400);
    socket_ = (base_ / "munge.sock").string();
    std::vector<std::string> args = {"/usr/sbin/munged",
                                     "--foreground",
                                     "--key-file=" + key,
                                     "--socket=" + socket_,
                                     "--pid-file=" + (base_ / "munged.pid").string(),
                                     "--log-file=" + (base_ / "munged.log").string(),
                                     "--seed-file=" + (base_ / "munged.seed").string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    const std::string out = (base_ / "munged.out").string();
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = 0;
    posix_spawn_file_actions_destroy(&actions);
    for (int i = 0; i < 100 && pid_ > 0 && !fs::exists(socket_); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  ~PrivateMunged() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (!base_.empty()) std::filesystem::remove_all(base_);
  }

  PrivateMunged(const PrivateMunged&) = delete;
  PrivateMunged& operator=(const PrivateMunged&) = delete;

  bool started() const { return pid_ > 0 && std::filesystem::exists(socket_); }
  const std::string& socket() const { return socket_; }
  const std::filesystem::path& dir() const { return base_; }
  std::string output() const { return read_whole_file(base_ / "munged.out").value_or(""); }

 private:
  std::filesystem::path base_;
  std::string socket_;
  pid_t pid_ = 0;
};

}  // namespace attrib::test
