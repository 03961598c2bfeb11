// The verdict log (sinks.jsonl_path): one verdict v1 per line, appended to a file or
// written to standard output.
#pragma once

#include <mutex>
#include <string>

#include "attributiond/sinks/verdict_sink.h"
#include "core/unique_fd.h"

namespace attrib::sinks {

class JsonlSink final : public VerdictSink {
 public:
  // "-": standard output. A file is created (0640) if missing and always appended to.
  static Result<std::unique_ptr<JsonlSink>> open(const std::string& path);
  const char* name() const override { return "jsonl"; }
  Status deliver(const store::JobKey& key, const std::string& verdict_json) override;

 private:
  JsonlSink(std::string path, UniqueFd fd, int out) : path_(std::move(path)), fd_(std::move(fd)), out_(out) {}
  std::string path_;
  UniqueFd fd_;  // the file; not valid for standard output
  int out_;      // where lines go: fd_ or 1
  std::mutex mutex_;  // one line at a time from the head's workers
};

}  // namespace attrib::sinks
