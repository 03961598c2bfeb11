// Test-only crash points. The fault suite (tests/e2e/faults/head_killed.sh) kills the
// head at each step of an attempt to show that nothing is lost or doubled: with
// ATTRIB_FAILPOINT=<name> in its environment, the process SIGKILLs itself the first time
// it reaches failpoint("<name>"). The crash is compiled in only with the CMake option
// ATTRIB_FAILPOINTS (on for Debug and RelWithDebInfo builds, off for Release and for the
// RPM's own build); without it failpoint() does nothing and the environment is never
// read. The option reaches core/failpoint.cpp alone, not the callers: every other object
// is the same in a test build and a shipping build, so the RPM's build takes them from
// the compiler cache (scripts/lib/ccache.sh).
#pragma once

namespace attrib {

void failpoint(const char* name);

}  // namespace attrib
