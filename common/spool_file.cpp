#include "common/spool_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "core/clock.h"
#include "core/whole_file.h"
#include "core/unique_fd.h"

namespace attrib::common {
namespace {

Error io_error(const std::string& what, const std::filesystem::path& path) {
  return Error{kSpoolIo, what + " " + path.string() + ": " + std::strerror(errno)};
}

}  // namespace

std::vector<std::filesystem::path> list_files_with_suffix(const std::filesystem::path& dir, const std::string& suffix) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name[0] == '.' || !entry.is_regular_file(ec)) continue;
    if (name.size() > suffix.size() && name.ends_with(suffix)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::string> read_file_bytes(const std::filesystem::path& file) {
  auto bytes = read_whole_file(file);
  if (!bytes) return io_error("cannot read", file);
  return std::move(*bytes);
}

std::string safe_file_name(const std::string& text) {
  std::string out;
  for (char c : text) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-') ? c : '_';
  return out.empty() ? "unknown" : out;
}

Result<std::filesystem::path> write_file_durably(const std::filesystem::path& dir, const std::string& name,
                                                 const std::string& bytes) {
  auto tmp = dir / ("." + name + "." + std::to_string(::getpid()) + ".tmp");
  auto final_path = dir / name;
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640));
  if (fd.get() < 0) return io_error("cannot create", tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::unlink(tmp.c_str());
      return io_error("cannot write", tmp);
    }
    done += static_cast<size_t>(n);
  }
  // What is written here must survive a crash of the host right after.
  if (::fsync(fd.get()) != 0 || !fd.close()) {
    ::unlink(tmp.c_str());
    return io_error("cannot sync", tmp);
  }
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return io_error("cannot rename into", final_path);
  }
  UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() >= 0) ::fsync(dir_fd.get());
  return final_path;
}

Result<std::filesystem::path> write_spool_bytes(const std::filesystem::path& dir, const std::string& cluster,
                                                const std::string& job_id, const std::string& bytes) {
  // Time and pid make the name unique: two hooks of one job each leave their own file.
  return write_file_durably(dir,
                            safe_file_name(cluster) + "_" + safe_file_name(job_id) + "_" +
                                std::to_string(wall_clock_us()) + "_" + std::to_string(::getpid()) + kSpoolSuffix,
                            bytes);
}

}  // namespace attrib::common
