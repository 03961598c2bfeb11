#include "common/spool.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace attrib::common {
namespace {

Error io_error(const std::string& what, const std::filesystem::path& path) {
  return Error{kSpoolIo, what + " " + path.string() + ": " + std::strerror(errno)};
}

}  // namespace

Result<std::filesystem::path> write_spool_file(const std::filesystem::path& dir, const v1::JobEnded& message) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) return Error{kSpoolEncode, "cannot encode JobEnded"};
  return write_spool_bytes(dir, message.cluster(), message.job_id(), bytes);
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
