#!/usr/bin/env bash
# The main job, end to end: installs what is missing, builds attrib, brings up a real
# local Slurm cluster (munge, MariaDB, slurmdbd, slurmctld, slurmd n1..n3), starts
# attributiond, runs a 3-node job that fails while n2's kernel log reports Xid 79 (GPU
# fallen off the bus) and n1/n3's application output fills with NCCL watchdog timeouts,
# then shows the verdict in sacct and attrib-show, and tears everything down by PID.
# Run as root on Debian 12 or 13 (Slurm 22.05 or 24.11), from any directory (root's home
# included: what other users run is staged under the demo directory, ATTRIB_DEMO_DIR,
# default /tmp/attrib-demo).
set -euo pipefail
started=$SECONDS
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ATTRIB_SOURCE_DIR=$src
export ATTRIB_BUILD_DIR=${ATTRIB_BUILD_DIR:-$src/build}
demo=${ATTRIB_DEMO_DIR:-/tmp/attrib-demo}
DAEMON_ADDR=127.0.0.1:7069

source "$src/scripts/lib/runtime.sh"
source "$src/scripts/lib/source-commit.sh"

echo "== building attrib (first run installs Debian packages; a few minutes)"
"$src/scripts/install-deps.sh"
preflight_runtime "$demo"  # before the build: slurm and munge must reach the demo directory
# Only what the demo runs: the daemon, the hook and attrib-show.
ATTRIB_BUILD_TARGETS="attributiond attrib-epilog attrib-epilog-send attrib-show" "$src/scripts/build.sh"

echo "== starting a local Slurm cluster under $demo/cluster"
rm -rf "$demo"
install -d -m 755 "$demo" "$demo/attrib"
# slurmctld runs the hook as SlurmUser, which may not reach the checkout (root's home is
# 0700): the programs run by other users are staged under $demo.
stage_binaries "$ATTRIB_BUILD_DIR" "$demo/bin"
# EpilogSlurmctld takes no arguments: a two-line wrapper points attrib-epilog at its config.
cat > "$demo/attrib-epilog-hook" <<HOOK
#!/bin/sh
exec "$demo/bin/attrib-epilog" --config "$demo/attrib/attrib.yaml"
HOOK
chmod 755 "$demo/attrib-epilog-hook"
require_reachable slurm -x "$demo/attrib-epilog-hook" "the EpilogSlurmctld hook"
require_reachable slurm -x "$demo/bin/attrib-epilog" "the hook's binary"
teardown() {
  stop_attributiond 2>/dev/null || true
  "$src/scripts/cluster.sh" down "$demo/cluster" >/dev/null 2>&1 || true
}
trap teardown EXIT
ATTRIB_EPILOG_SLURMCTLD="$demo/attrib-epilog-hook" "$src/scripts/cluster.sh" up "$demo/cluster" >/dev/null
source "$demo/cluster/env.sh"
source "$src/scripts/lib/local-attrib.sh"
sinfo

echo "== starting attributiond (log: $demo/attrib/attributiond.log)"
write_attrib_config "$demo/attrib"
seed_journal "$demo/attrib"
start_attributiond "$demo/attrib"

echo "== running a 3-node training job that will fail"
# Its output file is evidence too (the app_output collector reads it after the job).
job=$(sbatch --parsable -N3 --job-name=train-llm --comment "exp 42" --output="$demo/attrib/train-llm-%j.out" \
  --wrap 'srun sleep 5; exit 1' | cut -d';' -f1)
wait_job_state "$job" RUNNING
sleep 1
echo "   n2 kernel:  ${XID79_LINES[1]}"
inject_journal "$demo/attrib" n2 --transport kernel --uid 0 -- "${XID79_LINES[@]}"
sleep 1
for host in n1 n3; do
  echo "   $host app:     ${NCCL_TIMEOUT_LINE:0:100}..."
  inject_journal "$demo/attrib" "$host" --transport stdout --identifier python3 --uid 1000 -- "$NCCL_TIMEOUT_LINE"
done
echo "== waiting for job $job to end and be attributed"
wait_verdict "$job" "$demo/attrib/verdict.json"

echo
echo "== first verdict in sacct $((SECONDS - started)) s after the demo started (installing and building included)"
echo "\$ sacct -j $job -o JobID,State,ExitCode,Comment%120"
sacct -j "$job" -o JobID,State,ExitCode,Comment%120
# The demo proves something only if it checks what it shows: n2's Xid 79 is the cause.
comment=$(sacct -n -X -P -j "$job" -o Comment)
if [[ "$comment" != *"attrib: GPU_HARDWARE node=n2 "* ]]; then
  echo "demo: FAILED: job $job's Comment in sacct is '$comment', not the GPU_HARDWARE verdict on n2" >&2
  exit 1
fi
# The run's record, the README's source for the demo's time (scripts/record-run.sh demo).
seconds_to_verdict=$((SECONDS - started))
printf '{"finished": "%s", "commit": "%s", "seconds_to_verdict": %d}\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  "$(source_commit "$src")" "$seconds_to_verdict" > "$ATTRIB_BUILD_DIR/demo-run.json"
echo
echo "\$ attrib-show $job"
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$job"
echo
echo "== tearing down"
echo "demo: PASSED: job $job's Comment in sacct names GPU_HARDWARE on n2"
