#!/usr/bin/env bash
# The archive's SQLite file locked by another process (an admin's sqlite3 shell left in a
# write transaction, a backup tool) for longer than the head's busy wait (5 s):
#   1. while jobs end: the hooks still leave at their deadline (the job spooled), the head
#      keeps the spool files until it can queue them, and judges the job once unlocked;
#   2. while a queued job is being judged: the write waits or fails and is retried;
#      the verdict is archived once and the Comment written once.
# Nothing is lost or doubled, the head stays up, and no node is drained.
source "$(dirname "$0")/../lib.sh"
setup_run fault_sqlite_locked
start_daemon
db=$run_dir/attrib.db

# lock SECONDS: another process holds a write lock on the archive for SECONDS (PID in
# lock_pid); returns once the lock is held.
lock_pid=
lock() {
  /usr/bin/python3 -u - "$db" "$1" > "$run_dir/lock.log" 2>&1 <<'PY' &
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
con.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
con.execute("ROLLBACK")
print("unlocked", flush=True)
PY
  lock_pid=$!
  for _ in $(seq 100); do grep -q locked "$run_dir/lock.log" && return 0; sleep 0.1; done
  fail "could not lock $db: $(cat "$run_dir/lock.log")"
}
unlock_wait() { wait "$lock_pid" || fail "the locking process failed: $(cat "$run_dir/lock.log")"; lock_pid=; }
trap '[ -n "$lock_pid" ] && kill "$lock_pid" 2>/dev/null; stop_attributiond' EXIT

# 1. Locked while the job ends.
lock 12
job=$(submit -N1 --wrap 'exit 3')
for _ in $(seq 100); do [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.1; done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || fail "job $job still $(squeue -h -j "$job" -o %T): the hook waits on the locked archive"
spooled=$(ls "$run_dir/spool/lab_${job}_"*.jobended 2>/dev/null | wc -l)
note "job $job ended with the archive locked: $spooled spool files"
[ "$spooled" -ge 1 ] || fail "job $job neither queued nor spooled"
sleep 2 # the head's spool scans meet the lock: the files must stay
kill -0 "$daemon_pid" || fail "attributiond exited with its archive locked"
[ "$(ls "$run_dir/spool/lab_${job}_"*.jobended 2>/dev/null | wc -l)" -ge 1 ] || fail "spool files of job $job removed but not queued"
unlock_wait
await_verdict "$job"
for _ in $(seq 50); do [ -z "$(ls "$run_dir/spool"/*.jobended 2>/dev/null)" ] && break; sleep 0.1; done
expect_spool_drained
expect_eq "$(verdict "$job" .domain)" UNATTRIBUTED "domain of job $job"
expect_judged_once "$job" "$db"

# 2. Locked while the queued job is judged (it waits for slurmdbd's final record).
job2=$(submit -N1 --wrap 'exit 3')
for _ in $(seq 200); do
  [ "$(sqlite3 "$db" "select count(*) from jobs where job_id='$job2' and status='queued'" 2>/dev/null)" = 1 ] && break
  sleep 0.05
done
[ "$(sqlite3 "$db" "select count(*) from jobs where job_id='$job2'")" = 1 ] || fail "job $job2 not queued"
lock 8
unlock_wait
kill -0 "$daemon_pid" || fail "attributiond exited with its archive locked"
await_verdict "$job2"
sleep 1
expect_eq "$(verdict "$job2" .domain)" UNATTRIBUTED "domain of job $job2"
expect_judged_once "$job2" "$db"
expect_contains "$(cat "$run_dir/attributiond.log")" "locked" "the head's log naming the lock"
expect_no_node_drained
echo PASS
