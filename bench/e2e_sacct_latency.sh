#!/usr/bin/env bash
# Benchmark 6: end to end on the real cluster. Job end -> verdict visible in `sacct`
# (the job's Comment carries "attrib:"), p50 and p95 over --jobs jobs (default 20), and
# how much of it is the accounting record's own lag (job end -> sacct shows the job in
# its final state).
#
#   bench/e2e_sacct_latency.sh [--jobs N] [--build DIR]      (as root)
#
# Brings up its own scripts/cluster.sh cluster under DIR/bench-e2e-cluster (refuses to
# start while another slurmctld runs), runs the real attributiond (configured as the e2e
# suite does: MUNGE auth, journald + slurm_accounting + app_output collectors,
# scope_poll_interval_ms 500) and the real attrib-epilog as EpilogSlurmctld, submits one
# 1-node job at a time (it writes its end time with date +%s.%N, then exits 1), and polls
# `sacct -X -j ID -o State,Comment` every 50 ms. Then the daemon's own breakdown of each
# job's time (its "job N: phases hook=..ms queue=.. record=.. collect=.. rules=.. archive=..
# comment=.. total=.." log lines, pipeline/phase_times.h) as p50/p95 per phase. Tears the
# cluster down at exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/.." && pwd)
jobs=20
build=${ATTRIB_BUILD_DIR:-$source_dir/build-bench}
while (($#)); do
  case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "usage: $0 [--jobs N] [--build DIR]" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
source "$here/e2e_cluster.sh"
bring_up_cluster sacct-latency
start_attributiond "$run"

now() { date +%s.%N; }
echo "job  end->final_record_s  end->comment_in_sacct_s  domain"
results=$work/results.txt
: > "$results"
for i in $(seq "$jobs"); do
  endfile=$work/end-$i
  id=$(sbatch --parsable --output=/dev/null -N1 --wrap "sleep 1; date +%s.%N > $endfile; exit 1" | cut -d';' -f1)
  final="" visible="" line=""
  for _ in $(seq 1200); do   # up to 60 s
    line=$(sacct -n -X -P -j "$id" -o State,Comment%1000 2>/dev/null | head -1 || true)
    t=$(now)
    state=${line%%|*}
    if [ -z "$final" ] && [ -s "$endfile" ] && [[ "$state" == FAILED* ]]; then final=$t; fi
    if [[ "$line" == *"attrib:"* ]]; then visible=$t; [ -n "$final" ] || final=$t; break; fi
    sleep 0.05
  done
  [ -n "$visible" ] || { echo "job $id: no verdict in sacct within 60 s" >&2; exit 1; }
  end=$(cat "$endfile")
  domain=$(sed -n 's/.*attrib: \([A-Z_]*\).*/\1/p' <<<"$line")
  lag=$(awk -v a="$final" -v b="$end" 'BEGIN {printf "%.3f", a - b}')
  total=$(awk -v a="$visible" -v b="$end" 'BEGIN {printf "%.3f", a - b}')
  printf '%-4s %20.3f %24.3f  %s\n' "$id" "$lag" "$total" "$domain"
  echo "$lag $total" >> "$results"
done

pct() {  # pct COLUMN P: nearest-rank percentile of a results column
  sort -n -k"$1","$1" "$results" | awk -v c="$1" -v p="$2" '{v[NR]=$c} END {i=int(p/100*(NR-1)+0.5)+1; printf "%.3f", v[i]}'
}
p50=$(pct 2 50); p95=$(pct 2 95); lag50=$(pct 1 50); lag95=$(pct 1 95)
printf 'figure %-36s %14.3f %s\n' e2e.sacct_visible_p50_s "$p50" s e2e.sacct_visible_p95_s "$p95" s \
  e2e.accounting_lag_p50_s "$lag50" s e2e.accounting_lag_p95_s "$lag95" s
awk -v a="$lag50" -v b="$p50" 'BEGIN {printf "accounting record lag: %.0f%% of the p50 latency\n", (b > 0 ? 100 * a / b : 0)}'

# Where the time went, as the daemon measured it for each job (milliseconds).
phases=$work/phases.txt
# The daemon logs a job's phases after its comment is written: the last job's line may
# follow the comment seen in sacct by a moment.
for _ in $(seq 50); do
  [ "$(grep -c ': phases ' "$run/attributiond.log" || true)" -ge "$jobs" ] && break
  sleep 0.1
done
grep -o ': phases .*' "$run/attributiond.log" | sed 's/^: phases //' > "$phases" || true
[ "$(wc -l < "$phases")" -ge "$jobs" ] || { echo "the daemon logged $(wc -l < "$phases") phase lines for $jobs jobs" >&2; exit 1; }
echo "phase      p50_ms   p95_ms   (daemon log, $(wc -l < "$phases") jobs)"
for phase in hook queue record collect rules archive comment total; do
  sed -n "s/.*\b$phase=\([0-9]*\)ms.*/\1/p" "$phases" | sort -n |
    awk -v name="$phase" '{v[NR]=$1} END {if (NR) printf "%-9s %8d %8d\n", name, v[int(0.5*(NR-1)+0.5)+1], v[int(0.95*(NR-1)+0.5)+1]}'
done
for phase in record total; do
  p=$(sed -n "s/.*\b$phase=\([0-9]*\)ms.*/\1/p" "$phases" | sort -n | awk '{v[NR]=$1} END {print v[int(0.5*(NR-1)+0.5)+1] / 1000}')
  printf 'figure %-36s %14.3f %s\n' "e2e.phase_${phase}_p50_s" "$p" s
done
