#!/usr/bin/env bash
# attributiond killed with SIGKILL while a job is being attributed (waiting for slurmdbd
# to finalise the record): after a restart the verdict appears, exactly once.
source "$(dirname "$0")/lib.sh"
setup_run daemon_killed_resume
start_daemon
job=$(submit -N1 --comment "exp 7" --wrap 'exit 3')
# Accepted (queued) but not finished: the accounting record lags the hook by seconds.
caught=
for _ in $(seq 200); do
  answer=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$job" 2>&1 || true)
  if [[ "$answer" == *"not attributed yet"* ]]; then caught=1; break; fi
  sleep 0.05
done
[ -n "$caught" ] || fail "job $job was not caught mid-attribution: $answer"
kill_daemon
note "killed attributiond while job $job was queued"
start_daemon
await_verdict "$job"
comment=$(sacct_field "$job" Comment)
expect_eq "$(grep -o 'attrib:' <<<"$comment" | wc -l)" 1 "attrib segments in the comment"
expect_eq "$(sqlite3 "$run_dir/attrib.db" "select count(*) from jobs where job_id='$job' and status='done'")" 1 \
  "archived rows"
expect_eq "$(verdict "$job" .domain)" UNATTRIBUTED "domain"
echo PASS
