#include "epilog/hook_env.h"

namespace attrib::epilog {

Result<v1::JobEnded> job_ended_from_env(const Environment& env, TimeUs now) {
  auto report = job_report_from_env(env, now);
  if (!report) return report.error();
  v1::JobEnded message;
  if (!message.ParseFromString(encode_job_ended(*report)))
    return Error{kEpilogEnv, "the hook's report does not decode as attrib.v1.JobEnded"};
  return message;
}

}  // namespace attrib::epilog
