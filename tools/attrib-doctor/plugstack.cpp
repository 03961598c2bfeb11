#include "tools/attrib-doctor/plugstack.h"

#include <glob.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "common/spool_file.h"

namespace attrib::doctor {
namespace {

// spank/spank_attrib.cpp's attrib_spank_built_for, up to SLURM_VERSION_NUMBER ("0x160508").
constexpr std::string_view kBuiltForMarker = "attrib spank_attrib.so built for Slurm ";

// "22.05.8" of 0x160508 (slurm_version.h's SLURM_VERSION_NUM: major, minor, micro bytes).
std::string version_text(unsigned long number) {
  char text[16];
  snprintf(text, sizeof text, "%lu.%02lu.%lu", (number >> 16) & 0xff, (number >> 8) & 0xff, number & 0xff);
  return text;
}

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in(line.substr(0, line.find('#')));
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

std::string resolve(const std::string& path, const std::string& plugin_dir) {
  if (path.empty() || path.front() == '/') return path;
  std::istringstream dirs(plugin_dir);
  std::string dir;
  std::string first;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = dir + "/" + path;
    if (first.empty()) first = candidate;
    if (std::filesystem::exists(candidate)) return candidate;
  }
  return first.empty() ? path : first;
}

std::vector<std::string> expand(const std::string& pattern, const std::string& relative_to) {
  const std::string full = pattern.front() == '/' ? pattern : relative_to + "/" + pattern;
  glob_t found{};
  std::vector<std::string> files;
  if (glob(full.c_str(), 0, nullptr, &found) == 0)
    for (size_t i = 0; i < found.gl_pathc; ++i) files.emplace_back(found.gl_pathv[i]);
  globfree(&found);
  return files;
}

Status read_one(const std::string& file, const std::string& plugin_dir, std::set<std::string>& seen,
                std::vector<PluginLine>& out) {
  if (!seen.insert(file).second) return ok_status();
  std::ifstream in(file);
  if (!in) return Error{kConfigOpen, "cannot read the plugin stack file " + file};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::vector<std::string> words = words_of(line);
    if (words.empty()) continue;
    if (words[0] == "include" && words.size() >= 2) {
      for (const std::string& included : expand(words[1], std::filesystem::path(file).parent_path().string()))
        if (auto read = read_one(included, plugin_dir, seen, out); !read) return read;
      continue;
    }
    if ((words[0] != "required" && words[0] != "optional") || words.size() < 2) continue;
    out.push_back({file + ":" + std::to_string(number),
                   words[0] == "required",
                   resolve(words[1], plugin_dir),
                   {words.begin() + 2, words.end()}});
  }
  return ok_status();
}

}  // namespace

Result<std::vector<PluginLine>> read_plugstack(const std::string& plugstack, const std::string& plugin_dir) {
  std::vector<PluginLine> out;
  std::set<std::string> seen;
  if (auto read = read_one(plugstack, plugin_dir, seen, out); !read) return read.error();
  return out;
}

Result<std::optional<std::string>> spank_built_for(const std::string& path) {
  auto read = common::read_file_bytes(path);
  if (!read) return read.error();
  const std::string& bytes = *read;
  const size_t at = bytes.find(kBuiltForMarker);
  if (at == std::string::npos) return std::optional<std::string>();
  const size_t start = at + kBuiltForMarker.size();
  const size_t end = bytes.find('\0', start);
  const std::string number = bytes.substr(start, end == std::string::npos ? 0 : end - start);
  char* parsed_to = nullptr;
  const unsigned long value = std::strtoul(number.c_str(), &parsed_to, 16);
  if (number.empty() || parsed_to == nullptr || *parsed_to != '\0')
    return Error{kConfigValue, path + " names no Slurm version number after its marker: '" + number + "'"};
  return std::optional<std::string>(version_text(value));
}

std::string release_of(const std::string& version) {
  const size_t first = version.find('.');
  if (first == std::string::npos) return version;
  const size_t second = version.find('.', first + 1);
  return version.substr(0, second);
}

}  // namespace attrib::doctor
