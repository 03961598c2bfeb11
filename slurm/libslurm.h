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
#pragma once

#include <cstdint>

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

// The name sacct prints for a job's state reason ("NodeDown", "None").
inline const char* state_reason_name(enum job_state_reason reason) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
  return slurm_job_state_reason_string(reason);
#else
  return slurm_job_reason_string(reason);
#endif
}

}  // namespace attrib::slurm
