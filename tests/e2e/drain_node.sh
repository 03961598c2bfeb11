#!/usr/bin/env bash
# Remediation on the real cluster (docs/fleet.md). With remediation.mode drain, an Xid 79
# on n2 while two jobs run there gives two trusted GPU_HARDWARE verdicts recommending
# DRAIN_NODE: the head daemon drains n2 once through slurmctld (sinfo -R shows the
# reason "attrib: job <id> rule <rule> ..."), and the second verdict finds n2 already
# drained and leaves it alone. After a resume, the same failure in dry-run mode drains
# nothing but is recorded, and attrib-show --node / --since list all of it. Last, a job that
# prints a GPU error itself gets a low-confidence verdict that drains nothing.
source "$(dirname "$0")/lib.sh"
setup_run drain_node
# Whatever happens, n2 goes back into service so later scenarios find every node up.
trap 'scontrol update nodename=n2 state=resume >/dev/null 2>&1 || true; stop_attributiond' EXIT
scontrol update nodename=n2 state=resume >/dev/null 2>&1 || true

set_mode() {  # set_mode MODE: remediation.mode for the next daemon start (last key of the file)
  sed -i '/^remediation:/,$d' "$run_dir/attrib.yaml"
  printf 'remediation:\n  mode: %s\n  max_drains_per_hour: 4\n' "$1" >> "$run_dir/attrib.yaml"
}
node_state() { sinfo -h -n n2 -o '%T'; }
node_reason() { sinfo -h -n n2 -o '%250E' | sed 's/ *$//'; }
history_json() { "$ATTRIB_SHOW" --server "$DAEMON_ADDR" --node n2 --json; }

# --- drain: two verdicts on n2, one drain -----------------------------------------------
set_mode drain
start_daemon
job1=$(submit -N1 -n1 -w n2 --wrap 'sleep 6; exit 1')
job2=$(submit -N1 -n1 -w n2 --wrap 'sleep 6; exit 1')
wait_state "$job1" RUNNING
wait_state "$job2" RUNNING
sleep 1
inject n2 --transport kernel --uid 0 -- "${XID79_LINES[@]}"
await_verdict "$job1"
await_verdict "$job2"
for job in "$job1" "$job2"; do
  expect_eq "$(verdict "$job" .domain)" GPU_HARDWARE "job $job domain"
  expect_eq "$(verdict "$job" .recommended_action)" DRAIN_NODE "job $job action"
  expect_eq "$(verdict "$job" .root_cause.event.trusted)" true "job $job trusted root cause"
done
rule=$(verdict "$job1" .root_cause.rule)

history_json > "$run_dir/history-drain.json"
drained_job=$(jq -r '[.remediation[] | select(.action == "drained")] | map(.job_id) | join(",")' "$run_dir/history-drain.json")
skipped_job=$(jq -r '[.remediation[] | select(.action == "skipped_already_drained")] | map(.job_id) | join(",")' "$run_dir/history-drain.json")
[ -n "$drained_job" ] || fail "no drained record: $(cat "$run_dir/history-drain.json")"
expect_eq "$(printf '%s\n' "$drained_job" "$skipped_job" | sort -n | paste -sd,)" "$job1,$job2" "one drain, one skip (never twice)"
state=$(node_state)
case "$state" in drain*) ;; *) fail "n2 is '$state', not drained" ;; esac
reason=$(node_reason)
expect_eq "$reason" "$(jq -r '.remediation[] | select(.action == "drained") | .reason' "$run_dir/history-drain.json")" \
  "slurm reason == recorded reason"
case "$reason" in "attrib: job $drained_job rule $rule GPU_HARDWARE"*) ;; *) fail "reason '$reason'" ;; esac
sinfo -R | tee "$run_dir/sinfo-R.txt"   # the default columns cut the reason at 20 characters
sinfo -R -h -o '%250E|%u|%T|%N' | sed 's/ *|/|/g' > "$run_dir/sinfo-R-long.txt"
expect_eq "$(grep '|n2$' "$run_dir/sinfo-R-long.txt" | cut -d'|' -f1)" "$reason" "sinfo -R reason"
expect_eq "$(grep '|n2$' "$run_dir/sinfo-R-long.txt" | cut -d'|' -f2)" root "sinfo -R user (reason_uid)"
case "$(grep '|n2$' "$run_dir/sinfo-R-long.txt" | cut -d'|' -f3)" in drain*) ;; *) fail "sinfo -R state: $(cat "$run_dir/sinfo-R-long.txt")" ;; esac
# The skip kept the first reason: slurmctld was not asked twice.
expect_contains "$(jq -r '.remediation[] | select(.action == "skipped_already_drained") | .detail' "$run_dir/history-drain.json")" \
  "already drained: attrib: job $drained_job" "skip detail"
stop_daemon

# --- dry-run: recorded, not drained -----------------------------------------------------
scontrol update nodename=n2 state=resume
[ "$(node_state)" = idle ] || sleep 1
set_mode dry-run
start_daemon
job3=$(submit -N1 -n1 -w n2 --wrap 'sleep 4; exit 1')
wait_state "$job3" RUNNING
sleep 1
inject n2 --transport kernel --uid 0 -- "${XID79_LINES[@]}"
await_verdict "$job3"
expect_eq "$(verdict "$job3" .recommended_action)" DRAIN_NODE "job $job3 action"
state=$(node_state)
case "$state" in drain*) fail "dry-run drained n2 ($state: $(node_reason))" ;; esac
history_json > "$run_dir/history-dry.json"
expect_eq "$(jq -r ".remediation[] | select(.job_id == \"$job3\") | .action" "$run_dir/history-dry.json")" would_drain \
  "dry-run record"
expect_eq "$(jq -r ".remediation[] | select(.job_id == \"$job3\") | .reason" "$run_dir/history-dry.json")" \
  "attrib: job $job3 rule $rule GPU_HARDWARE repeat offender (3 in 14d)" "dry-run reason"

# --- attrib-show --node / --since -------------------------------------------------------
# Jobs 1 and 2 ran side by side and ended together: lists order verdicts by the job's end,
# which for one may be jobcomp/script's whole-second END and for the other EpilogSlurmctld's
# hook time (a second later on Slurm 24.11), so either may come first.
in_end_order() {  # in_end_order LIST WHAT
  case "$1" in
    "$job1,$job2,$job3" | "$job2,$job1,$job3") ;;
    *) fail "$2: expected $job1 and $job2 (either order), then $job3; got '$1'" ;;
  esac
}
in_end_order "$(jq -r '.verdicts | map(.job_id) | join(",")' "$run_dir/history-dry.json")" "node history"
expect_eq "$(jq -r '.offender' "$run_dir/history-dry.json")" true "n2 is a repeat offender"
expect_eq "$(jq -r '[.offenders[] | select(.gpu == "0000:3b:00.0") | .verdicts] | join(",")' "$run_dir/history-dry.json")" 3 \
  "the GPU is a repeat offender"
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" --node n2 | tee "$run_dir/node.txt"
expect_contains "$(cat "$run_dir/node.txt")" "Node n2: REPEAT OFFENDER: 3 counted verdicts in 14d" "node text"
expect_contains "$(cat "$run_dir/node.txt")" "would_drain" "node text remediation"
expect_contains "$(cat "$run_dir/node.txt")" "skipped_already_drained" "node text skip"
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" --since 1h --json > "$run_dir/since.json"
in_end_order "$(jq -r '[.verdicts[] | select(.domain == "GPU_HARDWARE") | .job_id] | join(",")' "$run_dir/since.json")" \
  "--since list"
expect_eq "$(jq -r '.counts[] | select(.domain == "GPU_HARDWARE") | .jobs' "$run_dir/since.json")" 3 "--since counts"
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" --since "$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M)" --domain GPU_HARDWARE \
  | tee "$run_dir/since.txt"
expect_contains "$(cat "$run_dir/since.txt")" "in GPU_HARDWARE: 3" "--since text"
expect_contains "$(cat "$run_dir/since.txt")" "$rule" "--since text rule"
expect_eq "$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --since 1h --domain NONE --json | jq '.verdicts | length')" 0 \
  "--domain NONE"
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" --since yesterday-ish >/dev/null 2>&1 && fail "a bad --since was accepted"
stop_daemon

# --- a user's printout: a low-confidence verdict that names the GPU and drains nothing ---
# CUDA's "uncorrectable ECC error encountered" in the job's own output points at the GPU,
# but anyone can print it: GPU_HARDWARE at confidence low, action NONE, and n2 stays up
# even with remediation.mode drain.
scontrol update nodename=n2 state=resume >/dev/null 2>&1 || true   # not drained since the dry run
[ "$(node_state)" = idle ] || sleep 1
set_mode drain
start_daemon
job4=$(sbatch --parsable -N1 -n1 -w n2 --output="$run_dir/printed-%j.out" \
  --wrap 'echo "RuntimeError: CUDA error: uncorrectable ECC error encountered"; exit 1' | cut -d';' -f1)
await_verdict "$job4"
expect_eq "$(verdict "$job4" .domain)" GPU_HARDWARE "printed ECC error: domain"
expect_eq "$(verdict "$job4" .confidence)" low "printed ECC error: confidence"
expect_eq "$(verdict "$job4" .recommended_action)" NONE "printed ECC error: action"
expect_eq "$(verdict "$job4" .root_cause.event.trusted)" false "printed ECC error: untrusted"
expect_contains "$(sacct_field "$job4" Comment)" "conf=low" "sacct comment says how sure"
sleep 2   # remediation runs right after the verdict: give it the time to (wrongly) act
case "$(node_state)" in drain*) fail "a user's printout drained n2 ($(node_reason))" ;; esac
expect_eq "$(history_json | jq -r "[.remediation[] | select(.job_id == \"$job4\")] | length")" 0 \
  "no remediation record for the printout"
echo PASS
