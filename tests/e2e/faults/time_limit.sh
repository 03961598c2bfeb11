#!/usr/bin/env bash
# A job past its time limit: slurmctld ends it (SIGTERM, KillWait, SIGKILL), sacct says
# TIMEOUT, and the verdict is SCHEDULER by the time-limit rule (slurm.timeout), with
# slurmstepd's "DUE TO TIME LIMIT" line from the job's output among its symptoms, and the
# same line from slurmd's own log (the slurm_log collector over the cluster's
# SlurmdLogFile, root's file: trusted, source slurm); the Comment is written once and no
# node is drained.
#
# Slurm keeps time limits in whole minutes and checks them every 30 s: a --time=1 job
# would run 60-90 s. The job is submitted with --time=1 and, once running, its limit is
# lowered to 0 (an admin's `scontrol update TimeLimit=`), so the next check ends it: the
# same time-limit path, within 30 s.
source "$(dirname "$0")/../lib.sh"
setup_run fault_time_limit
read_slurmd_logs
start_daemon
out=$run_dir/job-%j.out
job=$(sbatch --parsable -N1 -w n3 --time=1 --output="$out" --wrap 'sleep 300' | cut -d';' -f1)
wait_state "$job" RUNNING
started=$SECONDS
expire_time_limit "$job"
note "job $job ended $((SECONDS - started)) s after its limit was lowered"
await_verdict "$job"
note "verdict: $(jq -c '{domain, terminal_state, rule: .root_cause.rule, action: .recommended_action, comment}' "$run_dir/verdict-$job.json")"

expect_eq "$(sacct_field "$job" State)" TIMEOUT "sacct state"
expect_eq "$(verdict "$job" .terminal_state)" TIMEOUT "terminal state"
expect_eq "$(verdict "$job" .domain)" SCHEDULER "domain"
expect_eq "$(verdict "$job" .root_cause.rule)" slurm.timeout "root cause rule"
expect_eq "$(verdict "$job" .recommended_action)" RESUBMIT "action"
expect_contains "$(verdict "$job" .root_cause.summary)" "Job $job reached its time limit" "verdict summary"
expect_contains "$(cat "$run_dir/job-$job.out")" "DUE TO TIME LIMIT" "slurmstepd's line in the job's output"
expect_eq "$(verdict "$job" '[.symptoms[] | select(.event.kind == "slurm.time_limit") | .event.node] | unique | join(",")')" n3 \
  "slurmstepd's time-limit line among the symptoms"
expect_eq "$(verdict "$job" '[(.symptoms[].event), .root_cause.event | select(.kind == "slurm.time_limit" and .source == "slurm") | "\(.node) \(.trusted)"] | unique | join(",")')" "n3 true" \
  "slurmd's log: the time-limit line, trusted, as source slurm"
expect_eq "$(verdict "$job" '[.coverage[] | select(.source == "slurm" and .node == "n3") | .status] | join(",")')" ok \
  "coverage of slurmd's log on n3"
comment=$(sacct_field "$job" Comment)
expect_eq "$(grep -o 'attrib:' <<<"$comment" | wc -l)" 1 "attrib segments in the Comment ($comment)"
expect_contains "$comment" "attrib: SCHEDULER rule=slurm.timeout action=RESUBMIT" "sacct comment"
expect_no_node_drained
echo PASS
