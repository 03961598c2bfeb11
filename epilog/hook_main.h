// How both programs Slurm runs as its job-end hook (attrib-epilog and, in its place,
// attrib-epilog-send) end: whatever happens, exit 0. A non-zero slurmd Epilog drains the
// node, and an exception must not either.
#pragma once

#include <cstdio>
#include <exception>

namespace attrib::epilog {

template <typename Run>
int hook_main(const char* program, int argc, char** argv, Run run) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: unexpected error: %s\n", program, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: unexpected error\n", program);
  }
  return 0;  // never let a hook failure touch the job or drain a node
}

}  // namespace attrib::epilog
