#!/usr/bin/env bash
# Installs what is missing, then configures and builds attrib into BUILD_DIR
# (default: <checkout>/build). Extra arguments go to the CMake configure step.
# ATTRIB_BUILD_TARGETS="a b": build only those targets (the demo builds what it runs).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTRIB_BUILD_DIR:-$src/build}
"$src/scripts/install-deps.sh"
# The installed layout of the RPMs (packaging/CMakeLists.txt), so that the same tree
# can be packaged (scripts/build-rpms.sh) and the built-in defaults match it.
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc -DCMAKE_INSTALL_LOCALSTATEDIR=/var \
  -DCMAKE_INSTALL_LIBDIR=lib64 "$@" >/dev/null
targets=()
for target in ${ATTRIB_BUILD_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
