#include "core/whole_file.h"

#include <fstream>
#include <sstream>

namespace attrib {

std::optional<std::string> read_whole_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  // A regular file is read in one go at its size (evidence bundles run to gigabytes); a
  // file whose size the stream cannot tell (a pipe, /proc) is read to its end.
  const std::streamoff size = in.tellg();
  if (size > 0) {
    std::string bytes(static_cast<size_t>(size), '\0');
    in.seekg(0);
    if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) return std::nullopt;
    return bytes;
  }
  in.clear();
  in.seekg(0);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(bytes).str();
}

}  // namespace attrib
