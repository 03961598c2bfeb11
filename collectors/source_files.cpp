#include "collectors/source_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

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

FileContent read_source_file(const std::string& path, const ReadLimits& limits) {
  FileContent content;
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
  if (limits.no_follow) flags |= O_NOFOLLOW;
  UniqueFd fd(::open(path.c_str(), flags));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) {
      content.state = FileContent::State::Missing;
    } else if (error == ELOOP && limits.no_follow) {
      content.error = path + " is a symbolic link (refused: the file is written by the job's user)";
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
  const bool regular = S_ISREG(st.st_mode);
  if (S_ISDIR(st.st_mode) || (limits.regular_file_only && !regular)) {
    content.error = path + " is not a regular file";
    return content;
  }

  bool skip_to_line_start = false;
  if (regular) {
    content.size = static_cast<uint64_t>(st.st_size);
    if (content.size > limits.max_bytes) {
      // The end of a log holds the failure; read the tail and start at a line boundary.
      if (::lseek(fd.get(), static_cast<off_t>(content.size - limits.max_bytes), SEEK_SET) < 0) {
        content.error = "cannot seek in " + path + ": " + errno_message(errno);
        return content;
      }
      content.truncated = true;
      skip_to_line_start = true;
    }
  }

  // 64 KiB: larger than any kmsg record (a smaller buffer makes /dev/kmsg fail with EINVAL).
  std::string buffer(64 * 1024, '\0');
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n > 0) {
      content.data.append(buffer.data(), static_cast<size_t>(n));
      if (!regular && content.data.size() >= limits.max_bytes) {
        content.truncated = true;  // a stream that keeps producing: stop rather than loop forever
        break;
      }
      continue;
    }
    if (n == 0) break;  // end of file, or a FIFO without writers
    const int error = errno;
    if (error == EINTR) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) break;  // nothing more ready now
    if (error == EPIPE) {
      // /dev/kmsg: the next record was overwritten before we got to it; go on.
      ++content.records_lost;
      continue;
    }
    content.error = "reading " + path + ": " + errno_message(error);
    return content;
  }
  if (skip_to_line_start) {
    const size_t newline = content.data.find('\n');
    content.data.erase(0, newline == std::string::npos ? content.data.size() : newline + 1);
  }
  content.state = FileContent::State::Read;
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

}  // namespace attrib::collectors
