#include "attributiond/sinks/jsonl_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace attrib::sinks {

Result<std::unique_ptr<JsonlSink>> JsonlSink::open(const std::string& path) {
  if (path == "-") return std::unique_ptr<JsonlSink>(new JsonlSink(path, UniqueFd(), STDOUT_FILENO));
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640));
  if (!fd.valid())
    return Error{kSinkIo, "sinks.jsonl_path: cannot open " + path + " for appending: " + std::strerror(errno)};
  const int out = fd.get();
  return std::unique_ptr<JsonlSink>(new JsonlSink(path, std::move(fd), out));
}

Status JsonlSink::deliver(const store::JobKey& key, const std::string& verdict_json) {
  // One write per line: with O_APPEND, readers (tail -f, a log shipper) never see two
  // lines interleaved. verdict v1 from nlohmann's dump() has no raw newline.
  std::string line = verdict_json;
  line += '\n';
  std::lock_guard lock(mutex_);
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(out_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return Error{kSinkIo, "verdict log " + path_ + ": cannot write job " + key.job_id + ": " + std::strerror(errno)};
    done += static_cast<size_t>(n);
  }
  return ok_status();
}

}  // namespace attrib::sinks
