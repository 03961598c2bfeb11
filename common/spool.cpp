#include "common/spool.h"

#include <system_error>

namespace attrib::common {

Result<std::filesystem::path> write_spool_file(const std::filesystem::path& dir, const v1::JobEnded& message) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) return Error{kSpoolEncode, "cannot encode JobEnded"};
  return write_spool_bytes(dir, message.cluster(), message.job_id(), bytes);
}

std::vector<std::filesystem::path> list_spool_files(const std::filesystem::path& dir) {
  return list_files_with_suffix(dir, kSpoolSuffix);
}

Result<v1::JobEnded> read_spool_file(const std::filesystem::path& file) {
  auto bytes = read_file_bytes(file);
  if (!bytes) return bytes.error();
  v1::JobEnded message;
  if (!message.ParseFromString(*bytes) || message.job_id().empty())
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
