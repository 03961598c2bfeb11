#!/usr/bin/env bash
# The suite's one clang tree: the libraries, unit tests and libFuzzer targets compiled once
# with clang under AddressSanitizer and UBSan (no recovery) plus libFuzzer's coverage
# instrumentation (-DATTRIB_FUZZ=ON, top-level CMakeLists.txt). scripts/test.sh runs the
# unit tests in it (the sanitizer stage; any report fails the test) and scripts/fuzz.sh
# runs its fuzz targets, so the two stages share one compile instead of two; it builds
# only those (targets attrib_unit_tests and attrib_fuzzers), not the e2e-only programs.
# -O1 -gline-tables-only, as libFuzzer's documentation builds targets: a report's stack
# trace keeps its lines. Not -O0, though it compiles the heaviest file 40% quicker (21-29 s
# against 38-50 s): the sanitizer stage's unit tests then took 1.7 times the CPU (582 s
# against 341 s), and CI compiles this tree from the cache anyway.
# Installs what is missing first. Run as root on Debian 12.
#   ATTRIB_CLANG_BUILD_DIR  the build directory (default: <checkout>/build-clang)
#   ATTRIB_BUILD_TARGETS    "a b": build only those targets (default: all)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# scripts/build.sh's configure (the RPMs' install layout, ccache, ATTRIB_BUILD_TARGETS)
# with clang and these flags after its own.
flags="-O1 -gline-tables-only"
CC=clang CXX=clang++ ATTRIB_BUILD_DIR=${ATTRIB_CLANG_BUILD_DIR:-$src/build-clang} "$src/scripts/build.sh" \
  -DATTRIB_FUZZ=ON -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" \
  -DATTRIB_BUILD_BENCH=OFF
