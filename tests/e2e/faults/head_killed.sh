#!/usr/bin/env bash
# The head SIGKILLed at each step of an attempt (a test-only failpoint, core/failpoint.h:
# ATTRIB_FAILPOINT=<step> makes it kill itself on reaching the step):
#   queue.committed          the job queued from the hook's spool file, the file not yet removed
#   attempt.scoped           slurmdbd's record read, nothing judged
#   attempt.judged           the verdict made, not archived
#   archive.mid_transaction  verdict, history and events written, not committed
#   attempt.archived         archived, the Comment not written
#   comment.written          the Comment in slurmdbd, not read back, the run not done
# After each, a restarted head attributes the job: one run, one verdict with its events
# once, one attrib segment in the Comment, the spool drained. No node is drained.
source "$(dirname "$0")/../lib.sh"
setup_run fault_head_killed
db=$run_dir/attrib.db
steps=(queue.committed attempt.scoped attempt.judged archive.mid_transaction attempt.archived comment.written)

for step in "${steps[@]}"; do
  ATTRIB_FAILPOINT=$step start_daemon
  job=$(submit -N1 --wrap 'exit 3')
  for _ in $(seq 200); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$daemon_pid" 2>/dev/null; then
    fail "job $job: the head did not die at $step (built without ATTRIB_FAILPOINTS?)"
  fi
  wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=
  grep -q "failpoint $step: SIGKILL" "$run_dir/attributiond.log" || fail "the head died, but not at $step"
  note "job $job: head killed at $step"
  start_daemon
  await_verdict "$job"
  expect_spool_drained "after $step"
  sleep 1 # a second run, a second comment write, would show by now
  expect_eq "$(sqlite3 "$db" "select count(*) from jobs where job_id='$job'")" 1 "runs of job $job after $step"
  expect_eq "$(sqlite3 "$db" "select status from jobs where job_id='$job'")" done "job $job after $step"
  expect_eq "$(verdict "$job" .domain)" UNATTRIBUTED "domain of job $job after $step"
  events=$(verdict "$job" '[.root_cause, .symptoms[]?, .unexplained[]?] | map(select(. != null)) | length')
  expect_eq "$(sqlite3 "$db" "select count(*) from events where job_id='$job'")" "$events" "events archived for job $job after $step"
  expect_eq "$(sqlite3 "$db" "select count(*) from history where job_id='$job'")" 1 "history rows of job $job after $step"
  expect_eq "$(grep -o 'attrib:' <<<"$(sacct_field "$job" Comment)" | wc -l)" 1 "attrib segments in job $job's Comment after $step"
  stop_daemon
done
expect_no_node_drained
echo PASS
