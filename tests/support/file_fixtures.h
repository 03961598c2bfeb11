// Helpers for the file-based collector tests: a scratch directory removed on exit,
// file writing, and a collect() that keeps the lines it was handed.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectors/collector.h"

namespace attrib::collectors::testing {

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "attrib-collector-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

struct Collected {
  std::vector<LogLine> lines;
  std::vector<Coverage> coverage;
};

inline Collected collect_all(Collector& collector, const CollectRequest& request) {
  Collected result;
  result.coverage = collector.collect(request, [&](const LogLine& line) { result.lines.push_back(line); });
  return result;
}

inline std::string status_of(const Coverage& coverage) { return to_string(coverage.status); }

}  // namespace attrib::collectors::testing
