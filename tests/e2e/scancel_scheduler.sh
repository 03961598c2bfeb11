#!/usr/bin/env bash
# scancel: the accounting record says CANCELLED, the verdict says SCHEDULER.
source "$(dirname "$0")/lib.sh"
setup_run scancel_scheduler
start_daemon
job=$(submit -N1 --wrap 'sleep 120')
wait_state "$job" RUNNING
scancel "$job"
await_verdict "$job"
expect_contains "$(sacct_field "$job" State)" CANCELLED "sacct state"
expect_contains "$(sacct_field "$job" Comment)" "attrib: SCHEDULER" "sacct comment"
expect_eq "$(verdict "$job" .domain)" SCHEDULER "domain"
expect_eq "$(verdict "$job" .terminal_state)" CANCELLED "terminal state"
# slurmdbd's requid reaches the verdict through the accounting job line: the script
# cancels as root, so the summary names root (uid 0).
expect_eq "$(verdict "$job" .root_cause.rule)" slurm.cancelled_by "root cause rule"
expect_contains "$(verdict "$job" .root_cause.summary)" "cancelled by root (uid 0)" "verdict summary"
echo PASS
