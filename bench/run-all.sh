#!/usr/bin/env bash
# Runs every benchmark at the sizes of docs/benchmarks.md and prints a summary of the
# figure and target lines. Results (one log per benchmark, the extraction profile and
# summary.txt) go to OUT_DIR.
#
#   bench/run-all.sh [--build DIR] [--out OUT_DIR] [--e2e] [--no-profile] [--quick]
#
#   --build DIR    build directory holding bench/attrib-bench-* (default build-bench)
#   --e2e          also benchmarks 6 and 11 on a real local Slurm cluster (root; bench/e2e_sacct_latency.sh,
#                  bench/e2e_array_burst.sh)
#   --no-profile   skip the perf profile of the extraction path
#   --quick        small sizes (a minute in all), to try the script out; not the documented figures
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/.." && pwd)
build=$source_dir/build-bench
out=""
e2e=0 profile=1 quick=0
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --e2e) e2e=1; shift ;;
    --no-profile) profile=0; shift ;;
    --quick) quick=1; shift ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
bin=$build/bench
out=${out:-$build/bench-results/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
data=$build/bench-data
mkdir -p "$data"

if ((quick)); then
  scale_sizes=64,512 array_tasks=40
  corpus_bytes=67108864 incident_bytes=8388608 storm=100000 runs=100 jobs=1000 lines=2000 nodes=16 entries=10000 rows=100000 prefixes=20000
else
  scale_sizes=64,512,2048,8192 array_tasks=500
  corpus_bytes=1073741824 incident_bytes=134217728 storm=1000000 runs=1000 jobs=10000 lines=10000 nodes=64 entries=100000 rows=1000000 prefixes=200000
fi

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "nproc: $(nproc)"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  echo "memory: $(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
  echo "kernel: $(uname -r)"
  echo "ripgrep: $(rg --version 2>/dev/null | head -1 || echo missing)"
  echo "commit: $(git -C "$source_dir" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$source_dir" diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/machine.txt"

step() {  # step NAME COMMAND...: runs one benchmark, its output to OUT/NAME.log
  local name=$1
  shift
  echo
  echo "== $name: $*"
  local t0=$SECONDS rc=0
  "$@" > "$out/$name.log" 2>&1 || rc=$?
  grep -E '^(machine|figure|target) ' "$out/$name.log" || true
  echo "(exit $rc, $((SECONDS - t0)) s)"
  [ $rc -eq 0 ] || tail -n 20 "$out/$name.log"
}

corpus=$data/corpus-$corpus_bytes-seed1.log
if [ ! -s "$corpus" ]; then
  "$bin/attrib-bench-gen" --bytes "$corpus_bytes" --seed 1 --out "$corpus"
fi
step 1-extract "$bin/attrib-bench-extract" --corpus "$corpus" --rg
if ((profile)) && command -v perf >/dev/null; then
  # The figure's path (by run, three times) over the first 256 MiB; the warm-up read and
  # the untimed split into per-source files are in the profile too (kernel copy, memchr,
  # parse_line_stamp, fwrite).
  head -c 268435456 "$corpus" > "$data/corpus-profile.log"
  perf record -F 999 -g -o "$out/extract.perf.data" "$bin/attrib-bench-extract" --corpus "$data/corpus-profile.log" \
    --no-by-line > "$out/extract-profile-run.log" 2>&1
  perf report -i "$out/extract.perf.data" --no-children --stdio 2>/dev/null |
    grep -E '^ +[0-9]+\.[0-9]+%' | head -30 > "$out/extract-profile.txt" || true  # head closes the pipe early
  rm -f "$data/corpus-profile.log"
  echo
  echo "== extraction profile (perf, self time, top 30): $out/extract-profile.txt"
  head -15 "$out/extract-profile.txt" || true
fi
# The second corpus: the real-incident bundles' lines (tests/corpus/real) mixed into the
# noise. Smaller: ripgrep runs below 1 MB/s on it (docs/benchmarks.md says why).
incident_corpus=$data/corpus-$incident_bytes-seed2-incidents.log
if [ ! -s "$incident_corpus" ]; then
  "$bin/attrib-bench-gen" --bytes "$incident_bytes" --seed 2 --incidents "$source_dir/tests/corpus/real" \
    --out "$incident_corpus"
fi
step 1-extract-incidents "$bin/attrib-bench-extract" --corpus "$incident_corpus" --rg
step 2-storm "$bin/attrib-bench-storm" --storm "$storm"
step 3-epilog "$bin/attrib-bench-epilog" --runs "$runs"
step 4-burst "$bin/attrib-bench-burst" --jobs "$jobs" --lines "$lines"
# The same without raw evidence (head.raw_evidence_max_kib 0): what keeping it costs.
step 4-burst-no-raw "$bin/attrib-bench-burst" --jobs "$jobs" --lines "$lines" --raw-evidence-kib 0
# The job ends over gRPC (epilog.delivery rpc) instead of the spool (the default).
step 4-burst-no-raw-rpc "$bin/attrib-bench-burst" --jobs "$jobs" --lines "$lines" --raw-evidence-kib 0 --delivery rpc
step 5-fanout "$bin/attrib-bench-fanout" --nodes "$nodes" --entries "$entries"
step 7-list "$bin/attrib-bench-list" --rows "$rows"
step 8-bounded "$bin/attrib-bench-bounded" --ranks "$prefixes" --lines "$prefixes"
step 9-archive "$bin/attrib-bench-archive" --nodes "$nodes" --storm "$storm"
step 10-scale "$bin/attrib-bench-scale" --sizes "$scale_sizes"
if ((e2e)); then
  step 6-e2e "$here/e2e_sacct_latency.sh" --build "$build"
  step 11-array-burst "$here/e2e_array_burst.sh" --tasks "$array_tasks" --build "$build"
fi

echo
echo "== summary ($out/summary.txt)"
{
  cat "$out/machine.txt"
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  grep -hE '^(figure|target) ' "$out"/[0-9]*-*.log
} | tee "$out/summary.txt"
