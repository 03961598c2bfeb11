#!/usr/bin/env bash
# Preemption with PreemptMode=REQUEUE: a job on every node is preempted by a job of a
# higher-tier partition and requeued under the same id; its next attempt completes. The
# preempted attempt's verdict is SCHEDULER (slurm.preempted, RESUBMIT), judged on its own
# row, not on the next attempt's outcome; the next attempt gets its own verdict.
source "$(dirname "$0")/lib.sh"
setup_run preempt_requeue
start_daemon

job=$(submit -N3 --exclusive --requeue --wrap 'if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 300; fi')
wait_state "$job" RUNNING
sleep 1
urgent=$(submit -N1 -p urgent --wrap 'sleep 1')
release_requeued "$job" 30 "when $urgent preempted it"
await_verdict "$urgent"
run_verdict "$job" 0
run_verdict "$job" 1
first="$run_dir/verdict-$job-run0.json"
second="$run_dir/verdict-$job-run1.json"
rows=$(sacct -D -n -X -P -j "$job" -o State,Reason)
note "sacct -D: $(tr '\n' ' ' <<<"$rows")"

expect_eq "$(jq -r .attempt "$first")" 0 "attempt of run 0"
expect_eq "$(jq -r .terminal_state "$first")" "$(sed -n 1p <<<"$rows" | cut -d'|' -f1)" "state of attempt 0 (its own row)"
expect_eq "$(jq -r '"\(.domain) \(.root_cause.rule) \(.recommended_action)"' "$first")" \
  "SCHEDULER slurm.preempted RESUBMIT" "the preempted attempt's verdict"
expect_eq "$(jq -r .attempt "$second")" 1 "attempt of run 1"
expect_eq "$(jq -r .terminal_state "$second")" "$(sed -n 2p <<<"$rows" | cut -d'|' -f1)" "state of attempt 1 (its own row)"
[ "$(jq -r .root_cause.rule "$second")" != slurm.preempted ] || fail "attempt 1 is judged as preempted too"
echo "PASS: the preempted attempt is SCHEDULER, the next one is judged on its own"
