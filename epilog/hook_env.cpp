#include "epilog/hook_env.h"

#include <charconv>

#include "common/proto_text.h"

extern char** environ;

namespace attrib::epilog {
namespace {

const std::string* get(const Environment& env, const std::string& name) {
  auto it = env.find(name);
  return (it == env.end() || it->second.empty()) ? nullptr : &it->second;
}

std::optional<long long> to_int(const std::string& text) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Epoch seconds as microseconds; 0 (unknown) for anything that is not a time.
int64_t epoch_us(const std::string& text) {
  const auto seconds = to_int(text);
  return seconds ? epoch_seconds_to_us(*seconds).value_or(0) : 0;
}

// "3:0" (exit code : signal) as Slurm prints it, or a raw wait status such as 768.
void set_exit(v1::JobEnded& message, const std::string& text) {
  auto colon = text.find(':');
  if (colon != std::string::npos) {
    message.set_exit_code(static_cast<int>(to_int(text.substr(0, colon)).value_or(0)));
    message.set_signal(static_cast<int>(to_int(text.substr(colon + 1)).value_or(0)));
    return;
  }
  if (auto raw = to_int(text)) {
    message.set_exit_code(static_cast<int>((*raw >> 8) & 0xff));
    message.set_signal(static_cast<int>(*raw & 0x7f));
  }
}

// A heterogeneous job's component reports under the het job's id (judged once, for all
// components), with its offset. Slurm sets the id to 0 (or leaves it out) for other jobs.
void set_het_component(v1::JobEnded& message, const std::string* het_job, const std::string* offset) {
  if (het_job == nullptr || offset == nullptr || *het_job == "0") return;
  const auto id = to_int(*het_job);
  const auto number = to_int(*offset);
  if (!id || !number || *id <= 0 || *number < 0 || *number > 0xFFFFFFFELL) return;
  message.set_job_id(*het_job);
  message.set_het_job_offset(static_cast<uint32_t>(*number));
}

}  // namespace

Environment current_environment() {
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string text(*entry);
    auto eq = text.find('=');
    if (eq != std::string::npos) env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  return env;
}

Result<v1::JobEnded> job_ended_from_env(const Environment& env, TimeUs now) {
  v1::JobEnded message;
  message.set_hook_time_us(now);
  if (const auto* state = get(env, "JOBSTATE")) {
    message.set_hook(v1::HOOK_KIND_JOBCOMP_SCRIPT);
    message.set_state(*state);
    if (const auto* id = get(env, "JOBID")) message.set_job_id(*id);
    message.set_slurm_job_id(message.job_id());
    // Array tasks: ARRAYJOBID is 0 and ARRAYTASKID NO_VAL (4294967294) for other jobs.
    if (const auto* array_job = get(env, "ARRAYJOBID"))
      if (const auto* task = get(env, "ARRAYTASKID"); task && *array_job != "0" && *task != "4294967294")
        message.set_job_id(*array_job + "_" + *task);
    set_het_component(message, get(env, "HETJOBID"), get(env, "HETJOBOFFSET"));
    if (const auto* nodes = get(env, "NODES")) message.set_node_list(*nodes);
    if (const auto* code = get(env, "EXITCODE")) set_exit(message, *code);
    if (const auto* start = get(env, "START")) message.set_start_time_us(epoch_us(*start));
    if (const auto* end = get(env, "END")) message.set_end_time_us(epoch_us(*end));
    if (const auto* user = get(env, "USERNAME")) message.set_user(*user);
    if (const auto* uid = get(env, "UID")) message.set_uid(static_cast<uint32_t>(to_int(*uid).value_or(0)));
    if (const auto* name = get(env, "JOBNAME")) message.set_job_name(*name);
    if (const auto* out = get(env, "STDOUT")) message.set_stdout_path(*out);
    if (const auto* err = get(env, "STDERR")) message.set_stderr_path(*err);
  } else {
    message.set_hook(get(env, "SLURMD_NODENAME") ? v1::HOOK_KIND_EPILOG_SLURMD : v1::HOOK_KIND_EPILOG_SLURMCTLD);
    if (const auto* id = get(env, "SLURM_JOB_ID")) message.set_job_id(*id);
    message.set_slurm_job_id(message.job_id());
    // Array tasks are attributed under their own id ("4242_7"), the id users see.
    if (const auto* array_job = get(env, "SLURM_ARRAY_JOB_ID"))
      if (const auto* task = get(env, "SLURM_ARRAY_TASK_ID")) message.set_job_id(*array_job + "_" + *task);
    set_het_component(message, get(env, "SLURM_HET_JOB_ID"), get(env, "SLURM_HET_JOB_OFFSET"));
    // The first component's EpilogSlurmctld also knows every component's nodes.
    if (const auto* nodes = get(env, "SLURM_HET_JOB_NODELIST"); nodes && message.has_het_job_offset())
      message.set_node_list(*nodes);
    else if (const auto* nodes = get(env, "SLURM_JOB_NODELIST"))
      message.set_node_list(*nodes);
    else if (const auto* node = get(env, "SLURMD_NODENAME"))
      message.set_node_list(*node);
    if (const auto* code = get(env, "SLURM_JOB_EXIT_CODE2"))
      set_exit(message, *code);
    else if (const auto* raw = get(env, "SLURM_JOB_EXIT_CODE"))
      set_exit(message, *raw);
    if (const auto* user = get(env, "SLURM_JOB_USER")) message.set_user(*user);
    if (const auto* uid = get(env, "SLURM_JOB_UID")) message.set_uid(static_cast<uint32_t>(to_int(*uid).value_or(0)));
    if (const auto* name = get(env, "SLURM_JOB_NAME")) message.set_job_name(*name);
    if (const auto* out = get(env, "SLURM_JOB_STDOUT")) message.set_stdout_path(*out);
    if (const auto* err = get(env, "SLURM_JOB_STDERR")) message.set_stderr_path(*err);
  }
  if (const auto* cluster = get(env, "SLURM_CLUSTER_NAME")) message.set_cluster(*cluster);

  // SPANK options reach EpilogSlurmctld as SPANK__SLURM_SPANK_OPTION_<plugin>_<option>.
  static const std::string kSpankPrefix = "SPANK__SLURM_SPANK_OPTION_";
  for (const auto& [name, value] : env)
    if (name.rfind(kSpankPrefix, 0) == 0) (*message.mutable_spank_options())[name.substr(kSpankPrefix.size())] = value;

  if (message.job_id().empty())
    return Error{kEpilogEnv, "no SLURM_JOB_ID or JOBID in the environment: not run by Slurm as a hook"};
  // Job names, users and paths are the user's bytes: proto3 strings must be UTF-8.
  common::make_text_valid_utf8(message);
  return message;
}

}  // namespace attrib::epilog
