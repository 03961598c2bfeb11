#!/usr/bin/env bash
# ctest bench_smoke (label unit): every benchmark program at a tiny size. Checks that each
# runs and prints its machine line and its figure lines -- never a timing.
# Usage: bench/smoke.sh <directory of the attrib-bench-* binaries>
set -euo pipefail
bin=${1:?usage: smoke.sh BIN_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

check() {  # check NAME FIGURE... < output
  local name=$1 out
  shift
  out=$(cat)
  grep -q '^machine: ' <<<"$out" || { echo "FAIL $name: no machine line"; fail=1; }
  for f in "$@"; do
    grep -Eq "^figure +$f +[-0-9.]+ " <<<"$out" || { echo "FAIL $name: no figure $f"; echo "$out"; fail=1; }
  done
  echo "ok   $name"
}

"$bin/attrib-bench-gen" --bytes 2000000 --seed 7 --out "$work/corpus.log" >/dev/null
if command -v rg >/dev/null; then
  "$bin/attrib-bench-extract" --corpus "$work/corpus.log" --rg |
    check extract extract.attrib_mb_s extract.ripgrep_mb_s extract.ratio_attrib_over_ripgrep
else
  "$bin/attrib-bench-extract" --corpus "$work/corpus.log" | check extract extract.attrib_mb_s
fi
"$bin/attrib-bench-storm" --storm 20000 --background 500 |
  check storm storm.seconds storm.peak_rss_growth_mib storm.verdict_identical
"$bin/attrib-bench-epilog" --runs 10 | check epilog epilog.up_p99_ms epilog.down_p99_ms
"$bin/attrib-bench-burst" --jobs 40 --lines 500 | check burst burst.jobs_per_s burst.jobs_archived
"$bin/attrib-bench-list" --rows 2000 --users 10 --submits 20 --listers 2 |
  check list list.submit_alone_p99_ms list.submit_listing_p99_ms
"$bin/attrib-bench-bounded" --ranks 500 --lines 500 | check bounded bounded.seconds bounded.xid_is_root_cause
if [ -x /lib/systemd/systemd-journal-remote ]; then
  "$bin/attrib-bench-fanout" --nodes 4 --entries 500 --repeat 1 | check fanout fanout.median_s
else
  echo "skip fanout: systemd-journal-remote not installed"
fi
exit $fail
