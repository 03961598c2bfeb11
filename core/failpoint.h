// Test-only crash points. The fault suite (tests/e2e/faults/head_killed.sh) kills the
// head at each step of an attempt to show that nothing is lost or doubled: with
// ATTRIB_FAILPOINT=<name> in its environment, the process SIGKILLs itself the first time
// it reaches failpoint("<name>"). Compiled in only with the CMake option
// ATTRIB_FAILPOINTS (on for Debug and RelWithDebInfo builds, off for Release and for the
// RPM's own build); without it failpoint() is empty and the environment is never read.
#pragma once

namespace attrib {

#ifdef ATTRIB_FAILPOINTS
void failpoint(const char* name);
#else
inline void failpoint(const char*) {}
#endif

}  // namespace attrib
