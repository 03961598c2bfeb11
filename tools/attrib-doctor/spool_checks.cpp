#include "tools/attrib-doctor/spool_checks.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

#include "common/spool.h"
#include "common/spool_file.h"

namespace attrib::doctor {
namespace {

namespace fs = std::filesystem;
constexpr const char* kArea = "spool";
constexpr TimeUs kMinute = 60LL * 1000 * 1000;

std::optional<TimeUs> mtime_us(const fs::path& file) {
  struct stat st {};
  if (stat(file.c_str(), &st) != 0) return std::nullopt;
  return static_cast<TimeUs>(st.st_mtim.tv_sec) * 1000000 + st.st_mtim.tv_nsec / 1000;
}

void note_oldest(const fs::path& file, std::optional<TimeUs>& oldest) {
  const auto t = mtime_us(file);
  if (t && (!oldest || *t < *oldest)) oldest = t;
}

void check_free_space(const std::string& dir, Findings& out) {
  std::error_code error;
  const fs::space_info space = fs::space(dir, error);
  if (error || space.capacity == 0) return;
  const double free_share = static_cast<double>(space.available) / static_cast<double>(space.capacity);
  const uint64_t free_mib = space.available / (1024 * 1024);
  const std::string saw = std::to_string(free_mib) + " MiB free (" +
                          std::to_string(static_cast<int>(free_share * 100)) + " %) on the filesystem of " + dir;
  if (free_mib < 64)
    out.fail(kArea, "free space", saw + ": a full spool loses job ends", "free space on that filesystem");
  else if (free_share < 0.05)
    out.warn(kArea, "free space", saw, "free space on that filesystem before it fills");
  else
    out.ok(kArea, "free space", saw);
}

}  // namespace

std::string age_text(TimeUs now, TimeUs then) {
  const double minutes = static_cast<double>(now - then) / static_cast<double>(kMinute);
  char text[32];
  if (minutes < 120)
    snprintf(text, sizeof text, "%.0f min", minutes);
  else if (minutes < 48 * 60)
    snprintf(text, sizeof text, "%.1f h", minutes / 60);
  else
    snprintf(text, sizeof text, "%.0f d", minutes / (24 * 60));
  return text;
}

SpoolBacklog spool_backlog(const std::string& dir) {
  SpoolBacklog backlog;
  for (const fs::path& file : common::list_spool_files(dir)) {
    ++backlog.waiting;
    note_oldest(file, backlog.oldest_waiting);
  }
  std::error_code error;
  for (fs::directory_iterator it(fs::path(dir) / "bad", error), end; !error && it != end; it.increment(error)) {
    if (!it->is_regular_file(error)) continue;
    ++backlog.quarantined;
    note_oldest(it->path(), backlog.oldest_quarantined);
  }
  return backlog;
}

void check_spool(const common::Config& config, const std::optional<Identity>& hook_user, TimeUs now, Findings& out) {
  const std::string& dir = config.head.spool_dir;
  if (config.epilog.delivery == "spool" && config.epilog.spool_dir != dir)
    out.fail(kArea, "paths",
             "epilog.spool_dir " + config.epilog.spool_dir + " is not head.spool_dir " + dir +
                 ": the head never sees what the hook spools",
             "set both to the same directory in " + config.path);
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    out.fail(kArea, "directory", dir + " does not exist",
             "install -d -o " + (hook_user ? hook_user->name : std::string("slurm")) + " -m 0750 " + dir);
    return;
  }
  if (hook_user) {
    if (can_write_in_as(*hook_user, dir))
      out.ok(kArea, "writable", dir + " is writable by " + hook_user->name + ", who runs the hook");
    else
      out.fail(kArea, "writable", dir + " is not writable by " + hook_user->name + ", who runs the hook",
               "chown " + hook_user->name + ": " + dir + " && chmod 0750 " + dir);
  }
  check_free_space(dir, out);
  const SpoolBacklog backlog = spool_backlog(dir);
  if (backlog.waiting > 0 && backlog.oldest_waiting && now - *backlog.oldest_waiting > 10 * kMinute)
    out.warn(kArea, "backlog",
             std::to_string(backlog.waiting) + " job ends waiting, the oldest for " +
                 age_text(now, *backlog.oldest_waiting) + ": the head is not taking them",
             "start attributiond on this host (systemctl status attributiond-head) with head.spool_dir " + dir);
  else
    out.ok(kArea, "backlog", std::to_string(backlog.waiting) + " job ends waiting");
  if (backlog.quarantined > 0)
    out.warn(kArea, "quarantined",
             std::to_string(backlog.quarantined) + " files in " + dir + "/bad, the oldest " +
                 age_text(now, backlog.oldest_quarantined.value_or(now)) +
                 " old: not owned by root or the SlurmUser, or not a job end",
             "read attributiond's log for 'quarantined'; move a fixed file back into " + dir);
  else
    out.ok(kArea, "quarantined", "nothing in " + dir + "/bad");
}

}  // namespace attrib::doctor
