#!/usr/bin/env bash
# A job whose hook report never reaches a head (here: the daemon is down and the spool file
# is lost, as on a host where no head runs) is found by the head's sweep of slurmdbd and
# attributed within one sweep interval, exactly once.
source "$(dirname "$0")/lib.sh"
setup_run sweep_missed_hook
t0=$(date +%s)

job=$(submit -N1 --wrap 'exit 3')
for _ in $(seq 200); do
  ls "$run_dir/spool"/lab_"$job"_*.jobended >/dev/null 2>&1 && break
  sleep 0.1
done
ls "$run_dir/spool"/lab_"$job"_*.jobended >/dev/null || fail "EpilogSlurmctld did not spool job $job"
for _ in $(seq 200); do [ "$(sacct_field "$job" State)" = FAILED ] && break; sleep 0.1; done
sleep 2                              # both hooks (EpilogSlurmctld, jobcomp/script) have spooled
rm -f "$run_dir/spool"/*.jobended   # the reports are lost

# Sweep every second, over this scenario's jobs only.
lookback=$(( $(date +%s) - t0 + 5 ))
sed -i "/^  workers: 2/a\\  sweep_interval_s: 1\\n  sweep_settle_s: 0\\n  sweep_lookback_s: $lookback" "$run_dir/attrib.yaml"
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
echo "PASS: the sweep attributed a job no hook reported, once"
