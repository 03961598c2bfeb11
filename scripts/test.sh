#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, and runs every test, including
# the end-to-end suite on a real local Slurm cluster (CTest label e2e), which the suite
# brings up and tears down itself, and the web dashboard in headless Chromium (label
# browser, tests/browser); then the RPMs; then, on Slurm 24.11, the demo and the
# real-cluster core (scripts/test-cluster-core.sh) in a Debian 13 root made by
# scripts/in-debian13.sh (ATTRIB_SKIP_SLURM_24_11=1 skips that stage); then the unit suite
# again in a second build under AddressSanitizer + UBSan, where any report fails the run
# (ATTRIB_SKIP_SANITIZE=1 skips that stage); then every libFuzzer target of fuzz/ for
# ATTRIB_FUZZ_SECONDS (20) each, where any crash, leak or timeout fails the run
# (scripts/fuzz.sh; ATTRIB_SKIP_FUZZ=1 skips it). A test that does not run (skipped) fails
# the run, and the last line says how every stage went and how long it took. Run as root
# on Debian 12 from any directory.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTRIB_BUILD_DIR:-$src/build}
"$src/scripts/install-deps.sh"
# Before the long build: the end-to-end suite stages what slurm, munged and ordinary users
# run in a runtime directory under /tmp (scripts/lib/runtime.sh); it must be reachable.
source "$src/scripts/lib/runtime.sh"
preflight_runtime "$(attrib_runtime_dir "$build")"

# One line per stage that finished, and one closing line for the whole run, whatever
# stage stopped it: the last thing printed is never a single stage's own summary.
source "$src/scripts/lib/ctest-stage.sh"  # stages, stages_summary, timed_stage, run_ctest
finish() {
  local rc=$?
  # A run that stopped early still lets the Debian 13 root's debootstrap finish: killed,
  # it would leave its mounts inside the half-made root.
  [ -z "${debian13_root:-}" ] || wait "$debian13_root" 2>/dev/null || true
  stages_summary "attrib test suite" "$rc"
}
trap finish EXIT

# The Debian 13 root of the Slurm 24.11 stage is made (debootstrap: network and disk, little
# CPU) while the main build runs; the stage waits for it.
if [ "${ATTRIB_SKIP_SLURM_24_11:-0}" != 1 ]; then
  debian13_log=$(mktemp /tmp/attrib-debian13-root.XXXXXX.log)
  nice "$src/scripts/in-debian13.sh" --prepare >"$debian13_log" 2>&1 &
  debian13_root=$!
fi
timed_stage "build" "$src/scripts/build.sh"
cd "$build"

run_ctest "build ($build)" --output-on-failure --timeout 600 -j"$(nproc)"
# The RPMs from this tree (its install() rules are the package layout), checked with
# rpm -qlp / -qRp; %check runs the unit tests once more inside rpmbuild.
timed_stage "rpms: built and checked" "$src/scripts/build-rpms.sh" "$build"

# Slurm 24.11, as sites run it: the same tree built against Debian 13's Slurm, the demo's
# verdict in sacct and the real-cluster core on a real 24.11 cluster (drain, requeue,
# SPANK records, the user's Comment kept, daemon down -> spool -> drained).
if [ "${ATTRIB_SKIP_SLURM_24_11:-0}" != 1 ]; then
  wait "$debian13_root" || { cat "$debian13_log" >&2; echo "could not make the Debian 13 root" >&2; exit 1; }
  rm -f "$debian13_log"
  timed_stage "Slurm 24.11 in Debian 13: demo and cluster core passed" \
    "$src/scripts/in-debian13.sh" 'scripts/demo.sh && scripts/test-cluster-core.sh'
fi

if [ "${ATTRIB_SKIP_SANITIZE:-0}" != 1 ]; then
  # The sanitizer stage: unit tests only (the e2e suite loads the SPANK plugin into the
  # real slurmstepd, which is not built with ASan). Debug: the build is the slow part, so
  # -g1: line tables and function names, all a sanitizer's stack trace needs, without the
  # full debug information that made this build a quarter slower.
  sanitize_build=${ATTRIB_SANITIZE_BUILD_DIR:-$src/build-sanitize}
  timed_stage "ASan/UBSan build" env ATTRIB_BUILD_DIR="$sanitize_build" "$src/scripts/build.sh" \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 -DATTRIB_SANITIZE=ON \
    -DATTRIB_BUILD_BENCH=OFF
  cd "$sanitize_build"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest "ASan/UBSan unit" -L unit --output-on-failure --timeout 900 -j"$(nproc)"
  cd "$build"
fi

# The fuzzing stage (docs/security.md, "Fuzzing record"): a clang build of its own.
if [ "${ATTRIB_SKIP_FUZZ:-0}" != 1 ]; then
  timed_stage "fuzz: every target, no finding" "$src/scripts/fuzz.sh"
fi
