#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, and runs every test, including
# the end-to-end suite on a real local Slurm cluster (CTest label e2e), which the suite
# brings up and tears down itself, and the web dashboard in headless Chromium (label
# browser, tests/browser); then the RPMs, built by the spec's own %build from a source
# tarball (scripts/build-rpms.sh --tarball) and checked; then, on Slurm 24.11, the demo and
# the real-cluster core (scripts/test-cluster-core.sh) in a Debian 13 root made by
# scripts/in-debian13.sh (ATTRIB_SKIP_SLURM_24_11=1 skips that stage), and beside it the
# unit suite again in the clang tree (scripts/build-clang.sh) under AddressSanitizer +
# UBSan, where any report fails the run (ATTRIB_SKIP_SANITIZE=1 skips that stage), then
# every libFuzzer target of fuzz/, built in that same tree, replays its seeds and
# regressions and fuzzes for ATTRIB_FUZZ_SECONDS (5) each, where any crash, leak or
# timeout fails the run (scripts/fuzz.sh; ATTRIB_SKIP_FUZZ=1 skips it). A test that does not run (skipped) fails
# the run. The last line says how every stage went and how long it took; the same goes to
# <build>/test-run.json (total and per-stage seconds, the ten slowest tests), and a run over
# 45 minutes (ATTRIB_TEST_BUDGET_SECONDS) ends with a warning naming the slowest stages
# and tests. Every compile goes through ccache (scripts/lib/ccache.sh). Run as root on
# Debian 12 from any directory.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTRIB_BUILD_DIR:-$src/build}
# First what the main build needs; the rest (the cluster, the browser, clang, the RPM
# tools: network and disk, little CPU) installs beside that build, which does not use it.
ATTRIB_DEPS=build "$src/scripts/install-deps.sh"
# Before the long build: the end-to-end suite stages what slurm, munged and ordinary users
# run in a runtime directory under /tmp (scripts/lib/runtime.sh); it must be reachable
# (checked for nobody now, for slurm and munge once their packages made them).
source "$src/scripts/lib/runtime.sh"
preflight_runtime "$(attrib_runtime_dir "$build")" nobody

# One line per stage that finished, and one closing line for the whole run, whatever
# stage stopped it: the last thing printed is never a single stage's own summary.
source "$src/scripts/lib/ctest-stage.sh"  # stages, stages_summary, timed_stage, run_ctest
test_times=$(mktemp /tmp/attrib-test-times.XXXXXX)
finish() {
  local rc=$?
  # A run that stopped early still lets the Debian 13 root's debootstrap and the package
  # installs beside the build finish: killed, they would leave mounts inside the half-made
  # root or dpkg half done.
  [ -z "${debian13_root:-}" ] || wait "$debian13_root" 2>/dev/null || true
  [ -z "${other_packages:-}" ] || wait "$other_packages" 2>/dev/null || true
  stop_background_stages
  write_run_record "$build/test-run.json" "$rc" 2>/dev/null || true
  warn_over_budget
  rm -f "$test_times"
  stages_summary "attrib test suite" "$rc"
}
trap finish EXIT

# Beside the main build: the rest of the packages, and the Debian 13 root of the Slurm
# 24.11 stage with its packages (debootstrap and apt: network and disk, little CPU); each is
# waited for where it is first needed.
ATTRIB_DEPS=all nice "$src/scripts/install-deps.sh" &
other_packages=$!
if [ "${ATTRIB_SKIP_SLURM_24_11:-0}" != 1 ]; then
  debian13_log=$(mktemp /tmp/attrib-debian13-root.XXXXXX.log)
  nice "$src/scripts/in-debian13.sh" --prepare >"$debian13_log" 2>&1 &
  debian13_root=$!
fi
timed_stage "build" env ATTRIB_DEPS=build "$src/scripts/build.sh"
wait "$other_packages"
preflight_runtime "$(attrib_runtime_dir "$build")"
cd "$build"

# Beside the main tree's tests (mostly the e2e scenarios' waiting on the real cluster), the
# two compiles they do not need: the RPMs as a packager builds them -- the spec's own %build
# from a source tarball of this tree (failpoints off; its objects come from the compiler
# cache, bar the one that differs), checked with rpm -qlp / -qRp and for test-only code;
# %check is left out (rpmbuild --without tests), as its unit tests run here on the same
# objects -- and the clang tree of the sanitizer and fuzzing stages.
clang_build=${ATTRIB_CLANG_BUILD_DIR:-$src/build-clang}
rpms() { "$src/scripts/build-rpms.sh" --tarball --without-tests; }
# Only what its two stages run: the unit tests with the programs they run, and the fuzzers.
clang_tree() {
  ATTRIB_CLANG_BUILD_DIR=$clang_build ATTRIB_BUILD_TARGETS="attrib_unit_tests attrib_fuzzers" "$src/scripts/build-clang.sh"
}
background=()
if [ "${ATTRIB_SKIP_SANITIZE:-0}" != 1 ] || [ "${ATTRIB_SKIP_FUZZ:-0}" != 1 ]; then
  background+=("clang build (ASan/UBSan, fuzz targets)" clang_tree)
fi
start_background_stages "$build/background-stages.log" "rpms: the spec's own build, checked" rpms "${background[@]}"
run_ctest "build ($build)" --output-on-failure --timeout 600 -j"$(nproc)"
collect_background_stages

# Slurm 24.11, as sites run it: the same tree built against Debian 13's Slurm, the demo's
# verdict in sacct and the real-cluster core on a real 24.11 cluster (drain, requeue,
# SPANK records, the user's Comment kept, daemon down -> spool -> drained, attrib-doctor).
# Its compile runs first and alone: two CPU-bound stages side by side on 2 cores took
# longer than one after the other (docs/benchmarks.md, "CI run"). Its scenarios then mostly
# wait on their cluster, so they run beside the sanitizer and fuzzing stages, which run at
# lower priority so as not to slow the scenarios' daemons. The root is new each run, its
# compiler cache is not: the compile's objects serve the scenarios' build, and the next run.
in_debian13() {
  ATTRIB_ROOT_CCACHE="${ATTRIB_ROOT_CCACHE:-/var/cache/attrib/ccache-trixie}" "$src/scripts/in-debian13.sh" "$@"
}
slurm_24_11() { in_debian13 'scripts/demo.sh && scripts/test-cluster-core.sh'; }
if [ "${ATTRIB_SKIP_SLURM_24_11:-0}" != 1 ]; then
  wait "$debian13_root" || { cat "$debian13_log" >&2; echo "could not make the Debian 13 root" >&2; exit 1; }
  rm -f "$debian13_log"
  timed_stage "Slurm 24.11 in Debian 13: built" in_debian13 'scripts/test-cluster-core.sh --build-only'
  start_background_stages --nice 0 --beside "the sanitizer and fuzz stages" "$build/slurm-24.11.log" \
    "Slurm 24.11 in Debian 13: demo and cluster core passed" slurm_24_11
  renice -n 10 -p $$ >/dev/null
fi

# The sanitizer stage: unit tests only (the e2e suite loads the SPANK plugin into the real
# slurmstepd, which is not built with ASan), in the clang tree built beside the tests.
if [ "${ATTRIB_SKIP_SANITIZE:-0}" != 1 ]; then
  cd "$clang_build"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest "ASan/UBSan unit" -L unit --output-on-failure --timeout 900 -j"$(nproc)"
  cd "$build"
fi

# The fuzzing stage (docs/security.md, "Fuzzing record"): every seed and regression
# replayed, then a short run per target on every change. Back at the normal priority:
# libFuzzer's per-input timeout is wall time.
renice -n 0 -p $$ >/dev/null
if [ "${ATTRIB_SKIP_FUZZ:-0}" != 1 ]; then
  timed_stage "fuzz: every target, no finding" env ATTRIB_CLANG_BUILD_DIR="$clang_build" \
    ATTRIB_FUZZ_SECONDS="${ATTRIB_FUZZ_SECONDS:-5}" "$src/scripts/fuzz.sh"
fi
[ "${ATTRIB_SKIP_SLURM_24_11:-0}" = 1 ] || collect_background_stages
