#include "core/failpoint.h"

#ifdef ATTRIB_FAILPOINTS

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace attrib {

void failpoint(const char* name) {
  static const char* const armed = std::getenv("ATTRIB_FAILPOINT");
  if (armed == nullptr || std::strcmp(armed, name) != 0) return;
  // Said on stderr (the daemon's log) so the test knows which step it died at.
  std::fprintf(stderr, "failpoint %s: SIGKILL\n", name);
  std::fflush(stderr);
  ::kill(::getpid(), SIGKILL);
}

}  // namespace attrib

#else

namespace attrib {

// A shipping build: no crash point, and no reading of ATTRIB_FAILPOINT.
void failpoint(const char*) {}

}  // namespace attrib

#endif
