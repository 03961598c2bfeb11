#!/usr/bin/env bash
# Two jobs share n3 (one of its two CPUs each). Job A reaches its time limit: slurmstepd
# writes "*** JOB A ON n3 CANCELLED AT ... DUE TO TIME LIMIT ***" into n3's slurmd log
# (collector slurm_log: trusted, source slurm). Job B then fails for its own reason (a
# Python traceback in its output) with A's line inside its evidence window. Each verdict
# is its own: A's is SCHEDULER by its time limit, B's APPLICATION by its traceback, and
# B names A's line as a neighbour (context), never as its cause or a symptom; in sacct and
# in attrib-show alike.
source "$(dirname "$0")/lib.sh"
setup_run shared_node
read_slurmd_logs
start_daemon

# B waits for the marker the test writes once A has ended, then fails on its own.
marker=$run_dir/a-ended
a=$(sbatch --parsable -N1 -n1 -w n3 --time=1 --output="$run_dir/a-%j.out" --wrap 'sleep 300' | cut -d';' -f1)
# A's task begins a whole second before B's window: its record is still B's context.
wait_state "$a" RUNNING
sleep 1.5
b=$(sbatch --parsable -N1 -n1 -w n3 --output="$run_dir/b-%j.out" \
  --wrap "while [ ! -e '$marker' ]; do sleep 0.2; done; python3 -c 'import json; json.loads(\"{\")'" | cut -d';' -f1)
wait_state "$a" RUNNING
wait_state "$b" RUNNING
expect_eq "$(squeue -h -j "$a,$b" -o %N | sort -u | tr '\n' ' ')" "n3 " "both jobs on n3 at once"
expire_time_limit "$a"
touch "$marker"
await_verdict "$a"
await_verdict "$b"
note "A: $(jq -c '{domain, rule: .root_cause.rule, neighbours: [.neighbours[]?.summary]}' "$run_dir/verdict-$a.json")"
note "B: $(jq -c '{domain, rule: .root_cause.rule, neighbours: [.neighbours[]?.summary]}' "$run_dir/verdict-$b.json")"

expect_eq "$(sacct_field "$a" State)" TIMEOUT "job A's sacct state"
expect_eq "$(verdict "$a" .domain)" SCHEDULER "job A's domain"
expect_eq "$(verdict "$a" .root_cause.rule)" slurm.timeout "job A's root cause"
expect_eq "$(verdict "$a" '[.symptoms[] | select(.event.kind == "slurm.time_limit" and .event.source == "slurm")] | length')" 1 \
  "job A's own time-limit line from n3's slurmd log"
expect_eq "$(verdict "$a" '[.neighbours[]?] | length')" 0 "job A's neighbours"
expect_contains "$(sacct_field "$a" Comment)" "attrib: SCHEDULER" "job A's sacct comment"

expect_eq "$(sacct_field "$b" State)" FAILED "job B's sacct state"
expect_eq "$(verdict "$b" .domain)" APPLICATION "job B's domain"
expect_eq "$(verdict "$b" .root_cause.rule)" app.python_exception "job B's root cause"
expect_contains "$(sacct_field "$b" Comment)" "attrib: APPLICATION" "job B's sacct comment"
expect_eq "$(verdict "$b" '[.symptoms[], .unexplained[] | select((.event // .).kind == "slurm.time_limit")] | length')" 0 \
  "job A's time limit among job B's evidence"
expect_eq "$(verdict "$b" '[.neighbours[] | select(.event.kind == "slurm.time_limit") | .job] | join(",")')" "$a" \
  "job A's time limit as job B's neighbour"
expect_eq "$(verdict "$b" '.neighbours[] | select(.event.kind == "slurm.time_limit") | .why')" "names job $a, not $b" \
  "why the line is not job B's"
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$b" >"$run_dir/show-b.txt" || fail "attrib-show $b"
expect_contains "$(cat "$run_dir/show-b.txt")" "Neighbours (1, context, not this job's evidence):" "attrib-show's neighbours"
expect_contains "$(cat "$run_dir/show-b.txt")" "n3 was shared with job $a: " "attrib-show names the neighbour"
# Exported with its raw evidence and replayed offline, job B's verdict (neighbours and
# what the job held included) is the very same, byte for byte, but for its archive run.
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" --export-bundle "$run_dir/bundle-b" "$b" >"$run_dir/export-b.txt" 2>&1 ||
  fail "export: $(cat "$run_dir/export-b.txt")"
"$ATTRIB_BUILD_DIR/tools/attrib-replay" --json --pack "${ATTRIB_RULES_PACK_DIR:-$ATTRIB_SOURCE_DIR/rules/pack}" \
  "$run_dir/bundle-b" >"$run_dir/replayed-b.json" || fail "attrib-replay of job B's bundle failed"
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" --json "$b" | without_run >"$run_dir/archived-b.json"
cmp -s "$run_dir/replayed-b.json" "$run_dir/archived-b.json" ||
  fail "job B's replayed raw evidence gives another verdict: $(diff <(jq -S . "$run_dir/archived-b.json") <(jq -S . "$run_dir/replayed-b.json") | head -c 1500)"
echo PASS
