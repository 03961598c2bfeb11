#include "spank/record_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/unique_fd.h"

namespace attrib::spank {
namespace {

Error io_error(const std::string& what, const std::string& path) {
  return Error{kSpankIo, what + " " + path + ": " + std::strerror(errno)};
}

}  // namespace

Status ensure_directory(const std::string& path, mode_t mode) {
  if (path.empty()) return Error{kSpankIo, "empty directory path"};
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = slash == std::string::npos ? path : path.substr(0, slash);
    if (::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) return io_error("cannot create", prefix);
    if (slash == std::string::npos) break;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return io_error("cannot stat", path);
  if (!S_ISDIR(st.st_mode)) return Error{kSpankIo, path + " is not a directory"};
  return ok_status();
}

Status write_atomically(const std::string& dir, const std::string& name, const std::string& content) {
  const std::string final_path = dir + "/" + name;
  const std::string temp_path = dir + "/." + name + ".tmp." + std::to_string(::getpid());
  UniqueFd fd(::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (fd.get() < 0) return io_error("cannot create", temp_path);
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd.get(), content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Error error = io_error("cannot write", temp_path);
      ::unlink(temp_path.c_str());
      return error;
    }
    written += static_cast<size_t>(n);
  }
  if (!fd.close()) {
    Error error = io_error("cannot close", temp_path);
    ::unlink(temp_path.c_str());
    return error;
  }
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    Error error = io_error("cannot rename to", final_path);
    ::unlink(temp_path.c_str());
    return error;
  }
  return ok_status();
}

}  // namespace attrib::spank
