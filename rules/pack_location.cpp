#include "rules/pack_location.h"

#include <filesystem>
#include <system_error>

namespace attrib::rules {

std::string default_pack_dir() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string build_tree = std::string(ATTRIB_BUILD_TREE_DIR) + "/";
  if (!ec && self.string().rfind(build_tree, 0) == 0 && std::filesystem::is_directory(ATTRIB_SOURCE_PACK_DIR, ec))
    return ATTRIB_SOURCE_PACK_DIR;
  return ATTRIB_INSTALLED_PACK_DIR;
}

}  // namespace attrib::rules
