#include "spank/task_record.h"

#include <sys/wait.h>

#include <cstdio>

namespace attrib::spank {

std::string step_label(uint32_t step_id) {
  switch (step_id) {
    case kBatchStep:
      return "batch";
    case kExternStep:
      return "extern";
    case kInteractiveStep:
      return "interactive";
    default:
      return std::to_string(step_id);
  }
}

ExitStatus decode_wait_status(int raw_status) {
  ExitStatus status;
  if (WIFEXITED(raw_status)) {
    status.exit_code = WEXITSTATUS(raw_status);
  } else if (WIFSIGNALED(raw_status)) {
    status.signal = WTERMSIG(raw_status);
    status.core_dumped = WCOREDUMP(raw_status);
  }
  return status;
}

std::string record_file_name(uint32_t step_id, uint32_t global_rank) {
  return step_label(step_id) + "." + std::to_string(global_rank) + ".json";
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

namespace {

// The fields both lines share, in a fixed order.
std::string identity(const TaskRecord& r) {
  return "\"job_id\":" + std::to_string(r.job_id) + ",\"step_id\":" + std::to_string(r.step_id) +
         ",\"step\":" + json_string(step_label(r.step_id)) + ",\"node\":" + json_string(r.node) +
         ",\"global_rank\":" + std::to_string(r.global_rank) + ",\"local_rank\":" + std::to_string(r.local_rank) +
         ",\"pid\":" + std::to_string(r.pid) + ",\"start_us\":" + std::to_string(r.start_us) +
         (r.gpus.empty() ? "" : ",\"gpus\":" + json_string(r.gpus));
}

}  // namespace

std::string record_text(const TaskRecord& record) {
  std::string text = "{\"v\":1,\"event\":\"task_start\"," + identity(record) + "}\n";
  if (record.end_us) {
    const ExitStatus status = decode_wait_status(record.raw_status);
    text += "{\"v\":1,\"event\":\"task_exit\"," + identity(record) + ",\"end_us\":" + std::to_string(*record.end_us) +
            ",\"raw_status\":" + std::to_string(record.raw_status) +
            ",\"exit_code\":" + std::to_string(status.exit_code) + ",\"signal\":" + std::to_string(status.signal) +
            ",\"core_dumped\":" + (status.core_dumped ? "true" : "false") + "}\n";
  }
  return text;
}

}  // namespace attrib::spank
