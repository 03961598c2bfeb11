#include "core/failpoint.h"

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
