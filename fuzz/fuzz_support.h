// What the fuzz targets share (docs/security.md, "Fuzzing record").
//
// Each fuzz/<name>_fuzzer.cpp defines attrib::fuzz::<name>(data, size), which hands the
// bytes to the project's own parser, and ATTRIB_FUZZ_TARGET(<name>), which makes it the
// file's LLVMFuzzerTestOneInput in a fuzz build (ATTRIB_FUZZ_ENTRY_POINTS, fuzz/CMakeLists.txt).
// Without it the functions are plain code: tests/unit/fuzz/ links every target and replays
// fuzz/regressions/<name>/ and fuzz/corpus/<name>/ through them in the ordinary builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rules/engine.h"

namespace attrib::fuzz {

// The signature of every target: 0, or a crash.
using TargetFn = int (*)(const uint8_t* data, size_t size);

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A property the parser promises was broken: prints what and aborts, so that libFuzzer
// (and the regression test) report it like a sanitizer finding.
[[noreturn]] void broken(const std::string& what);
inline void require(bool ok, const char* what) {
  if (!ok) broken(what);
}

// Silences spdlog: the services log every request, and a fuzzer runs millions.
void quiet_logs();

// An anonymous in-memory file (memfd) with a path, /proc/self/fd/<n>: for the collectors,
// whose only entry point reads a path. write() replaces the contents.
class MemFile {
 public:
  explicit MemFile(const char* name);
  ~MemFile();
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  void write(std::string_view bytes);
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// A private directory under $TMPDIR (or /tmp), removed when the process exits normally.
// clear() empties it between inputs.
class ScratchDir {
 public:
  explicit ScratchDir(const char* name);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void clear();
  // Writes bytes to path()/relative, creating its directory.
  void write(const std::string& relative, std::string_view bytes);

 private:
  std::filesystem::path path_;
};

// The shipped rule pack (rules/pack, found as attrib-replay finds it from the build tree),
// loaded once per process. Aborts when it does not load: every target using it needs it.
std::shared_ptr<const rules::RulePack> shipped_pack();

// Sections of a multi-file input: the text before the first line starting with `marker`,
// then one (name, text) per marker line, the name being the rest of that line.
struct Section {
  std::string name;
  std::string_view text;
};
std::vector<Section> split_sections(std::string_view input, std::string_view marker);

// A file or directory name a target may create from fuzzed bytes: 1..64 characters of
// [A-Za-z0-9._-], not "." or "..".
bool safe_name(std::string_view name);

}  // namespace attrib::fuzz

#ifdef ATTRIB_FUZZ_ENTRY_POINTS
#define ATTRIB_FUZZ_TARGET(name)                                                 \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {      \
    return attrib::fuzz::name(data, size);                                       \
  }
#else
#define ATTRIB_FUZZ_TARGET(name)
#endif
