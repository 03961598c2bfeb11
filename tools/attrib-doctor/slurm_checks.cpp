#include "tools/attrib-doctor/slurm_checks.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "slurm/accounting.h"
#include "slurm/slurmdbd_client.h"
#include "tools/attrib-doctor/plugstack.h"

namespace attrib::doctor {
namespace {

constexpr const char* kArea = "slurm";
constexpr const char* kReconfigure = "then `scontrol reconfigure`";

std::string mode_of(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "missing";
  char mode[8];
  snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
  return std::string("mode ") + mode;
}

void check_hook(const std::string& setting, const std::string& path, const Identity& slurm_user, Findings& out) {
  if (!std::filesystem::exists(path)) {
    out.fail(kArea, setting, path + " does not exist",
             "install attrib-epilog there (package attrib-epilog) or point " + setting + " at it, " + kReconfigure);
    return;
  }
  if (!can_execute_as(slurm_user, path)) {
    out.fail(kArea, setting, path + " is not executable by SlurmUser " + slurm_user.name + " (" + mode_of(path) + ")",
             "chmod 0755 " + path + " (and make every directory above it searchable by " + slurm_user.name + ")");
    return;
  }
  out.ok(kArea, setting, path + " is executable by SlurmUser " + slurm_user.name);
}

void check_slurmdbd(const common::Config& config, Findings& out) {
  auto connection = slurm::SlurmdbdConnection::open();
  if (!connection) {
    out.fail(kArea, "slurmdbd", connection.error().message,
             "start slurmdbd and check AccountingStorageHost in slurm.conf; run attrib-doctor as root or SlurmUser");
    return;
  }
  const auto field = slurm::comment_field_named(config.head.comment_field).value_or(slurm::CommentField::kComment);
  if (auto probe = (*connection)->probe_comment_write(config.cluster, field); !probe) {
    out.fail(kArea, "slurmdbd " + config.head.comment_field + " write", probe.error().message,
             "run attributiond as root or SlurmUser (slurmdbd lets only them modify jobs); check `cluster: " +
                 config.cluster + "` in " + config.path + " against sacctmgr's cluster list");
    return;
  }
  // slurmdbd answers "didn't affect anything or your user doesn't have privilege" alike, so
  // the dry run proves the request path; the right to write is root's and the SlurmUser's,
  // which attributiond runs as (this process's user is checked with slurmctld's answer).
  out.ok(kArea, "slurmdbd " + config.head.comment_field + " write",
         "slurmdbd took a dry-run modify of " + config.head.comment_field + " on cluster " + config.cluster +
             " (a job id no job has, rolled back)");
}

}  // namespace

void check_hooks(const slurm::CtlConfig& ctl, const Identity& slurm_user, Findings& out) {
  bool any = false;
  for (const std::string& path : ctl.epilog_slurmctld) {
    any = true;
    check_hook("EpilogSlurmctld", path, slurm_user, out);
  }
  if (ctl.job_comp_type == "jobcomp/script") {
    any = true;
    check_hook("JobCompLoc (jobcomp/script)", ctl.job_comp_loc, slurm_user, out);
  }
  if (!any)
    out.fail(kArea, "hook", "neither EpilogSlurmctld nor JobCompType=jobcomp/script is set: no job end reaches attrib",
             "EpilogSlurmctld=/usr/libexec/attrib/attrib-epilog in slurm.conf, " + std::string(kReconfigure));
}

void check_comment_storage(const common::Config& config, const slurm::CtlConfig& ctl, Findings& out) {
  if (ctl.accounting_storage_type != "accounting_storage/slurmdbd") {
    out.fail(kArea, "AccountingStorageType",
             "AccountingStorageType=" + (ctl.accounting_storage_type.empty() ? "none" : ctl.accounting_storage_type) +
                 ": attrib reads jobs from slurmdbd and writes the verdict there",
             "AccountingStorageType=accounting_storage/slurmdbd in slurm.conf, then restart slurmctld");
    return;
  }
  if (!config.head.write_comment) {
    out.ok(kArea, "AccountingStoreFlags", "head.write_comment is off: no comment field is written");
    return;
  }
  if (config.head.comment_field == "Comment" && !ctl.stores_job_comment) {
    out.fail(kArea, "AccountingStoreFlags",
             "AccountingStoreFlags lacks job_comment: slurmctld does not keep Comment in slurmdbd, so the verdict "
             "written there is overwritten or not shown by sacct",
             "AccountingStoreFlags=job_comment in slurm.conf, " + std::string(kReconfigure) +
                 " (or head.comment_field: AdminComment in " + config.path + ")");
    return;
  }
  out.ok(kArea, "AccountingStoreFlags",
         config.head.comment_field == "Comment" ? "job_comment is stored: the verdict's Comment shows in sacct"
                                                : config.head.comment_field + " needs no store flag");
}

void check_plugstack(const slurm::CtlConfig& ctl, Findings& out) {
  const std::string plugstack = ctl.plugstack.empty() ? "/etc/slurm/plugstack.conf" : ctl.plugstack;
  const std::string add_it = "add `optional /usr/lib64/slurm/spank_attrib.so` (package attrib-spank) to " + plugstack +
                             " on every node, then restart slurmd";
  auto lines = read_plugstack(plugstack, ctl.plugin_dir);
  if (!lines) {
    out.warn(kArea, "SPANK plugin", lines.error().message + ": spank_attrib.so is not loaded (no task records)",
             add_it);
    return;
  }
  const PluginLine* attrib = nullptr;
  for (const PluginLine& line : *lines)
    if (std::filesystem::path(line.path).filename() == "spank_attrib.so") attrib = &line;
  if (attrib == nullptr) {
    out.warn(kArea, "SPANK plugin",
             "spank_attrib.so is not in " + plugstack + ": no task records (a verdict cannot name the failing task)",
             add_it);
    return;
  }
  auto built_for = spank_built_for(attrib->path);
  if (!built_for) {
    out.fail(kArea, "SPANK plugin", attrib->file + " loads " + attrib->path + ": " + built_for.error().message,
             "install attrib-spank, or fix the path at " + attrib->file);
    return;
  }
  if (!*built_for) {
    out.warn(kArea, "SPANK plugin", attrib->path + " does not say which Slurm it was built for (an older attrib-spank)",
             "install the attrib-spank package built for Slurm " + release_of(ctl.version));
    return;
  }
  if (release_of(**built_for) != release_of(ctl.version)) {
    out.fail(kArea, "SPANK plugin",
             attrib->path + " was built for Slurm " + **built_for + ", slurmctld runs " + ctl.version +
                 ": slurmstepd refuses it" + (attrib->required ? " and every job on the node fails" : ""),
             "install the attrib-spank package built for Slurm " + release_of(ctl.version) + ", then restart slurmd");
    return;
  }
  out.ok(kArea, "SPANK plugin",
         attrib->path + " (" + (attrib->required ? "required" : "optional") + ", " + attrib->file +
             ") built for Slurm " + **built_for);
}

std::optional<Identity> check_slurm(const common::Config& config, Findings& out) {
  auto ctl = slurm::load_ctl_config();
  if (!ctl) {
    out.fail(kArea, "slurmctld", ctl.error().message,
             "start slurmctld; run attrib-doctor where slurm.conf (or SLURM_CONF) names it");
    return std::nullopt;
  }
  out.ok(kArea, "slurmctld", "answers: Slurm " + ctl->version + ", SlurmUser=" + ctl->slurm_user);
  if (geteuid() != 0 && geteuid() != ctl->slurm_uid)
    out.fail("doctor", "user",
             "runs as uid " + std::to_string(geteuid()) + ": slurmdbd, the spool and the agents answer only root and " +
                 ctl->slurm_user + ", so their checks say nothing",
             "run attrib-doctor as root or " + ctl->slurm_user);
  const passwd* user = getpwuid(ctl->slurm_uid);
  const Identity slurm_user{ctl->slurm_user, ctl->slurm_uid, user ? user->pw_gid : ctl->slurm_uid};
  if (config.auth.enabled() && config.auth.slurm_user != ctl->slurm_user)
    out.fail(kArea, "SlurmUser",
             "auth.slurm_user is " + config.auth.slurm_user + ", slurmctld runs as " + ctl->slurm_user +
                 ": every hook report would be refused",
             "auth.slurm_user: " + ctl->slurm_user + " in " + config.path + ", then restart attributiond");
  check_hooks(*ctl, slurm_user, out);
  check_comment_storage(config, *ctl, out);
  check_plugstack(*ctl, out);
  check_slurmdbd(config, out);
  return slurm_user;
}

}  // namespace attrib::doctor
