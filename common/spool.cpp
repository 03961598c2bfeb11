#include "common/spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/clock.h"
#include "core/unique_fd.h"

namespace attrib::common {
namespace {

std::string safe_name(const std::string& text) {
  std::string out;
  for (char c : text) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-') ? c : '_';
  return out.empty() ? "unknown" : out;
}

Error io_error(const std::string& what, const std::filesystem::path& path) {
  return Error{kSpoolIo, what + " " + path.string() + ": " + std::strerror(errno)};
}

}  // namespace

Result<std::filesystem::path> write_spool_file(const std::filesystem::path& dir, const v1::JobEnded& message) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) return Error{kSpoolEncode, "cannot encode JobEnded"};
  auto now = wall_clock_us();
  std::string base = safe_name(message.cluster()) + "_" + safe_name(message.job_id()) + "_" + std::to_string(now) +
                     "_" + std::to_string(::getpid());
  auto tmp = dir / ("." + base + ".tmp");
  auto final_path = dir / (base + kSpoolSuffix);

  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640));
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
  // The job must survive a crash of the node right after the hook returned.
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

std::vector<std::filesystem::path> list_spool_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name[0] == '.' || !entry.is_regular_file(ec)) continue;
    if (name.size() > std::strlen(kSpoolSuffix) && name.ends_with(kSpoolSuffix)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<v1::JobEnded> read_spool_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return io_error("cannot read", file);
  std::stringstream bytes;
  bytes << in.rdbuf();
  v1::JobEnded message;
  if (!message.ParseFromString(bytes.str()) || message.job_id().empty())
    return Error{kSpoolDecode, file.string() + ": not a JobEnded message (or no job_id)"};
  return message;
}

Status quarantine_spool_file(const std::filesystem::path& file) {
  std::error_code ec;
  auto bad_dir = file.parent_path() / "bad";
  std::filesystem::create_directories(bad_dir, ec);
  std::filesystem::rename(file, bad_dir / file.filename(), ec);
  if (ec) return Error{kSpoolIo, "cannot move " + file.string() + " to " + bad_dir.string() + ": " + ec.message()};
  return ok_status();
}

}  // namespace attrib::common
