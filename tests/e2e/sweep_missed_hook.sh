#!/usr/bin/env bash
# A job whose hook report never reaches a head (here: the daemon is down and the spool file
# is lost, as on a host where no head runs) is found by the head's sweep of slurmdbd and
# attributed within one sweep interval, exactly once. With the sweep off, an admin queues
# such jobs by hand: attrib-show --attribute JOB, attrib-show --backfill --since T.
source "$(dirname "$0")/lib.sh"
setup_run sweep_missed_hook
# Every job of the earlier scenarios ended before this one began: --backfill below counts
# each attempt that ended since then (in slurmdbd's whole seconds).
for _ in $(seq 300); do [ -z "$(squeue -h -o %i)" ] && break; sleep 0.1; done
[ -z "$(squeue -h -o %i)" ] || fail "jobs of an earlier scenario still run: $(squeue -h -o '%i %T')"
sleep 2
t0=$(date +%s)

# lost_job: a failing job whose hooks' reports (spooled: the daemon is down) are lost.
lost_job() {
  local id
  id=$(submit -N1 --wrap 'exit 3')
  # Both hooks (EpilogSlurmctld, jobcomp/script) spool a report each; a report spooled
  # after the removal below would reach the daemon and the job would not be lost.
  spooled() { ls "$run_dir/spool"/lab_"$id"_*.jobended 2>/dev/null | wc -l; }
  for _ in $(seq 300); do [ "$(spooled)" -ge 2 ] && break; sleep 0.1; done
  [ "$(spooled)" -ge 2 ] || fail "the hooks did not both spool job $id ($(spooled) reports)"
  # Its end must be in slurmdbd before the reports are lost: --backfill reads it there.
  for _ in $(seq 600); do [ "$(sacct_field "$id" State)" = FAILED ] && break; sleep 0.1; done
  [ "$(sacct_field "$id" State)" = FAILED ] || fail "slurmdbd never recorded job $id as FAILED"
  sleep 2                              # its row settles (whole seconds) before it is looked for
  rm -f "$run_dir/spool"/*.jobended   # the reports are lost
  echo "$id"
}
job=$(lost_job)

# Sweep every second. The window slides with each sweep, so it reaches 20 s before the
# first job (room for a slow start) and may take in the earlier scenarios' last jobs too;
# those are not this scenario's: they must not count as the node's unexplained history
# (fleet.repeat_failures_jobs), which would judge the lost job by them.
lookback=$(( $(date +%s) - t0 + 20 ))
sed -i "s/^  sweep: false/  sweep: true\\n  sweep_interval_s: 1\\n  sweep_settle_s: 0\\n  sweep_lookback_s: $lookback/" "$run_dir/attrib.yaml"
printf 'fleet:\n  repeat_failures_jobs: 0\n' >>"$run_dir/attrib.yaml"
start_daemon
await_verdict "$job"
expect_eq "$(verdict "$job" .domain)" UNATTRIBUTED "domain"
expect_eq "$(verdict "$job" .exit_code)" 3 "exit code from the attempt's row"
expect_contains "$(sacct_field "$job" Comment)" "attrib: UNATTRIBUTED" "sacct comment"
grep -q "sweep: job $job ended with no report from a hook" "$run_dir"/attributiond.log ||
  fail "the log does not say the sweep found job $job"
sleep 3   # three more sweeps: nothing is attributed twice
shown=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$job" 2>&1)
case "$shown" in *"runs in the archive"*) fail "job $job was attributed more than once: $shown" ;; esac
expect_eq "$(grep -c "sweep: job $job " "$run_dir"/attributiond.log)" 1 "sweeps that queued job $job"

# The sweep off: an admin queues a lost job by hand, then everything since a time.
stop_daemon
sed -i 's/^  sweep: true/  sweep: false/' "$run_dir/attrib.yaml"
job2=$(lost_job)
job3=$(lost_job)
start_daemon
out=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --attribute "$job2")
expect_eq "$out" "attrib-show: 1 attempts of job $job2 queued for attribution; 0 already in the archive" "--attribute"
await_verdict "$job2"
expect_eq "$(verdict "$job2" .exit_code)" 3 "exit code of the job queued by hand"
out=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --attribute "$job2")
expect_contains "$out" "0 attempts of job $job2 queued for attribution; 1 already in the archive" "--attribute again"
# Since this scenario began (a second's margin for slurmdbd's whole seconds), not 20 s
# before it: the previous scenario's last job may have ended in those 20 s.
out=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --backfill --since "$(( $(date +%s) - t0 + 1 ))s")
# It failed once on a loaded host (0 queued): say what the daemon knew of job 3 then.
case "$out" in *"1 attempts that ended since then queued for attribution"*) ;; *)
  echo "--- what the daemon logged of job $job3, and the spool:" >&2
  grep -F "job $job3" "$run_dir/attributiond.log" >&2 || true
  ls -l "$run_dir/spool" >&2 || true ;;
esac
expect_contains "$out" "1 attempts that ended since then queued for attribution" "--backfill (only job $job3 is new)"
await_verdict "$job3"
# Ordinary users may not queue jobs.
denied=$(setpriv --reuid=nobody --regid=nogroup --clear-groups env ATTRIB_MUNGE_SOCKET="$ATTRIB_MUNGE_SOCKET" \
  "$ATTRIB_E2E_DIR/bin/attrib-show" --server "$DAEMON_ADDR" --attribute "$job3" 2>&1) && fail "an ordinary user queued a job: $denied"
expect_contains "$denied" "for admins" "an ordinary user's --attribute"
echo "PASS: the sweep attributed a job no hook reported, once; admins queue lost jobs by hand"
