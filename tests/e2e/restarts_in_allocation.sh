#!/usr/bin/env bash
# Restarts inside one allocation: the batch script retries its application step when it
# fails (`for i in 1 2 3; do srun ... && break; done`). Rank 1 fails the first two runs
# (exit 7, on the second node), the third run succeeds. The verdict counts two restarts
# (slurmdbd's step records), judges the first failure (its task end, step 0, is the
# locator; the second run's failure is its symptom), and the Comment says restarts=2.
source "$(dirname "$0")/lib.sh"
setup_run restarts_in_allocation
start_daemon

job=$(submit -N2 -n2 --wrap "for run in 0 1 2; do
    srun -n2 bash -c 'if [ \$SLURM_PROCID = 1 ] && [ \$SLURM_STEP_ID -lt 2 ]; then exit 7; fi' && break
  done
  exit 7")
await_verdict "$job"
note "steps: $(sacct -n -P -j "$job" -o JobID,JobName,NTasks,State | tr '\n' ' ')"

expect_eq "$(verdict "$job" .restarts)" 2 "restarts inside the allocation"
expect_contains "$(sacct_field "$job" Comment)" "restarts=2" "the Comment"
expect_eq "$(verdict "$job" '[.unexplained[] | select(.kind == "slurm.task_exit") | "\(.fields.step) \(.fields.rank)"] | join(",")')" \
  "0 1" "the first failure (step 0, rank 1) is the one judged"
expect_eq "$(verdict "$job" '[.symptoms[] | select(.event.kind == "slurm.task_exit" and .event.fields.step != "batch") | .event.fields.step] | join(",")')" \
  "1" "the restarted run's failure is a symptom of the first"
expect_contains "$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$job")" "Restarted 2 times inside the allocation" "attrib-show"
echo "PASS: two restarts counted, the first failure judged"
