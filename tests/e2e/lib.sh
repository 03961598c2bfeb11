# Shared helpers for the end-to-end tests on the real cluster (sourced by each test).
# Each test gets its own attributiond (own SQLite archive, spool and journal directory),
# so evidence from one scenario never leaks into another's window. The cluster's
# EpilogSlurmctld wrapper follows the `current` link to the running test's config.
set -euo pipefail

: "${ATTRIB_BUILD_DIR:?}" "${ATTRIB_SOURCE_DIR:?}" "${ATTRIB_E2E_CLUSTER_DIR:?}" "${ATTRIB_E2E_DIR:?}"
source "$ATTRIB_E2E_CLUSTER_DIR/env.sh"
DAEMON_ADDR=127.0.0.1:7169
source "$ATTRIB_SOURCE_DIR/scripts/lib/local-attrib.sh"

fail() {
  echo "FAIL: $*" >&2
  [ -f "${run_dir:-/nonexistent}/attributiond.log" ] && tail -n 40 "$run_dir/attributiond.log" >&2
  exit 1
}
note() { echo "--- $*"; }

# setup_run NAME: fresh directory and config for this scenario.
setup_run() {
  run_dir=$ATTRIB_E2E_DIR/runs/$1
  rm -rf "$run_dir"
  write_attrib_config "$run_dir"
  seed_journal "$run_dir"
  ln -sfn "$run_dir" "$ATTRIB_E2E_DIR/current"
  trap 'stop_attributiond' EXIT
}

# epilog_delivery spool|rpc: how the scenario's hooks hand jobs over (epilog.delivery).
epilog_delivery() {
  sed -i "s/^epilog:\$/epilog:\n  delivery: $1/" "$run_dir/attrib.yaml"
  grep -q "^  delivery: $1\$" "$run_dir/attrib.yaml" || fail "cannot set epilog.delivery $1"
}

# attrib's own munged (the cluster's key), so a scenario can stop it and leave Slurm's:
# use_private_munged makes its directory and exports ATTRIB_MUNGE_SOCKET (before the
# configs that name it are edited); start_munged and kill_munged; munged_pid while it runs.
munged_pid=
use_private_munged() {
  munge_dir=$run_dir/munge
  install -d -m 755 -o munge -g munge "$munge_dir"
  export ATTRIB_MUNGE_SOCKET=$munge_dir/munge.socket
}
start_munged() {
  rm -f "$ATTRIB_MUNGE_SOCKET"
  setpriv --reuid=munge --regid=munge --init-groups \
    munged --foreground --socket="$ATTRIB_MUNGE_SOCKET" --pid-file="$munge_dir/munged.pid" \
    --log-file="$munge_dir/munged.log" --seed-file="$munge_dir/munged.seed" </dev/null >/dev/null 2>&1 &
  munged_pid=$!
  for _ in $(seq 100); do [ -S "$ATTRIB_MUNGE_SOCKET" ] && return 0; sleep 0.1; done
  fail "attrib's munged did not start: $(tail -n 5 "$munge_dir/munged.log" 2>/dev/null)"
}
kill_munged() { kill -KILL "$munged_pid"; wait "$munged_pid" 2>/dev/null || true; munged_pid=; }

start_daemon() { start_attributiond "$run_dir" || fail "attributiond did not start"; }
stop_daemon() { stop_attributiond; }
kill_daemon() { kill -KILL "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true; daemon_pid=; }
wait_state() { wait_job_state "$1" "$2" || fail "job $1 never reached $2"; }
inject() { local host=$1; shift; inject_journal "$run_dir" "$host" "$@"; }
await_verdict() { wait_verdict "$1" "$run_dir/verdict-$1.json" || fail "no verdict for job $1"; }
verdict() { jq -r "$2" "$run_dir/verdict-$1.json"; }
sacct_field() { sacct -n -X -P -j "$1" -o "$2"; }

# cluster ACTION [ARG]: scripts/cluster.sh on the suite's cluster (node-kill, node-start,
# ctld-lose-state).
cluster() { "$ATTRIB_SOURCE_DIR/scripts/cluster.sh" "$1" "$ATTRIB_E2E_CLUSTER_DIR" "${@:2}"; }

# release_requeued JOB SECONDS WHY: waits up to SECONDS for the job to be requeued
# (PENDING again), then lets its next attempt start now: Slurm holds a requeued job for
# two minutes (BeginTime).
release_requeued() {
  for _ in $(seq $(($2 * 10))); do [ "$(squeue -h -j "$1" -o %T)" = PENDING ] && break; sleep 0.1; done
  [ "$(squeue -h -j "$1" -o %T)" = PENDING ] || fail "job $1 was not requeued $3"
  scontrol update jobid="$1" StartTime=now || fail "cannot release job $1"
}

# read_slurmd_logs: the daemon also reads each node's slurmd log (collector slurm_log:
# root's file, trusted, source slurm). Before start_daemon.
read_slurmd_logs() {
  cat >>"$run_dir/attrib.yaml" <<YAML
  - kind: slurm_log
    options:
      path: $ATTRIB_E2E_CLUSTER_DIR/log/slurmd-{node}.log
YAML
}

# expire_time_limit JOB: ends a running job at its time limit within about 30 s. Slurm
# keeps limits in whole minutes and checks them every 30 s, so the job's limit is lowered
# to 0 (an admin's `scontrol update TimeLimit=`): the next pass ends it (then KillWait).
expire_time_limit() {
  scontrol update jobid="$1" TimeLimit=0 || fail "cannot lower the time limit of job $1"
  for _ in $(seq 450); do [ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = RUNNING ] || break; sleep 0.1; done
  [ "$(squeue -h -j "$1" -o %T 2>/dev/null)" != RUNNING ] || fail "job $1 still running 45 s past its time limit"
}

# run_verdict JOB RUN: waits until that run of the job is attributed and its comment
# written; leaves its JSON in $run_dir/verdict-JOB-runRUN.json.
run_verdict() {
  local out="$run_dir/verdict-$1-run$2.json" shown
  for _ in $(seq 900); do
    if shown=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --run "$2" "$1" 2>/dev/null) &&
       [[ "$shown" != *"not yet written to Slurm"* ]]; then
      "$ATTRIB_SHOW" --server "$DAEMON_ADDR" --run "$2" --json "$1" > "$out" && return 0
    fi
    sleep 0.1
  done
  fail "no verdict for run $2 of job $1"
}

# as_user COMMAND...: COMMAND as the ordinary user nobody, against this cluster.
as_user() {
  (cd /tmp && setpriv --reuid=nobody --regid=nogroup --clear-groups env SLURM_CONF="$SLURM_CONF" \
    ATTRIB_MUNGE_SOCKET="$ATTRIB_MUNGE_SOCKET" "$@")
}
expect_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }
expect_contains() { case "$1" in *"$2"*) ;; *) fail "$3: '$1' does not contain '$2'" ;; esac; }
# An archived verdict (stdin) as attrib-replay prints it: the archive alone knows the run,
# the member after "ruleset" in verdict v1's sorted keys; the rest is compared byte for byte.
without_run() { sed -E 's/("ruleset":\{[^}]*\}),"run":[0-9]+/\1/'; }

# expect_no_node_drained [WHEN]: no node drained or down (a hook must never cause it).
expect_no_node_drained() {
  local drained
  drained=$(sinfo -h -N -o '%N %t %E' | grep -E ' (drain|drng|drained|down)' || true)
  [ -z "$drained" ] || fail "nodes drained or down${1:+ $1}: $drained"
}

# expect_spool_drained [WHEN]: within 5 s, no job file left in the run's spool (the head
# took every spooled report).
expect_spool_drained() {
  for _ in $(seq 50); do [ -z "$(ls "$run_dir/spool"/*.jobended 2>/dev/null)" ] && return 0; sleep 0.1; done
  fail "spool not drained${1:+ $1}: $(ls "$run_dir/spool")"
}

# expect_judged_once JOB DB: one run of the job in the archive DB, done, and one attrib
# segment in its Comment: nothing lost, nothing doubled.
expect_judged_once() {
  expect_eq "$(sqlite3 "$2" "select count(*) from jobs where job_id='$1'")" 1 "runs archived for job $1"
  expect_eq "$(sqlite3 "$2" "select count(*) from jobs where job_id='$1' and status='done'")" 1 "job $1 judged"
  expect_eq "$(grep -o 'attrib:' <<<"$(sacct_field "$1" Comment)" | wc -l)" 1 "attrib segments in job $1's Comment"
}
