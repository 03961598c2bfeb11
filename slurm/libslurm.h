// Slurm's C API as attrib's Slurm adapter uses it: the one place that includes libslurm's
// headers and the one place where the Slurm releases attrib builds against differ at
// compile time, by SLURM_VERSION_NUMBER. Built and tested on 22.05 (Debian 12) and 24.11
// (Debian 13); docs/admin-guide.md has the supported-versions table.
//
// What differs between them, as their headers and libslurm.so's exports show:
// - 23.11 removed the pointer typedefs List, ListIterator and hostlist_t-as-pointer
//   (list_t, list_itr_t and hostlist_t name the structs since). The structs kept their
//   names, so the adapter holds `xlist*`, `listIterator*` and `hostlist*` on every release.
// - The state-reason name function is exported but declared in no header, and was
//   renamed: slurm_job_reason_string (22.05) became slurm_job_state_reason_string.
// - slurmctld's configuration: EpilogSlurmctld is one path in 22.05 and a list with its
//   count in 24.11 (epilog_slurmctld_cnt); the job_comment store flag was renamed from
//   CTL_CONF_SJC to CONF_FLAG_SJC.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

// Exported by libslurm (it is what sacct prints) but not declared in its headers.
char* slurm_job_state_string(uint32_t state);
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
const char* slurm_job_state_reason_string(enum job_state_reason inx);
#else
char* slurm_job_reason_string(enum job_state_reason inx);
#endif
}

namespace attrib::slurm {

// EpilogSlurmctld's paths, on either shape of the field: the list form is told apart by
// its count field, which the single path lacks (the int overload is preferred when both fit).
namespace detail {
template <class Conf>
auto epilog_slurmctld_paths(const Conf& conf, int) -> decltype(conf.epilog_slurmctld_cnt, std::vector<std::string>()) {
  std::vector<std::string> paths;
  for (uint32_t i = 0; i < conf.epilog_slurmctld_cnt; ++i)
    if (conf.epilog_slurmctld[i] != nullptr) paths.emplace_back(conf.epilog_slurmctld[i]);
  return paths;
}
template <class Conf>
std::vector<std::string> epilog_slurmctld_paths(const Conf& conf, long) {
  if (conf.epilog_slurmctld == nullptr || *conf.epilog_slurmctld == '\0') return {};
  return {conf.epilog_slurmctld};
}
}  // namespace detail
template <class Conf>
std::vector<std::string> epilog_slurmctld_paths(const Conf& conf) {
  return detail::epilog_slurmctld_paths(conf, 0);
}

// AccountingStoreFlags=job_comment in slurmctld's conf_flags.
#ifdef CONF_FLAG_SJC
inline constexpr uint64_t kStoreJobCommentFlag = CONF_FLAG_SJC;
#else
inline constexpr uint64_t kStoreJobCommentFlag = CTL_CONF_SJC;
#endif

// The name sacct prints for a job's state reason ("NodeDown", "None").
inline const char* state_reason_name(enum job_state_reason reason) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
  return slurm_job_state_reason_string(reason);
#else
  return slurm_job_reason_string(reason);
#endif
}

}  // namespace attrib::slurm
