#include "collectors/rotated_files.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <optional>

namespace attrib::collectors {
namespace {

namespace fs = std::filesystem;

// The rotation suffix of a generation's name after "<base>": ".3", ".3.gz", "-20240405",
// "-20240405.gz"; nullopt for anything else (another log, a half-written .tmp).
struct Suffix {
  int64_t order = 0;  // higher: older (a number) / newer (a date); used after the time
  bool gzip = false;
};

std::optional<Suffix> rotation_suffix(std::string_view rest) {
  Suffix s;
  if (rest.ends_with(".gz")) {
    s.gzip = true;
    rest.remove_suffix(3);
  }
  if (rest.size() < 2 || (rest[0] != '.' && rest[0] != '-')) return std::nullopt;
  const std::string_view digits = rest.substr(1);
  if (digits.size() > 10 || digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  const int64_t n = std::stoll(std::string(digits));
  if (rest[0] == '.' && digits.size() <= 4) s.order = -n;  // .1 newer than .2
  else if (rest[0] == '-' && digits.size() >= 8) s.order = n;
  else return std::nullopt;
  return s;
}

TimeUs modified_us(const struct stat& st) {
  return static_cast<TimeUs>(st.st_mtim.tv_sec) * 1000000 + st.st_mtim.tv_nsec / 1000;
}

}  // namespace

std::vector<LogGeneration> log_generations(const std::string& path, int rotations, bool* capped) {
  const fs::path file(path);
  const std::string base = file.filename().string();
  struct Found {
    LogGeneration generation;
    int64_t order;
  };
  std::vector<Found> rotated;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(file.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= base.size() || name.compare(0, base.size(), base) != 0) continue;
    auto suffix = rotation_suffix(std::string_view(name).substr(base.size()));
    struct stat st {};
    if (!suffix || ::stat(entry.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    rotated.push_back({{entry.path().string(), suffix->gzip, modified_us(st)}, suffix->order});
  }
  auto older = [](const Found& a, const Found& b) {
    return a.generation.modified != b.generation.modified ? a.generation.modified < b.generation.modified
                                                          : a.order < b.order;
  };
  std::sort(rotated.begin(), rotated.end(), older);
  const bool over = rotated.size() > static_cast<size_t>(std::max(rotations, 0));
  if (over) rotated.erase(rotated.begin(), rotated.end() - std::max(rotations, 0));
  if (capped != nullptr) *capped = over;
  std::vector<LogGeneration> out;
  for (Found& found : rotated) out.push_back(std::move(found.generation));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) out.push_back({path, false, modified_us(st)});
  return out;
}

FileContent read_log_generation(const LogGeneration& generation, const ReadLimits& limits) {
  if (!generation.gzip) return read_source_file(generation.path, limits);
  FileContent out;
  gzFile in = gzopen(generation.path.c_str(), "rb");
  if (in == nullptr) {
    out.state = FileContent::State::Error;
    out.error = generation.path + ": cannot open";
    return out;
  }
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(in, buffer, sizeof buffer)) > 0) {
    out.data.append(buffer, static_cast<size_t>(n));
    // Only the tail is kept, as for a plain file: the newest lines matter most.
    if (out.data.size() > 2 * limits.max_bytes) {
      out.data.erase(0, out.data.size() - limits.max_bytes);
      out.truncated = true;
    }
  }
  int code = Z_OK;
  const char* message = gzerror(in, &code);
  const bool failed = n < 0 || (code != Z_OK && code != Z_BUF_ERROR);
  const std::string why = failed ? std::string(message) : std::string();
  gzclose(in);
  if (failed) {
    out.state = FileContent::State::Error;
    out.error = generation.path + ": not readable as gzip: " + why;
    out.data.clear();
    return out;
  }
  if (out.data.size() > limits.max_bytes) {
    out.data.erase(0, out.data.size() - limits.max_bytes);
    out.truncated = true;
  }
  if (out.truncated) {  // start at a line start
    const size_t newline = out.data.find('\n');
    out.data.erase(0, newline == std::string::npos ? out.data.size() : newline + 1);
  }
  out.state = FileContent::State::Read;
  out.size = out.data.size();
  return out;
}

}  // namespace attrib::collectors
