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
# Brings up its own scripts/cluster.sh cluster under DIR/bench-e2e-cluster (refuses to
# start while another slurmctld runs), configured as bench/e2e_sacct_latency.sh is.
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
[ "$(id -u)" -eq 0 ] || { echo "e2e_array_burst.sh: run as root (slurmd)" >&2; exit 2; }
if pgrep -x slurmctld >/dev/null; then
  echo "e2e_array_burst.sh: another slurmctld is running (pgrep -a slurmctld); not starting a second cluster" >&2
  exit 3
fi

cluster_dir=$build/bench-e2e-cluster
work=$build/bench-e2e-array
rm -rf "$work"
mkdir -p "$work"
chmod 755 "$work"
printf '#!/bin/sh\nexec %s --config %s\n' "$build/epilog/attrib-epilog" "$work/run/attrib.yaml" > "$work/attrib-epilog-hook"
chmod 755 "$work/attrib-epilog-hook"

export ATTRIB_BUILD_DIR=$build ATTRIB_SOURCE_DIR=$source_dir
daemon_pid=
cleanup() {
  if [ -n "${daemon_pid:-}" ]; then kill -TERM "$daemon_pid" 2>/dev/null || true; wait "$daemon_pid" 2>/dev/null || true; fi
  "$source_dir/scripts/cluster.sh" down "$cluster_dir" >/dev/null 2>&1 || true
}
trap cleanup EXIT
ATTRIB_EPILOG_SLURMCTLD=$work/attrib-epilog-hook "$source_dir/scripts/cluster.sh" up "$cluster_dir" >"$work/cluster-up.log" 2>&1 ||
  { tail -n 30 "$work/cluster-up.log" >&2; exit 1; }
source "$cluster_dir/env.sh"
DAEMON_ADDR=127.0.0.1:7189
metrics=127.0.0.1:7190
source "$source_dir/scripts/lib/local-attrib.sh"
run=$work/run
write_attrib_config "$run"
sed -i "s|^head:\$|head:\n  metrics_listen: $metrics|" "$run/attrib.yaml"
seed_journal "$run"
printf 'machine: %s cores (nproc), cpu "%s"\n' "$(nproc)" "$(lscpu | sed -n 's/^Model name: *//p' | head -1)"

t0=$SECONDS
array=$(sbatch --parsable --array=1-"$tasks" -N1 -n1 --output=/dev/null \
  --wrap 'if [ $((SLURM_ARRAY_TASK_ID % 50)) = 0 ]; then exit 3; fi' | cut -d';' -f1)
while squeue -h -j "$array" -o %i 2>/dev/null | grep -q .; do sleep 1; done
spooled=$(find "$run/spool" -maxdepth 1 -type f | wc -l)
echo "array $array: $tasks tasks ran in $((SECONDS - t0)) s with the daemon stopped; $spooled reports spooled"

start=$(date +%s.%N)
start_attributiond "$run"
for _ in $(seq 6000); do   # up to 10 minutes
  done_tasks=$(sacct -n -X -P -j "$array" -o Comment%1000 2>/dev/null | grep -c "attrib:" || true)
  [ "$done_tasks" -ge "$tasks" ] && break
  sleep 0.1
done
elapsed=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN {printf "%.1f", a - b}')
[ "$done_tasks" -ge "$tasks" ] || { echo "only $done_tasks of $tasks tasks have a verdict in sacct" >&2; exit 1; }
requests=$(curl -sS "http://$metrics/metrics" | awk '$1 == "attrib_slurmdbd_requests" {print $2}')
echo "daemon started with $spooled reports waiting: every task's verdict in sacct after $elapsed s; $requests slurmdbd requests"
printf 'figure %-36s %14.3f %s\n' e2e.array_burst_tasks "$tasks" tasks e2e.array_burst_seconds "$elapsed" s \
  e2e.array_burst_slurmdbd_requests_per_task "$(awk -v r="$requests" -v n="$tasks" 'BEGIN {print r / n}')" requests
awk -v r="$requests" -v n="$tasks" 'BEGIN {v = r / n; printf "target %-36s %s (%.3f <= 2.000)\n", "slurmdbd round trips per task <= 2", (v <= 2 ? "MET" : "MISSED"), v}'
