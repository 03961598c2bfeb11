#!/usr/bin/env bash
# A requeued job is judged per attempt (docs/verdict-reference.md, "Attempts"): attempt 0
# runs until `scontrol requeue`, attempt 1 fails (exit 7). Each has its own verdict
# from its own accounting row and time window; the Comment on the job's newest row shows
# the latest attempt; attrib-show lists both runs.
source "$(dirname "$0")/lib.sh"
setup_run requeue_attempts
start_daemon

job=$(submit -N1 --requeue --wrap 'if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 300; else exit 7; fi')
wait_state "$job" RUNNING
sleep 1
scontrol requeue "$job" || fail "scontrol requeue $job"
release_requeued "$job" 10 "by scontrol requeue"

run_verdict "$job" 0
run_verdict "$job" 1
first="$run_dir/verdict-$job-run0.json"
second="$run_dir/verdict-$job-run1.json"

[ "$(jq -r .attempt "$first")" = 0 ] || { grep -h "job $job" "$run_dir"/*.log | tail -20; sacct -D -X -P -j "$job" -o JobID,State,Submit,Start,End; fail "attempt of run 0: expected 0"; }
expect_eq "$(jq -r .terminal_state "$first")" REQUEUED "state of attempt 0 (its own row, not attempt 1's)"
expect_eq "$(jq -r .attempt "$second")" 1 "attempt of run 1"
expect_eq "$(jq -r .terminal_state "$second")" FAILED "state of attempt 1"
# Each verdict carries its own row's exit code (sacct -D: one row per attempt, oldest first).
# (Attempt 1 usually exits 7; Slurm sometimes fails its quick restart with 1:0 instead.)
rows_exit=$(sacct -D -n -X -P -j "$job" -o ExitCode)
expect_eq "$(jq -r '"\(.exit_code):\(.signal)"' "$first")" "$(sed -n 1p <<<"$rows_exit")" "exit code of attempt 0"
expect_eq "$(jq -r '"\(.exit_code):\(.signal)"' "$second")" "$(sed -n 2p <<<"$rows_exit")" "exit code of attempt 1"
# Each attempt is read over its own window, from its own start: attempt 1 started at
# least a second after attempt 0 (which ran a second before the requeue).
start0=$(jq -r '[.coverage[].window[0]] | min' "$first")
start1=$(jq -r '[.coverage[].window[0]] | min' "$second")
note "attempt 0 window starts $start0, attempt 1 window starts $start1"
[[ "$start0" < "$start1" ]] || fail "attempt 1's window does not start after attempt 0's"

# slurmdbd keeps the Comment on the newest row: the latest attempt's verdict.
rows=$(sacct -D -n -X -P -j "$job" -o State,Comment)
note "sacct -D: $rows"
expect_contains "$(sacct_field "$job" Comment)" "attempt=1" "the Comment names the attempt it shows"
expect_eq "$(jq -r .comment "$second")" "$(sacct_field "$job" Comment)" "the Comment is attempt 1's verdict"

all=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --all "$job")
expect_contains "$all" "== job $job, run 0 ==" "attrib-show --all"
expect_contains "$all" "== job $job, run 1 ==" "attrib-show --all"
newest=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$job" 2>&1)
expect_contains "$newest" "has 2 runs in the archive" "attrib-show names the other run"
echo "PASS: two attempts, two verdicts, each on its own accounting row"
