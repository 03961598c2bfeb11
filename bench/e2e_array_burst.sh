#!/usr/bin/env bash
# Benchmark 11: what an array burst costs slurmdbd, on the real cluster. An --tasks-task
# array (default 500; one task in 50 exits 3) runs while attributiond is stopped, so every
# task's EpilogSlurmctld spools its report; then the daemon starts and takes them all at
# once, as a head does after a restart or behind a burst. Measured: slurmdbd requests per
# task (the daemon's attrib_slurmdbd_requests over the tasks), and the time until every
# task's verdict is in `sacct`.
#
#   bench/e2e_array_burst.sh [--tasks N] [--build DIR]      (as root)
#
# Brings up its own cluster as bench/e2e_sacct_latency.sh does (bench/e2e_cluster.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/.." && pwd)
tasks=500
build=${ATTRIB_BUILD_DIR:-$source_dir/build-bench}
while (($#)); do
  case "$1" in
    --tasks) tasks=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "usage: $0 [--tasks N] [--build DIR]" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
source "$here/e2e_cluster.sh"
# Slurm's default MaxArraySize is 1001 and MaxJobCount 10,000.
if [ "$tasks" -gt 1000 ]; then
  export ATTRIB_SLURM_CONF_EXTRA="MaxArraySize=$((tasks + 1))
MaxJobCount=$((tasks * 2))"
fi
bring_up_cluster array-burst
metrics=127.0.0.1:7190
sed -i "s|^head:\$|head:\n  metrics_listen: $metrics|" "$run/attrib.yaml"

t0=$SECONDS
array=$(sbatch --parsable --array=1-"$tasks" -N1 -n1 --output=/dev/null \
  --wrap 'if [ $((SLURM_ARRAY_TASK_ID % 50)) = 0 ]; then exit 3; fi' | cut -d';' -f1)
while squeue -h -j "$array" -o %i 2>/dev/null | grep -q .; do sleep 1; done
spooled=$(find "$run/spool" -maxdepth 1 -type f | wc -l)
echo "array $array: $tasks tasks ran in $((SECONDS - t0)) s with the daemon stopped; $spooled reports spooled"

start=$(date +%s.%N)
start_attributiond "$run"
# Up to 30 minutes; a large array is polled once a second (each poll is an sacct of all
# its tasks, which slurmdbd serves besides the head).
poll=0.1
[ "$tasks" -le 1000 ] || poll=1
deadline=$((SECONDS + 1800))
while [ "$SECONDS" -lt "$deadline" ]; do
  done_tasks=$(sacct -n -X -P -j "$array" -o Comment%1000 2>/dev/null | grep -c "attrib:" || true)
  [ "$done_tasks" -ge "$tasks" ] && break
  sleep "$poll"
done
elapsed=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN {printf "%.1f", a - b}')
[ "$done_tasks" -ge "$tasks" ] || { echo "only $done_tasks of $tasks tasks have a verdict in sacct" >&2; exit 1; }
requests=$(curl -sS "http://$metrics/metrics" | awk '$1 == "attrib_slurmdbd_requests" {print $2}')
echo "daemon started with $spooled reports waiting: every task's verdict in sacct after $elapsed s; $requests slurmdbd requests"
printf 'figure %-36s %14.3f %s\n' e2e.array_burst_tasks "$tasks" tasks e2e.array_burst_seconds "$elapsed" s \
  e2e.array_burst_slurmdbd_requests_per_task "$(awk -v r="$requests" -v n="$tasks" 'BEGIN {print r / n}')" requests
awk -v r="$requests" -v n="$tasks" 'BEGIN {v = r / n; printf "target %-36s %s (%.3f <= 2.000)\n", "slurmdbd round trips per task <= 2", (v <= 2 ? "MET" : "MISSED"), v}'
