#include "epilog/job_report.h"

#include <charconv>

#include "core/utf8.h"

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
void set_exit(JobReport& report, const std::string& text) {
  auto colon = text.find(':');
  if (colon != std::string::npos) {
    report.exit_code = static_cast<int32_t>(to_int(text.substr(0, colon)).value_or(0));
    report.signal = static_cast<int32_t>(to_int(text.substr(colon + 1)).value_or(0));
    return;
  }
  if (auto raw = to_int(text)) {
    report.exit_code = static_cast<int32_t>((*raw >> 8) & 0xff);
    report.signal = static_cast<int32_t>(*raw & 0x7f);
  }
}

// A heterogeneous job's component reports under the het job's id (judged once, for all
// components), with its offset. Slurm sets the id to 0 (or leaves it out) for other jobs.
void set_het_component(JobReport& report, const std::string* het_job, const std::string* offset) {
  if (het_job == nullptr || offset == nullptr || *het_job == "0") return;
  const auto id = to_int(*het_job);
  const auto number = to_int(*offset);
  if (!id || !number || *id <= 0 || *number < 0 || *number > 0xFFFFFFFELL) return;
  report.job_id = *het_job;
  report.het_job_offset = static_cast<uint32_t>(*number);
}

// Protocol buffers' wire format, the three types JobEnded uses.
void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}
void put_tag(std::string& out, int field, int wire_type) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}
void put_bytes(std::string& out, int field, const std::string& value) {
  put_tag(out, field, 2);
  put_varint(out, value.size());
  out += value;
}
// proto3 leaves fields at their default out.
void put_string(std::string& out, int field, const std::string& value) {
  if (!value.empty()) put_bytes(out, field, value);
}
void put_int(std::string& out, int field, int64_t value) {  // int32 and int64: a negative one takes 10 bytes
  if (value == 0) return;
  put_tag(out, field, 0);
  put_varint(out, static_cast<uint64_t>(value));
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

Result<JobReport> job_report_from_env(const Environment& env, TimeUs now) {
  JobReport report;
  report.hook_time_us = now;
  if (const auto* state = get(env, "JOBSTATE")) {
    report.hook = HookKind::JobcompScript;
    report.state = *state;
    if (const auto* id = get(env, "JOBID")) report.job_id = *id;
    report.slurm_job_id = report.job_id;
    // Array tasks: ARRAYJOBID is 0 and ARRAYTASKID NO_VAL (4294967294) for other jobs.
    if (const auto* array_job = get(env, "ARRAYJOBID"))
      if (const auto* task = get(env, "ARRAYTASKID"); task && *array_job != "0" && *task != "4294967294")
        report.job_id = *array_job + "_" + *task;
    set_het_component(report, get(env, "HETJOBID"), get(env, "HETJOBOFFSET"));
    if (const auto* nodes = get(env, "NODES")) report.node_list = *nodes;
    if (const auto* code = get(env, "EXITCODE")) set_exit(report, *code);
    if (const auto* start = get(env, "START")) report.start_time_us = epoch_us(*start);
    if (const auto* end = get(env, "END")) report.end_time_us = epoch_us(*end);
    if (const auto* user = get(env, "USERNAME")) report.user = *user;
    if (const auto* uid = get(env, "UID")) report.uid = static_cast<uint32_t>(to_int(*uid).value_or(0));
    if (const auto* name = get(env, "JOBNAME")) report.job_name = *name;
    if (const auto* out = get(env, "STDOUT")) report.stdout_path = *out;
    if (const auto* err = get(env, "STDERR")) report.stderr_path = *err;
  } else {
    report.hook = get(env, "SLURMD_NODENAME") ? HookKind::EpilogSlurmd : HookKind::EpilogSlurmctld;
    if (const auto* id = get(env, "SLURM_JOB_ID")) report.job_id = *id;
    report.slurm_job_id = report.job_id;
    // Array tasks are attributed under their own id ("4242_7"), the id users see.
    if (const auto* array_job = get(env, "SLURM_ARRAY_JOB_ID"))
      if (const auto* task = get(env, "SLURM_ARRAY_TASK_ID")) report.job_id = *array_job + "_" + *task;
    set_het_component(report, get(env, "SLURM_HET_JOB_ID"), get(env, "SLURM_HET_JOB_OFFSET"));
    // The first component's EpilogSlurmctld also knows every component's nodes.
    if (const auto* nodes = get(env, "SLURM_HET_JOB_NODELIST"); nodes && report.het_job_offset)
      report.node_list = *nodes;
    else if (const auto* nodes = get(env, "SLURM_JOB_NODELIST"))
      report.node_list = *nodes;
    else if (const auto* node = get(env, "SLURMD_NODENAME"))
      report.node_list = *node;
    if (const auto* code = get(env, "SLURM_JOB_EXIT_CODE2"))
      set_exit(report, *code);
    else if (const auto* raw = get(env, "SLURM_JOB_EXIT_CODE"))
      set_exit(report, *raw);
    // From Slurm 23.02 (none in 22.05): the attempt's start as slurmctld sends it to slurmdbd,
    // what tells a requeued job's attempts apart when slurmdbd has not recorded the newest
    // yet (pipeline::rows_show_reported_attempt). "0" (never started) stays unknown.
    if (const auto* start = get(env, "SLURM_JOB_START_TIME")) report.start_time_us = epoch_us(*start);
    if (const auto* user = get(env, "SLURM_JOB_USER")) report.user = *user;
    if (const auto* uid = get(env, "SLURM_JOB_UID")) report.uid = static_cast<uint32_t>(to_int(*uid).value_or(0));
    if (const auto* name = get(env, "SLURM_JOB_NAME")) report.job_name = *name;
    if (const auto* out = get(env, "SLURM_JOB_STDOUT")) report.stdout_path = *out;
    if (const auto* err = get(env, "SLURM_JOB_STDERR")) report.stderr_path = *err;
  }
  if (const auto* cluster = get(env, "SLURM_CLUSTER_NAME")) report.cluster = *cluster;

  // SPANK options reach EpilogSlurmctld as SPANK__SLURM_SPANK_OPTION_<plugin>_<option>.
  static const std::string kSpankPrefix = "SPANK__SLURM_SPANK_OPTION_";
  for (const auto& [name, value] : env)
    if (name.rfind(kSpankPrefix, 0) == 0) report.spank_options[to_valid_utf8(name.substr(kSpankPrefix.size()))] = value;

  if (report.job_id.empty())
    return Error{kEpilogEnv, "no SLURM_JOB_ID or JOBID in the environment: not run by Slurm as a hook"};
  // Job names, users and paths are the user's bytes: proto3 strings must be UTF-8.
  for (std::string* text : {&report.job_id, &report.cluster, &report.node_list, &report.state, &report.user,
                            &report.job_name, &report.stdout_path, &report.stderr_path, &report.slurm_job_id})
    make_valid_utf8(*text);
  for (auto& [name, value] : report.spank_options) make_valid_utf8(value);
  return report;
}

std::string encode_job_ended(const JobReport& r) {
  std::string out;
  put_string(out, 1, r.job_id);
  put_string(out, 2, r.cluster);
  put_string(out, 3, r.node_list);
  put_int(out, 4, r.exit_code);
  put_int(out, 5, r.signal);
  put_string(out, 6, r.state);
  put_int(out, 7, static_cast<int>(r.hook));
  for (const auto& [key, value] : r.spank_options) {  // map<string, string>: one entry message each
    std::string entry;
    put_string(entry, 1, key);
    put_string(entry, 2, value);
    put_bytes(out, 8, entry);
  }
  put_int(out, 9, r.hook_time_us);
  put_string(out, 10, r.user);
  put_int(out, 11, r.uid);
  put_int(out, 12, r.start_time_us);
  put_int(out, 13, r.end_time_us);
  put_string(out, 14, r.job_name);
  put_string(out, 15, r.stdout_path);
  put_string(out, 16, r.stderr_path);
  put_string(out, 17, r.slurm_job_id);
  if (r.het_job_offset) {  // proto3 `optional`: present even at 0
    put_tag(out, 18, 0);
    put_varint(out, *r.het_job_offset);
  }
  return out;
}

std::string describe(const JobReport& r) {
  static const char* kHooks[] = {"HOOK_KIND_UNSPECIFIED", "HOOK_KIND_EPILOG_SLURMCTLD", "HOOK_KIND_JOBCOMP_SCRIPT",
                                 "HOOK_KIND_EPILOG_SLURMD"};
  std::string out;
  auto line = [&](const char* name, const std::string& value) {
    if (!value.empty()) out += std::string(name) + ": " + value + "\n";
  };
  auto number = [&](const char* name, int64_t value) {
    if (value != 0) out += std::string(name) + ": " + std::to_string(value) + "\n";
  };
  line("job_id", r.job_id);
  line("cluster", r.cluster);
  line("node_list", r.node_list);
  number("exit_code", r.exit_code);
  number("signal", r.signal);
  line("state", r.state);
  line("hook", kHooks[static_cast<int>(r.hook)]);
  for (const auto& [key, value] : r.spank_options) out += "spank_options { " + key + ": " + value + " }\n";
  number("hook_time_us", r.hook_time_us);
  line("user", r.user);
  number("uid", r.uid);
  number("start_time_us", r.start_time_us);
  number("end_time_us", r.end_time_us);
  line("job_name", r.job_name);
  line("stdout_path", r.stdout_path);
  line("stderr_path", r.stderr_path);
  line("slurm_job_id", r.slurm_job_id);
  if (r.het_job_offset) out += "het_job_offset: " + std::to_string(*r.het_job_offset) + "\n";
  return out;
}

}  // namespace attrib::epilog
