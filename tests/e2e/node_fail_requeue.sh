#!/usr/bin/env bash
# The main hardware case of a requeue: a --requeue job on two nodes, one of which dies
# (its GPU fell off the bus: Xid 79 in its kernel log, then its slurmd is gone). Slurm
# ends attempt 0 with NODE_FAIL and requeues the job under the same id; attempt 1 runs on
# the nodes left and completes. Attempt 0 is blamed on the dead node's GPU with the Xid
# as its root cause; attempt 1 gets its own verdict on its own nodes and window.
source "$(dirname "$0")/lib.sh"
setup_run node_fail_requeue
start_daemon

job=$(submit -N2 --requeue --wrap 'if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 300; fi')
wait_state "$job" RUNNING
victim=$(scontrol show hostnames "$(squeue -h -j "$job" -o %N)" | tail -n 1)
# Whatever happens below, the node comes back for the tests after this one.
trap 'cluster node-start "$victim" >/dev/null 2>&1 || true; stop_attributiond' EXIT
sleep 1
inject "$victim" --transport kernel --uid 0 -- "${XID79_LINES[@]}"
cluster node-kill "$victim"
# slurmctld notices the silent node within SlurmdTimeout (10 s): NODE_FAIL, requeued.
release_requeued "$job" 60 "after $victim died"
run_verdict "$job" 0
run_verdict "$job" 1
first="$run_dir/verdict-$job-run0.json"
second="$run_dir/verdict-$job-run1.json"
rows=$(sacct -D -n -X -P -j "$job" -o State,NodeList)
note "sacct -D: $(tr '\n' ' ' <<<"$rows")"

expect_eq "$(jq -r .attempt "$first")" 0 "attempt of run 0"
expect_eq "$(jq -r .terminal_state "$first")" "$(sed -n 1p <<<"$rows" | cut -d'|' -f1)" "state of attempt 0 (its own row)"
expect_eq "$(jq -r .domain "$first")" GPU_HARDWARE "domain of attempt 0"
expect_eq "$(jq -r '.affected_nodes | join(",")' "$first")" "$victim" "node blamed for attempt 0"
expect_eq "$(jq -r .root_cause.event.source "$first")" kernel "root cause of attempt 0"
expect_contains "$(jq -r .root_cause.event.line "$first")" "Xid (PCI:0000:3b:00): 79" "root cause line of attempt 0"

expect_eq "$(jq -r .attempt "$second")" 1 "attempt of run 1"
# Attempt 1 usually completes. When it starts within a second on the same batch host,
# that slurmd may still refuse it ("Job N already killed, do not launch batch job") and
# Slurm records FAILED: either way the verdict is its own row's, never attempt 0's Xid.
state1=$(sed -n 2p <<<"$rows" | cut -d'|' -f1)
expect_eq "$(jq -r .terminal_state "$second")" "$state1" "state of attempt 1 (its own row)"
[ "$state1" != COMPLETED ] || expect_eq "$(jq -r .domain "$second")" NONE "domain of attempt 1"
[ "$(jq -r .root_cause.event.line "$second")" = null ] || [[ "$(jq -r .root_cause.event.line "$second")" != *"Xid"* ]] ||
  fail "attempt 1 is blamed on attempt 0's Xid"
nodes1=$(jq -r '[.coverage[].node] | unique | join(",")' "$second")
case ",$nodes1," in *",$victim,"*) fail "attempt 1 is read on the dead node $victim ($nodes1)" ;; esac
expect_eq "$nodes1" "$(scontrol show hostnames "$(sed -n 2p <<<"$rows" | cut -d'|' -f2)" | paste -sd,)" \
  "attempt 1's nodes (its own row)"
start0=$(jq -r '[.coverage[].window[0]] | min' "$first")
start1=$(jq -r '[.coverage[].window[0]] | min' "$second")
[[ "$start0" < "$start1" ]] || fail "attempt 1's window ($start1) does not start after attempt 0's ($start0)"

expect_contains "$(sacct_field "$job" Comment)" "attempt=1" "the Comment shows the latest attempt"
cluster node-start "$victim" || fail "$victim did not come back"
echo "PASS: the dead node's Xid is attempt 0's cause; attempt 1 is judged on its own"
