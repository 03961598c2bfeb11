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

start_daemon() { start_attributiond "$run_dir" || fail "attributiond did not start"; }
stop_daemon() { stop_attributiond; }
kill_daemon() { kill -KILL "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true; daemon_pid=; }
wait_state() { wait_job_state "$1" "$2" || fail "job $1 never reached $2"; }
inject() { local host=$1; shift; inject_journal "$run_dir" "$host" "$@"; }
await_verdict() { wait_verdict "$1" "$run_dir/verdict-$1.json" || fail "no verdict for job $1"; }
verdict() { jq -r "$2" "$run_dir/verdict-$1.json"; }
sacct_field() { sacct -n -X -P -j "$1" -o "$2"; }

expect_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }
expect_contains() { case "$1" in *"$2"*) ;; *) fail "$3: '$1' does not contain '$2'" ;; esac; }
