#!/usr/bin/env bash
# The suite's one clang tree: every library, unit test and libFuzzer target compiled once
# with clang under AddressSanitizer and UBSan (no recovery) plus libFuzzer's coverage
# instrumentation (-DATTRIB_FUZZ=ON, top-level CMakeLists.txt). scripts/test.sh runs the
# unit tests in it (the sanitizer stage; any report fails the test) and scripts/fuzz.sh
# runs its fuzz targets, so the two stages share one compile instead of two.
# -O0 -gline-tables-only: a report's stack trace keeps its lines, and the compile, most of
# these stages' time on a fresh machine, is 40% quicker than at -O1 (measured on the
# heaviest test file: 21-29 s against 38-50 s), for targets that run about half as many
# inputs a second: the stage's fuzzing is a short run after the replay of every seed and
# regression, and a long campaign (ATTRIB_FUZZ_SECONDS=600) can take -O1 with
# ATTRIB_CLANG_OPT=-O1.
# Installs what is missing first. Run as root on Debian 12.
#   ATTRIB_CLANG_BUILD_DIR  the build directory (default: <checkout>/build-clang)
#   ATTRIB_BUILD_TARGETS    "a b": build only those targets (default: all)
#   ATTRIB_CLANG_OPT        the optimisation level (default: -O0)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# scripts/build.sh's configure (the RPMs' install layout, ccache, ATTRIB_BUILD_TARGETS)
# with clang and these flags after its own.
flags="${ATTRIB_CLANG_OPT:--O0} -gline-tables-only"
CC=clang CXX=clang++ ATTRIB_BUILD_DIR=${ATTRIB_CLANG_BUILD_DIR:-$src/build-clang} "$src/scripts/build.sh" \
  -DATTRIB_FUZZ=ON -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" \
  -DATTRIB_BUILD_BENCH=OFF
