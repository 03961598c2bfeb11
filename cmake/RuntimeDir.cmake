# ATTRIB_RUNTIME_DIR: where the tests put what other users must reach (docs/architecture.md
# has why): /tmp/attrib-run-<hash of the build directory>, as scripts/lib/runtime.sh
# computes it, unless set (-DATTRIB_RUNTIME_DIR=... or the environment).
if(NOT ATTRIB_RUNTIME_DIR)
  if(DEFINED ENV{ATTRIB_RUNTIME_DIR})
    set(ATTRIB_RUNTIME_DIR $ENV{ATTRIB_RUNTIME_DIR})
  else()
    string(SHA1 build_hash "${CMAKE_BINARY_DIR}")
    string(SUBSTRING "${build_hash}" 0 10 build_hash)
    set(ATTRIB_RUNTIME_DIR /tmp/attrib-run-${build_hash})
  endif()
endif()
