#!/usr/bin/env bash
# A 200-task array with a few failing tasks: every task gets its own verdict, and
# `attrib-show <array job>` rolls them up (attrib.array_rollup.v1): tasks by domain and
# state, the tasks that did not succeed, nothing waiting once all are judged. The text
# form names the failing tasks; `attrib-show <array>_<task>` still shows one task.
# What the tasks cost slurmdbd is noted from the head's metrics (attrib_slurmdbd_requests).
source "$(dirname "$0")/lib.sh"
setup_run array_rollup
metrics=127.0.0.1:7178
sed -i "s|^head:\$|head:\n  metrics_listen: $metrics|" "$run_dir/attrib.yaml"
grep -q "^  metrics_listen: $metrics\$" "$run_dir/attrib.yaml" || fail "cannot set head.metrics_listen"
start_daemon

array=$(sbatch --parsable --array=1-200 -N1 -n1 --output=/dev/null \
  --wrap 'if [ $((SLURM_ARRAY_TASK_ID % 50)) = 0 ]; then exit 3; fi' | cut -d';' -f1)
note "array job $array"
rollup="$run_dir/rollup.json"
for _ in $(seq 3000); do
  if "$ATTRIB_SHOW" --server "$DAEMON_ADDR" --json "$array" > "$rollup" 2>/dev/null &&
     [ "$(jq -r '"\(.tasks) \(.waiting)"' "$rollup")" = "200 0" ]; then
    break
  fi
  sleep 0.1
done
note "roll-up: $(jq -c '{tasks, waiting, domains, states}' "$rollup" 2>/dev/null)"
expect_eq "$(jq -r .schema "$rollup")" attrib.array_rollup.v1 "schema"
expect_eq "$(jq -r '"\(.tasks) \(.waiting)"' "$rollup")" "200 0" "tasks judged and waiting"
# The truth, from slurmdbd: each task's own state.
expect_eq "$(jq -c .states "$rollup")" \
  "$(sacct -n -X -P -j "$array" -o State | sort | uniq -c | awk '{printf "%s\"%s\":%s", (NR > 1 ? "," : "{"), $2, $1} END {print "}"}')" \
  "states by task (sacct)"
expect_eq "$(jq -r '.domains.NONE' "$rollup")" 196 "tasks that succeeded"
expect_eq "$(jq -r '[.failed_tasks[].job_id] | join(" ")' "$rollup")" \
  "${array}_50 ${array}_100 ${array}_150 ${array}_200" "the failed tasks, in task order"
expect_eq "$(jq -r '[.failed_tasks[].state] | unique | join(",")' "$rollup")" FAILED "state of the failed tasks"
expect_eq "$(jq -r '[.domains | to_entries[] | .value] | add' "$rollup")" 200 "every task counted once"

text=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$array")
note "$text"
expect_contains "$text" "Array job $array on lab: 200 tasks judged" "text roll-up"
expect_contains "$text" "${array}_150" "text roll-up names a failed task"
one=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --json "${array}_100")
expect_eq "$(jq -r '"\(.job_id) \(.terminal_state) \(.exit_code)"' <<<"$one")" "${array}_100 FAILED 3" "one task"
# A task costs at most five round trips (its scoping read and the end of its transaction,
# its comment written, read back and committed) and at least its write: comments go in
# batches (one read-back and one commit each), and when the head falls behind, one read
# of the whole array scopes the tasks reported before it. A few connections are opened.
requests=$(curl -sS "http://$metrics/metrics" | awk '$1 == "attrib_slurmdbd_requests" {print $2}')
note "slurmdbd requests for 200 tasks: $requests"
[ -n "$requests" ] || fail "no attrib_slurmdbd_requests on /metrics"
awk -v r="$requests" 'BEGIN {exit !(r >= 200 && r <= 1010)}' ||
  fail "$requests slurmdbd requests for 200 tasks: expected 200 (a write each) to 1010 (five each, and connections)"
echo "PASS: 200 tasks, one roll-up, $requests slurmdbd requests"
