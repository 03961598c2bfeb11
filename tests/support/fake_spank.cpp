#include "tests/support/fake_spank.h"

#include <cstdarg>
#include <cstdio>

namespace fake_spank {

State fake;

void reset() { fake = State{}; }

int invoke_option(const std::string& name, const char* optarg) {
  for (const spank_option& option : fake.options) {
    if (name == option.name) return option.cb(option.val, optarg, fake.context == S_CTX_REMOTE);
  }
  return -99;
}

namespace {

std::string format(const char* fmt, va_list args) {
  char buffer[2048];
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  return buffer;
}

template <typename T>
spank_err_t give(std::optional<T> value, va_list args) {
  T* out = va_arg(args, T*);
  if (!value) return ESPANK_NOT_AVAIL;
  *out = *value;
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}

}  // namespace
}  // namespace fake_spank

using fake_spank::fake;

extern "C" {

spank_context_t spank_context(void) { return fake.context; }

int spank_remote(spank_t) { return fake.context == S_CTX_REMOTE; }

spank_err_t spank_option_register(spank_t, struct spank_option* opt) {
  fake.registered_options.push_back(opt->name);
  fake.options.push_back(*opt);
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}

spank_err_t spank_get_item(spank_t, spank_item_t item, ...) {
  va_list args;
  // The signature is Slurm's (<slurm/spank.h>): its last named parameter is an enum, which
  // clang warns about for va_start; the values passed after it are pointers, read as such.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wvarargs"
#endif
  va_start(args, item);
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
  spank_err_t result = ESPANK_BAD_ARG;
  switch (item) {
    case S_JOB_ID:
      result = fake_spank::give(fake.job_id, args);
      break;
    case S_JOB_ARRAY_ID:
      result = fake_spank::give(fake.array_job_id, args);
      break;
    case S_JOB_ARRAY_TASK_ID:
      result = fake_spank::give(fake.array_task_id, args);
      break;
    case S_JOB_STEPID:
      result = fake_spank::give(fake.step_id, args);
      break;
    case S_TASK_GLOBAL_ID:
      result = fake_spank::give(fake.global_rank, args);
      break;
    case S_TASK_ID:
      result = fake_spank::give(fake.local_rank, args);
      break;
    case S_TASK_PID:
      result = fake_spank::give(std::optional<pid_t>(fake.pid), args);
      break;
    case S_TASK_EXIT_STATUS:
      result = fake_spank::give(fake.exit_status, args);
      break;
    case S_JOB_UID:
      result = fake_spank::give(std::optional<uid_t>(fake.uid), args);
      break;
    case S_JOB_GID:
      result = fake_spank::give(std::optional<gid_t>(fake.gid), args);
      break;
    default:
      break;
  }
  va_end(args);
  return result;
}

spank_err_t spank_getenv(spank_t, const char* var, char* buf, int len) {
  auto it = fake.env.find(var);
  if (it == fake.env.end()) return ESPANK_ENV_NOEXIST;
  std::snprintf(buf, static_cast<size_t>(len), "%s", it->second.c_str());
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}

spank_err_t spank_setenv(spank_t, const char* var, const char* val, int overwrite) {
  if (!overwrite && fake.env.count(var)) return ESPANK_ENV_EXISTS;
  fake.env[var] = val;
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}

void slurm_error(const char* format, ...) {
  va_list args;
  va_start(args, format);
  fake.errors.push_back(fake_spank::format(format, args));
  va_end(args);
}

void slurm_debug(const char* format, ...) {
  va_list args;
  va_start(args, format);
  fake.debugs.push_back(fake_spank::format(format, args));
  va_end(args);
}

}  // extern "C"
