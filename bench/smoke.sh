#!/usr/bin/env bash
# ctest bench_smoke (label unit): every benchmark program at a tiny size. Checks that each
# runs and prints its machine line and its figure lines -- never a timing.
# Usage: bench/smoke.sh <directory of the attrib-bench-* binaries>
set -euo pipefail
bin=${1:?usage: smoke.sh BIN_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

# run NAME COMMAND...: one benchmark, its output kept for check. A benchmark that exits
# non-zero fails the smoke test (in a pipeline its status, and check's, would be lost).
run() {
  local name=$1
  shift
  "$@" > "$work/$name.out" 2>&1 || { echo "FAIL $name: exit $?"; cat "$work/$name.out"; fail=1; }
}

check() {  # check NAME FIGURE...: the machine line and every figure line are there
  local name=$1 out
  shift
  out=$(cat "$work/$name.out")
  local ok=1
  grep -q '^machine: ' <<<"$out" || { echo "FAIL $name: no machine line"; ok=0; }
  for f in "$@"; do
    grep -Eq "^figure +$f +[-0-9.]+ " <<<"$out" || { echo "FAIL $name: no figure $f"; ok=0; }
  done
  if [ $ok = 1 ]; then echo "ok   $name"; else echo "$out"; fail=1; fi
}

run gen "$bin/attrib-bench-gen" --bytes 2000000 --seed 7 --out "$work/corpus.log"
# ripgrep and systemd-journal-remote are installed by scripts/install-deps.sh: without
# them a figure is missing, which is a failure, not a skip.
run extract "$bin/attrib-bench-extract" --corpus "$work/corpus.log" --rg
check extract extract.attrib_mb_s extract.ripgrep_mb_s extract.ratio_attrib_over_ripgrep
# The second corpus: the real-incident bundles' lines mixed in (ripgrep is slow on it).
run gen-incidents "$bin/attrib-bench-gen" --bytes 500000 --seed 2 --match-rate 0.01 \
  --incidents "$(dirname "$0")/../tests/corpus/real" --out "$work/incidents.log"
run extract-incidents "$bin/attrib-bench-extract" --corpus "$work/incidents.log"
check extract-incidents extract.attrib_mb_s
run storm "$bin/attrib-bench-storm" --storm 20000 --background 500
check storm storm.seconds storm.peak_rss_growth_mib storm.verdict_identical
run epilog "$bin/attrib-bench-epilog" --runs 10
check epilog epilog.up_p99_ms epilog.down_p99_ms epilog.rpc_up_p99_ms epilog.spawn_floor_p99_ms
run burst "$bin/attrib-bench-burst" --jobs 40 --lines 500
check burst burst.jobs_per_s burst.jobs_archived
run list "$bin/attrib-bench-list" --rows 2000 --users 10 --submits 20 --listers 2
check list list.submit_alone_p99_ms list.submit_listing_p99_ms
run bounded "$bin/attrib-bench-bounded" --ranks 500 --lines 500
check bounded bounded.seconds bounded.xid_is_root_cause
run fanout "$bin/attrib-bench-fanout" --nodes 4 --entries 500 --repeat 1
check fanout fanout.median_s
run archive "$bin/attrib-bench-archive" --quiet 50 --nodes 3 --entries 200 --storm 2000 --jobs 5
check archive archive.quiet.bytes_per_job archive.failing.bytes_per_job archive.storm.evidence_stored
run scale "$bin/attrib-bench-scale" --sizes 4,8 --entries 200 --servers 2 --repeat 1
check scale scale.4.verdict_s scale.8.verdict_s scale.growth_exponent scale.node_side_s
exit $fail
