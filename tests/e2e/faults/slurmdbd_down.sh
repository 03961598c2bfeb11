#!/usr/bin/env bash
# slurmdbd is down when a job ends, for longer than the daemon's scope wait
# (head.scope_max_wait_s), then comes back. An unreachable slurmdbd is not a lagging
# record: the daemon must wait for it and, once it is back, judge the job on its final
# record (or the hook's facts, never the stale row). Asserted: the verdict says what the
# job did (exit 3 on n1: UNATTRIBUTED, FAILED, exit code 3), its Comment is in sacct
# exactly once, nothing is lost (no spool left, no job given up) and no node is drained.
source "$(dirname "$0")/../lib.sh"
setup_run fault_slurmdbd_down
scope_wait_s=3
sed -i "/^head:\$/a\\  scope_max_wait_s: $scope_wait_s" "$run_dir/attrib.yaml"
# Whatever happens below, slurmdbd comes back for the tests after this one.
trap 'cluster dbd-start >/dev/null 2>&1 || true; stop_attributiond' EXIT
start_daemon

# The job is submitted while slurmdbd is up and ends (exit 3 on n1) while it is down.
job=$(submit -N1 -w n1 --wrap 'sleep 2; exit 3')
wait_state "$job" RUNNING
cluster dbd-stop
note "slurmdbd stopped"
for _ in $(seq 150); do
  grep -q "job $job: queued" "$run_dir/attributiond.log" && break
  sleep 0.1
done
grep -q "job $job: queued" "$run_dir/attributiond.log" || fail "the hook did not report job $job"
# Down for three scope waits after the hook reported the job: never judged meanwhile.
sleep $((scope_wait_s * 3))
shown=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$job" 2>&1 || true)
[[ "$shown" != *"attrib:"* ]] || fail "job $job judged while slurmdbd was down: $shown"
cluster dbd-start
note "slurmdbd started again"
await_verdict "$job"
note "verdict: $(jq -c '{domain, terminal_state, exit_code, affected_nodes, comment}' "$run_dir/verdict-$job.json")"

# What the job did: from its final record, or, when slurmctld has not resent the job's end
# within the scope wait after slurmdbd's return, from the hook's facts -- never from the
# PENDING/RUNNING row slurmdbd holds until then (before the fix: PENDING, exit 0). The
# wait itself restarting at slurmdbd's return is tested in scope_test.cpp.
expect_eq "$(verdict "$job" .terminal_state)" FAILED "terminal state"
expect_eq "$(verdict "$job" .exit_code)" 3 "exit code"
expect_eq "$(verdict "$job" .domain)" UNATTRIBUTED "domain"
expect_eq "$(verdict "$job" .root_cause)" null "root cause"
expect_eq "$(verdict "$job" '.affected_nodes | join(",")')" n1 "nodes"

# sacct: the final state, and the Comment once (slurmctld's late job-end message did not
# drop it, and no second write doubled it). slurmctld resends the job's start before its
# end: in between, the row says FAILED with exit code 0:0 and no end time (what CI once
# caught). Wait for the end record itself, which carries the exit code.
for _ in $(seq 300); do
  [ "$(sacct_field "$job" State)" = FAILED ] && [ "$(sacct_field "$job" ExitCode)" = "3:0" ] && break
  sleep 0.1
done
expect_eq "$(sacct_field "$job" State)" FAILED "sacct state"
expect_eq "$(sacct_field "$job" ExitCode)" "3:0" "sacct exit code"
comment=$(sacct_field "$job" Comment)
expect_eq "$(grep -o 'attrib:' <<<"$comment" | wc -l)" 1 "attrib segments in the Comment ($comment)"
expect_contains "$comment" "attrib: UNATTRIBUTED node=n1" "sacct comment"

# Nothing lost, nothing drained.
expect_spool_drained
failed=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --failed 2>&1 || true)
[[ "$failed" != *"$job"* ]] || fail "job $job given up: $failed"
expect_no_node_drained
echo PASS
