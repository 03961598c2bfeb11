#!/usr/bin/env bash
# Installs what is missing, then configures and builds attrib into BUILD_DIR
# (default: <checkout>/build). Extra arguments go to the CMake configure step.
# ATTRIB_BUILD_TARGETS="a b": build only those targets (the demo builds what it runs).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTRIB_BUILD_DIR:-$src/build}
"$src/scripts/install-deps.sh"
source "$src/scripts/lib/ccache.sh"
ccache_env "$src"
# The installed layout of the RPMs (packaging/CMakeLists.txt), so that the same tree
# can be packaged (scripts/build-rpms.sh) and the built-in defaults match it. -g1: line
# tables and function names, what a backtrace or perf reads; nothing reads the rest of -g,
# which only made the objects (and the compiler cache) larger. The RPM's own build uses
# the same flags (packaging/rpm/attrib.spec), so it takes this tree's objects from the cache.
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc -DCMAKE_INSTALL_LOCALSTATEDIR=/var \
  -DCMAKE_INSTALL_LIBDIR=lib64 "$@" >/dev/null
targets=()
for target in ${ATTRIB_BUILD_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
