#include "core/whole_file.h"

#include <fstream>
#include <sstream>

namespace attrib {

std::optional<std::string> read_whole_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(bytes).str();
}

}  // namespace attrib
