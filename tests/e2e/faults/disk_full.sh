#!/usr/bin/env bash
# The disk under the head's archive (its queue) and the hooks' spool fills up (a small
# tmpfs filled to ENOSPC):
#   1. a job ends on the full disk: the head cannot queue it and the hook cannot spool it;
#      the hook still exits 0 at once, and once there is room the head's sweep of
#      slurmdbd finds the job and attributes it;
#   2. the disk fills while a queued job is being judged: its writes (the queue's
#      reschedule, the archive) fail and are retried; once there is room the verdict is
#      archived once, the Comment written once.
# The head stays up throughout, and no node is drained.
source "$(dirname "$0")/../lib.sh"
setup_run fault_disk_full
t0=$(date +%s)
disk=$run_dir/disk
mkdir -p "$disk"
mount -t tmpfs -o size=8m tmpfs "$disk" || fail "cannot mount a tmpfs on $disk (run as root)"
trap 'cluster dbd-start >/dev/null 2>&1 || true; stop_attributiond; umount "$disk" 2>/dev/null || true' EXIT
install -d -o slurm "$disk/spool"
sed -i -e "s|^  database: .*|  database: $disk/attrib.db|" -e "s|^  spool_dir: .*|  spool_dir: $disk/spool|" \
  -e "s/^  sweep: false/  sweep: true\\n  sweep_interval_s: 1\\n  sweep_settle_s: 2\\n  sweep_lookback_s: 2/" \
  -e "s/^  retry_backoff_s: .*/  retry_backoff_s: 2/" \
  "$run_dir/attrib.yaml"
db=$disk/attrib.db
start_daemon

fill() { dd if=/dev/zero of="$disk/filler" bs=64k 2>/dev/null || true; note "disk full: $(df -h --output=avail "$disk" | tail -n 1)"; }
free_space() { rm -f "$disk/filler"; note "disk freed"; }
disk_errors() { grep -c -E "database or disk is full|No space left on device" "$run_dir/attributiond.log" || true; }

# 1. Full while the job ends.
fill
job=$(submit -N1 --wrap 'exit 3')
for _ in $(seq 100); do [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.1; done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || fail "job $job still $(squeue -h -j "$job" -o %T) on a full disk"
# The sweep finds the job once slurmdbd's row is final (seconds) and sweep_settle_s has
# passed; its queue write then fails on the full disk.
for _ in $(seq 100); do [ "$(disk_errors)" -ge 1 ] && break; sleep 0.1; done
kill -0 "$daemon_pid" || fail "attributiond exited on a full disk"
note "job $job ended on the full disk: $(disk_errors) disk errors in the head's log, $(sqlite3 "$db" "select count(*) from jobs where job_id='$job'") rows, $(ls "$disk/spool" | wc -l) spool files"
[ "$(disk_errors)" -ge 1 ] || fail "the head met no full disk: the scenario did not fill it"
expect_no_node_drained
free_space
await_verdict "$job"
sleep 2
expect_eq "$(verdict "$job" .domain)" UNATTRIBUTED "domain of job $job"
expect_judged_once "$job" "$db"

# 2. Full while the queued job is judged. A job's row shows its end within a second, and
# the head judges it at once: slurmdbd is stopped so that the job stays queued, waiting,
# while the disk fills, and is judged on the full disk once slurmdbd is back.
job2=$(submit -N1 --wrap 'sleep 2; exit 3')
wait_state "$job2" RUNNING
cluster dbd-stop
for _ in $(seq 200); do
  [ "$(sqlite3 "$db" "select count(*) from jobs where job_id='$job2' and status='queued'" 2>/dev/null)" = 1 ] && break
  sleep 0.05
done
[ "$(sqlite3 "$db" "select count(*) from jobs where job_id='$job2'")" = 1 ] || fail "job $job2 not queued"
before=$(disk_errors)
fill
cluster dbd-start
for _ in $(seq 200); do [ "$(disk_errors)" -gt "$before" ] && break; sleep 0.1; done
kill -0 "$daemon_pid" || fail "attributiond exited on a full disk"
[ "$(disk_errors)" -gt "$before" ] || fail "the head met no full disk while judging job $job2"
first=$(disk_errors)
sleep 4
kill -0 "$daemon_pid" || fail "attributiond exited on a full disk"
errors=$(( $(disk_errors) - first ))
note "job $job2 judged on the full disk: $errors more disk errors in 4 s, status $(sqlite3 "$db" "select status from jobs where job_id='$job2'")"
# Held back for retry_backoff_s (2 s) after each failed write, not retried at once (that
# spun: 22 errors in 4 s).
[ "$errors" -le 8 ] || fail "job $job2 was retried $errors times in 4 s on the full disk"
free_space
await_verdict "$job2"
sleep 2
expect_eq "$(verdict "$job2" .domain)" UNATTRIBUTED "domain of job $job2"
expect_judged_once "$job2" "$db"
expect_no_node_drained
echo PASS
