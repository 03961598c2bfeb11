#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, and runs every test, including
# the end-to-end suite on a real local Slurm cluster (CTest label e2e), which the suite
# brings up and tears down itself. Run as root on Debian 12 from any directory.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTRIB_BUILD_DIR:-$src/build}
"$src/scripts/build.sh"
cd "$build"
ctest --output-on-failure --timeout 600 -j"$(nproc)"
