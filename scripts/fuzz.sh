#!/usr/bin/env bash
# The libFuzzer targets of fuzz/ (docs/security.md, "Fuzzing record"): installs what is
# missing, builds them in the suite's clang tree (scripts/build-clang.sh: every library
# with -fsanitize=fuzzer-no-link,address,undefined; scripts/test.sh has built the whole
# tree there already for its sanitizer stage, so this build finds nothing to do), then runs
# each target (one per core at a time) on a writable copy of its seed corpus (fuzz/corpus/<target>, never written
# to) and on the inputs that once failed (fuzz/regressions/<target>): libFuzzer first
# replays every one of them, then fuzzes for a fixed time. Any crash, sanitizer report,
# leak or timeout fails the run, naming the target and the input libFuzzer saved; the
# other targets still run. Run as root on Debian 12.
#   ATTRIB_CLANG_BUILD_DIR  the clang tree (default: <checkout>/build-clang)
#   ATTRIB_FUZZ_SECONDS    seconds of fuzzing per target after the replay (default: 20;
#                          scripts/test.sh runs 5 on every change)
#   ATTRIB_FUZZ_TARGETS    "a b": only these targets (default: every one in fuzz/targets.cmake)
#   ATTRIB_FUZZ_KEEP=1     keep the working directory (grown corpora, logs) after a clean run
# A failing input goes to fuzz/regressions/<target>/ once fixed (tests/unit/fuzz replays it).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTRIB_CLANG_BUILD_DIR:-$src/build-clang}
seconds=${ATTRIB_FUZZ_SECONDS:-20}
# The target list is fuzz/targets.cmake's: one name per line of set(ATTRIB_FUZZ_TARGETS ...).
all_targets=$(sed -n '/^set(ATTRIB_FUZZ_TARGETS/,/^)/{/^  [a-z_]/{s/^  \([a-z_]*\).*/\1/;p}}' "$src/fuzz/targets.cmake")
targets=${ATTRIB_FUZZ_TARGETS:-$all_targets}

started=$SECONDS
build_targets=""
for target in $targets; do build_targets+=" ${target}_fuzzer"; done
ATTRIB_CLANG_BUILD_DIR=$build ATTRIB_BUILD_TARGETS=$build_targets "$src/scripts/build-clang.sh"
echo "fuzz: built in $((SECONDS - started)) s"

work=$(mktemp -d "${TMPDIR:-/tmp}/attrib-fuzz.XXXXXX")

# fuzz_one TARGET: replays and fuzzes TARGET in its own directory under $work; its report
# (one "ok" line, or what failed and why) goes to $work/TARGET/report, and TARGET goes to
# $work/failed when it failed.
fuzz_one() {
  local target=$1 dir=$work/$1 rc=0 artifacts coverage artifact
  mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/tmp"
  [ -d "$src/fuzz/corpus/$target" ] && cp -R "$src/fuzz/corpus/$target/." "$dir/corpus/"
  # libFuzzer reads every directory named and writes new inputs to the first one only.
  local replay=()
  [ -d "$src/fuzz/regressions/$target" ] && replay+=("$src/fuzz/regressions/$target")
  local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -detect_leaks=1 -print_final_stats=1
                 -artifact_prefix="$dir/artifacts/")
  [ -f "$src/fuzz/dict/$target.dict" ] && options+=(-dict="$src/fuzz/dict/$target.dict")
  # TMPDIR: the targets' scratch files (fuzz_support.h) stay in the working directory.
  # The outer timeout only guards against a harness that hangs outside libFuzzer's watch.
  TMPDIR=$dir/tmp UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    timeout -k 10 $((seconds + 300)) "$build/fuzz/${target}_fuzzer" "${options[@]}" "$dir/corpus" "${replay[@]}" \
    >"$dir/log" 2>&1 || rc=$?
  artifacts=$(find "$dir/artifacts" -type f | sort)
  final_stat() { sed -n "s/^stat::$1: *//p" "$dir/log" | tail -1; }
  coverage=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$dir/log" | tail -1 || true)
  if [ "$rc" -ne 0 ] || [ -n "$artifacts" ]; then
    echo "$target" >>"$work/failed"
    {
      echo "fuzz: FAILED $target (exit $rc)$([ "$rc" -eq 124 ] && echo ', the harness hung')"
      for artifact in $artifacts; do echo "fuzz:   input: $artifact"; done
      echo "fuzz:   log: $dir/log; its end:"
      grep -v '^#[0-9]' "$dir/log" | tail -40 | sed 's/^/    /'
    } >"$dir/report"
  else
    printf 'fuzz: ok %-18s %6s s %10s runs %7s exec/s  %s  corpus %s\n' "$target" "$seconds" \
      "$(final_stat number_of_executed_units)" "$(final_stat average_exec_per_sec)" "$coverage" \
      "$(find "$dir/corpus" -type f | wc -l)" >"$dir/report"
  fi
}

# One target per core at a time (each fuzzes on one thread); the reports in list order.
running=0
for target in $targets; do
  if [ "$running" -ge "$(nproc)" ]; then wait -n || true; running=$((running - 1)); fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait
for target in $targets; do
  [ -e "$work/$target/report" ] || { echo "$target" >>"$work/failed"; echo "fuzz: FAILED $target (its run stopped without a report)" >"$work/$target/report"; }
  if grep -qx "$target" "$work/failed" 2>/dev/null; then cat "$work/$target/report" >&2; else cat "$work/$target/report"; fi
done
failed=()
[ ! -e "$work/failed" ] || mapfile -t failed <"$work/failed"

echo "fuzz: $(wc -w <<<"$targets") targets, $((SECONDS - started)) s in all"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]} (inputs and logs kept in $work)" >&2
  exit 1
fi
if [ "${ATTRIB_FUZZ_KEEP:-0}" = 1 ]; then echo "fuzz: kept $work"; else rm -rf "$work"; fi
