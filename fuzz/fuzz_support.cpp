#include "fuzz/fuzz_support.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <spdlog/spdlog.h>

#include "rules/pack_location.h"

namespace attrib::fuzz {

void broken(const std::string& what) {
  std::fprintf(stderr, "attrib fuzz: property broken: %s\n", what.c_str());
  std::abort();
}

void quiet_logs() { spdlog::set_level(spdlog::level::off); }

MemFile::MemFile(const char* name) {
  fd_ = memfd_create(name, MFD_CLOEXEC);
  if (fd_ < 0) broken("memfd_create failed");
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemFile::~MemFile() {
  if (fd_ >= 0) close(fd_);
}

void MemFile::write(std::string_view bytes) {
  if (ftruncate(fd_, 0) != 0) broken("ftruncate of a memfd failed");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) broken("write to a memfd failed");
    done += static_cast<size_t>(n);
  }
}

ScratchDir::ScratchDir(const char* name) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/attrib-fuzz-" + name + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) broken("mkdtemp " + pattern + " failed");
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void ScratchDir::clear() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path_, ec))
    std::filesystem::remove_all(entry.path(), ec);
}

void ScratchDir::write(const std::string& relative, std::string_view bytes) {
  const std::filesystem::path file = path_ / relative;
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) broken("cannot write " + file.string());
}

std::shared_ptr<const rules::RulePack> shipped_pack() {
  static const std::shared_ptr<const rules::RulePack> pack = [] {
    rules::LoadOptions options;
    options.pack_dir = rules::default_pack_dir();
    auto loaded = rules::load_rule_pack(options);
    if (!loaded) broken("the shipped rule pack does not load: " + loaded.error().message);
    return *loaded;
  }();
  return pack;
}

std::vector<Section> split_sections(std::string_view input, std::string_view marker) {
  std::vector<Section> out(1);
  size_t section_start = 0;
  size_t line_start = 0;
  while (line_start <= input.size()) {
    size_t line_end = input.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = input.size();
    std::string_view line = input.substr(line_start, line_end - line_start);
    if (line.substr(0, marker.size()) == marker) {
      out.back().text = input.substr(section_start, line_start - section_start);
      out.push_back(Section{std::string(line.substr(marker.size())), {}});
      section_start = std::min(line_end + 1, input.size());
    }
    if (line_end == input.size()) break;
    line_start = line_end + 1;
  }
  out.back().text = input.substr(section_start);
  return out;
}

bool safe_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace attrib::fuzz
