#include "collectors/source_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>

#include "core/unique_fd.h"

namespace attrib::collectors {
namespace {

std::string errno_message(int error) { return std::error_code(error, std::generic_category()).message(); }

}  // namespace

OptionProblem path_template_problem(const std::string& path_template, const std::vector<std::string>& allowed) {
  const std::string quoted = "'" + path_template + "'";
  if (path_template.empty() || path_template[0] != '/')
    return Error{kConfigValue, quoted + " must be an absolute path"};
  if (path_template.find_first_of("*?[") != std::string::npos)
    return Error{kConfigValue, quoted + " contains a glob character; give explicit paths with placeholders"};
  size_t pos = 0;
  while ((pos = path_template.find('{', pos)) != std::string::npos) {
    const size_t close = path_template.find('}', pos);
    if (close == std::string::npos) return Error{kConfigValue, quoted + " has an unclosed '{'"};
    const std::string name = path_template.substr(pos + 1, close - pos - 1);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string known;
      for (const std::string& a : allowed) known += (known.empty() ? "{" : ", {") + a + "}";
      return Error{kConfigValue,
                   quoted + " uses unknown placeholder {" + name + "}; allowed: " + (known.empty() ? "(none)" : known)};
    }
    pos = close + 1;
  }
  return std::nullopt;
}

Result<std::string> expand_path_template(const std::string& path_template,
                                         const std::map<std::string, std::string>& values) {
  std::string out;
  size_t pos = 0;
  while (pos < path_template.size()) {
    const size_t open = path_template.find('{', pos);
    if (open == std::string::npos) {
      out += path_template.substr(pos);
      break;
    }
    out += path_template.substr(pos, open - pos);
    const size_t close = path_template.find('}', open);
    if (close == std::string::npos) return Error{kCollectPath, "unclosed '{' in " + path_template};
    const std::string name = path_template.substr(open + 1, close - open - 1);
    auto value = values.find(name);
    if (value == values.end()) return Error{kCollectPath, "no value for {" + name + "} in " + path_template};
    const std::string& v = value->second;
    if (v.empty() || v == "." || v == ".." || v.find('/') != std::string::npos || v.find('\0') != std::string::npos) {
      return Error{kCollectPath, "refusing {" + name + "} = '" + v + "' in " + path_template +
                                     " (it could leave the intended directory)"};
    }
    out += v;
    pos = close + 1;
  }
  return out;
}

namespace {

// Reads a file without a size (a FIFO, /dev/kmsg, /proc) until no more data is ready.
void read_stream(int fd, const std::string& path, uint64_t max_bytes, FileContent& content) {
  // 64 KiB: larger than any kmsg record (a smaller buffer makes /dev/kmsg fail with EINVAL).
  std::string buffer(64 * 1024, '\0');
  while (true) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n > 0) {
      content.data.append(buffer.data(), static_cast<size_t>(n));
      if (content.data.size() >= max_bytes) {
        content.truncated = true;  // a stream that keeps producing: stop rather than loop forever
        return;
      }
      continue;
    }
    if (n == 0) return;  // end of file, or a FIFO without writers
    const int error = errno;
    if (error == EINTR) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) return;  // nothing more ready now
    if (error == EPIPE) {
      // /dev/kmsg: the next record was overwritten before we got to it; go on.
      ++content.records_lost;
      continue;
    }
    content.error = "reading " + path + ": " + errno_message(error);
    return;
  }
}

// Reads what is readable now from an open `fd` (stat'ed as `st`) into `content`.
void read_open_file(int fd, const std::string& path, const struct stat& st, uint64_t max_bytes, FileContent& content) {
  const bool sized = S_ISREG(st.st_mode) && st.st_size > 0;
  bool skip_to_line_start = false;
  if (sized) {
    content.size = static_cast<uint64_t>(st.st_size);
    if (content.size > max_bytes) {
      // The end of a log holds the failure; read the tail and start at a line boundary.
      if (::lseek(fd, static_cast<off_t>(content.size - max_bytes), SEEK_SET) < 0) {
        content.error = "cannot seek in " + path + ": " + errno_message(errno);
        return;
      }
      content.truncated = true;
      skip_to_line_start = true;
    }
    // Straight into the result, sized once: no second copy of a log of many megabytes.
    const size_t target = static_cast<size_t>(std::min(content.size, max_bytes));
    content.data.resize(target);
    size_t got = 0;
    while (got < target) {
      const ssize_t n = ::read(fd, content.data.data() + got, target - got);
      if (n > 0) {
        got += static_cast<size_t>(n);
        continue;
      }
      if (n == 0) break;  // the file shrank (truncated by logrotate's copytruncate)
      const int error = errno;
      if (error == EINTR) continue;
      if (error == EAGAIN || error == EWOULDBLOCK) break;
      content.error = "reading " + path + ": " + errno_message(error);
      return;
    }
    content.data.resize(got);
  } else {
    read_stream(fd, path, max_bytes, content);
    if (!content.error.empty()) return;
  }
  if (skip_to_line_start) {
    const size_t newline = content.data.find('\n');
    content.data.erase(0, newline == std::string::npos ? content.data.size() : newline + 1);
  }
  content.state = FileContent::State::Read;
}

FileContent ended(FileContent::State state, std::string why = {}) {
  FileContent content;
  content.state = state;
  content.error = std::move(why);
  return content;
}
FileContent refused(std::string why) { return ended(FileContent::State::Refused, std::move(why)); }
FileContent failed(std::string why) { return ended(FileContent::State::Error, std::move(why)); }
FileContent missing() { return ended(FileContent::State::Missing); }

}  // namespace

FileContent read_source_file(const std::string& path, const ReadLimits& limits, std::string storage) {
  FileContent content;
  storage.clear();
  content.data = std::move(storage);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) {
      content.state = FileContent::State::Missing;
    } else {
      content.error = "cannot open " + path + ": " + errno_message(error);
    }
    return content;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    content.error = "cannot stat " + path + ": " + errno_message(errno);
    return content;
  }
  if (S_ISDIR(st.st_mode)) {
    content.error = path + " is not a regular file";
    return content;
  }
  read_open_file(fd.get(), path, st, limits.max_bytes, content);
  return content;
}

FileContent read_user_file(const std::string& path, std::optional<uint32_t> owner_uid, uint64_t max_bytes) {
  if (!owner_uid) return refused(path + ": the job's user is not known, so its owner cannot be checked");
  if (path.empty() || path[0] != '/') return refused(path + ": not an absolute path");
  std::vector<std::string> parts;
  for (size_t pos = 1; pos <= path.size();) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(pos, slash - pos);
    if (part == "..") return refused(path + ": the path contains '..'");
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    pos = slash + 1;
  }
  if (parts.empty()) return refused(path + ": not a file path");

  // One component at a time, never following a link: a parent directory the user swaps
  // for a symbolic link (to /etc, to another user's directory) stops the walk. O_PATH
  // needs only search permission, as a plain open would.
  UniqueFd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return failed("cannot open /: " + errno_message(errno));
  std::string walked;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    walked += "/" + parts[i];
    UniqueFd next(::openat(dir.get(), parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) {
      const int error = errno;
      if (error == ENOENT) return missing();
      if (error == ELOOP || error == ENOTDIR) {
        struct stat link {};
        if (::fstatat(dir.get(), parts[i].c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(link.st_mode))
          return refused(path + ": " + walked + " is a symbolic link (refused: the path must not pass through one)");
        if (error == ENOTDIR) return missing();
      }
      return failed("cannot open " + walked + ": " + errno_message(error));
    }
    dir = std::move(next);
  }

  UniqueFd fd(::openat(dir.get(), parts.back().c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ENOENT) return missing();
    if (error == ELOOP) return refused(path + " is a symbolic link (refused: the file is written by the job's user)");
    return failed("cannot open " + path + ": " + errno_message(error));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return failed("cannot stat " + path + ": " + errno_message(errno));
  if (!S_ISREG(st.st_mode)) return refused(path + " is not a regular file");
  if (st.st_uid != *owner_uid) {
    return refused(path + " is owned by uid " + std::to_string(st.st_uid) + ", not by the job's user (uid " +
                   std::to_string(*owner_uid) + ")");
  }
  FileContent content;
  read_open_file(fd.get(), path, st, max_bytes, content);
  return content;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool last = end == std::string::npos;
    if (last) end = text.size();
    size_t stop = end;
    if (stop > pos && text[stop - 1] == '\r') --stop;
    lines.push_back(text.substr(pos, stop - pos));
    pos = end + 1;
  }
  return lines;
}

bool root_owned_and_protected(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  return st.st_uid == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

}  // namespace attrib::collectors
