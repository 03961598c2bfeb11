// The hook's environment: epilog/job_report.h, which turns what slurmctld
// (EpilogSlurmctld, jobcomp/script) or slurmd (Epilog) put in the environment, job names,
// users, paths and SPANK options included, into the JobEnded bytes the hook spools,
// encoded by hand (the hook links no protobuf).
//
// Input: the environment as /proc/<pid>/environ holds it, NUL-separated NAME=value
// entries (a newline also separates, so seeds stay readable). Property: whenever the
// environment is a hook's (it has a job id), the bytes parse with libprotobuf as valid
// proto3 (strings UTF-8) and protobuf's own serialization of them reads back the same.
#include <string>

#include <google/protobuf/util/message_differencer.h>

#include "epilog/hook_env.h"
#include "fuzz/fuzz_support.h"

namespace attrib::fuzz {

int hook_env(const uint8_t* data, size_t size) {
  epilog::Environment env;
  std::string_view text = as_text(data, size);
  while (!text.empty()) {
    size_t end = text.find_first_of(std::string_view("\0\n", 2));
    const std::string_view entry = text.substr(0, end);
    const size_t eq = entry.find('=');
    if (eq != std::string_view::npos) env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  auto report = epilog::job_report_from_env(env, 1796034000LL * 1000000);
  if (!report) return 0;
  auto message = epilog::job_ended_from_env(env, 1796034000LL * 1000000);
  require(message.ok(), "the hook's hand-encoded JobEnded does not parse with protobuf");
  require(!message->job_id().empty(), "a JobEnded without a job id");
  std::string bytes;
  require(message->SerializeToString(&bytes), "the hook's JobEnded does not serialize");
  v1::JobEnded back;
  require(back.ParseFromString(bytes), "the hook's JobEnded does not parse back (invalid UTF-8?)");
  require(google::protobuf::util::MessageDifferencer::Equals(back, *message),
          "the hook's JobEnded changes when read back");
  return 0;
}

}  // namespace attrib::fuzz

ATTRIB_FUZZ_TARGET(hook_env)
