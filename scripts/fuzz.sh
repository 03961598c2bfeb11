#!/usr/bin/env bash
# The libFuzzer targets of fuzz/ (docs/security.md, "Fuzzing record"): installs what is
# missing, builds them with clang in their own build directory (-DATTRIB_FUZZ=ON: every
# library with -fsanitize=fuzzer-no-link,address,undefined), then runs each target for a
# fixed time on a writable copy of its seed corpus (fuzz/corpus/<target>, never written
# to). Any crash, sanitizer report, leak or timeout fails the run, naming the target and
# the input libFuzzer saved; the other targets still run. Run as root on Debian 12.
#   ATTRIB_FUZZ_BUILD_DIR  the build directory (default: <checkout>/build-fuzz)
#   ATTRIB_FUZZ_SECONDS    seconds per target (default: 20)
#   ATTRIB_FUZZ_TARGETS    "a b": only these targets (default: every one in fuzz/targets.cmake)
#   ATTRIB_FUZZ_KEEP=1     keep the working directory (grown corpora, logs) after a clean run
# A failing input goes to fuzz/regressions/<target>/ once fixed (tests/unit/fuzz replays it).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTRIB_FUZZ_BUILD_DIR:-$src/build-fuzz}
seconds=${ATTRIB_FUZZ_SECONDS:-20}
"$src/scripts/install-deps.sh"

# The target list is fuzz/targets.cmake's: one name per line of set(ATTRIB_FUZZ_TARGETS ...).
all_targets=$(sed -n '/^set(ATTRIB_FUZZ_TARGETS/,/^)/{/^  [a-z_]/{s/^  \([a-z_]*\).*/\1/;p}}' "$src/fuzz/targets.cmake")
targets=${ATTRIB_FUZZ_TARGETS:-$all_targets}

started=$SECONDS
# -O1 -gline-tables-only, as libFuzzer's documentation builds targets: the findings' stack
# traces keep their lines, and the build (most of this stage's time) is far quicker than -O2 -g.
flags="-O1 -gline-tables-only -DNDEBUG"
CC=clang CXX=clang++ cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTRIB_FUZZ=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DATTRIB_BUILD_BENCH=OFF >/dev/null
build_targets=()
for target in $targets; do build_targets+=(--target "${target}_fuzzer"); done
cmake --build "$build" -j"$(nproc)" "${build_targets[@]}"
echo "fuzz: built in $((SECONDS - started)) s"

work=$(mktemp -d "${TMPDIR:-/tmp}/attrib-fuzz.XXXXXX")
failed=()
for target in $targets; do
  dir=$work/$target
  mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/tmp"
  [ -d "$src/fuzz/corpus/$target" ] && cp -R "$src/fuzz/corpus/$target/." "$dir/corpus/"
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -detect_leaks=1 -print_final_stats=1
           -artifact_prefix="$dir/artifacts/")
  [ -f "$src/fuzz/dict/$target.dict" ] && options+=(-dict="$src/fuzz/dict/$target.dict")
  # TMPDIR: the targets' scratch files (fuzz_support.h) stay in the working directory.
  # The outer timeout only guards against a harness that hangs outside libFuzzer's watch.
  rc=0
  TMPDIR=$dir/tmp UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    timeout -k 10 $((seconds + 300)) "$build/fuzz/${target}_fuzzer" "${options[@]}" "$dir/corpus" \
    >"$dir/log" 2>&1 || rc=$?
  artifacts=$(find "$dir/artifacts" -type f | sort)
  final_stat() { sed -n "s/^stat::$1: *//p" "$dir/log" | tail -1; }
  coverage=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$dir/log" | tail -1 || true)
  if [ "$rc" -ne 0 ] || [ -n "$artifacts" ]; then
    failed+=("$target")
    echo "fuzz: FAILED $target (exit $rc)$([ "$rc" -eq 124 ] && echo ', the harness hung')" >&2
    for artifact in $artifacts; do echo "fuzz:   input: $artifact" >&2; done
    echo "fuzz:   log: $dir/log; its end:" >&2
    grep -v '^#[0-9]' "$dir/log" | tail -40 | sed 's/^/    /' >&2
  else
    printf 'fuzz: ok %-18s %6s s %10s runs %7s exec/s  %s  corpus %s\n' "$target" "$seconds" \
      "$(final_stat number_of_executed_units)" "$(final_stat average_exec_per_sec)" "$coverage" "$(find "$dir/corpus" -type f | wc -l)"
  fi
done

echo "fuzz: $(wc -w <<<"$targets") targets, $((SECONDS - started)) s in all"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]} (inputs and logs kept in $work)" >&2
  exit 1
fi
if [ "${ATTRIB_FUZZ_KEEP:-0}" = 1 ]; then echo "fuzz: kept $work"; else rm -rf "$work"; fi
