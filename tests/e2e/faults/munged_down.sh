#!/usr/bin/env bash
# munged down where attrib runs (the head's host, or slurmctld's where the hook runs, when
# those are not the hosts Slurm's own munged serves). Here attrib has a munged of its own,
# with the cluster's key, so Slurm keeps working while attrib's is killed:
#   - the hook cannot get a credential: it spools the job and exits 0 at once (its wall
#     time is bounded, slurmctld is not held up);
#   - the head, which reads its spool from disk and needs no credential for that, queues
#     and judges the job; attrib-show, which needs one, fails with a clear error;
#   - munged back: the verdict is shown, archived once, in the Comment once.
# No node is drained.
source "$(dirname "$0")/../lib.sh"
setup_run fault_munged_down
deadline_ms=$(sed -n 's/^  deadline_ms: \([0-9]*\)$/\1/p' "$run_dir/attrib.yaml")
munge_dir=$run_dir/munge
install -d -m 755 -o munge -g munge "$munge_dir"
export ATTRIB_MUNGE_SOCKET=$munge_dir/munge.socket
# The spool is scanned every 3 s here, so the hooks' files can be seen before it is read.
sed -i -e "s|^  munge_socket: .*|  munge_socket: $ATTRIB_MUNGE_SOCKET|" \
  -e "s/^  spool_scan_interval_s: .*/  spool_scan_interval_s: 3/" "$run_dir/attrib.yaml"
grep -q "munge_socket: $ATTRIB_MUNGE_SOCKET" "$run_dir/attrib.yaml" || fail "config does not name attrib's munged"

munged_pid=
start_munged() {
  rm -f "$ATTRIB_MUNGE_SOCKET"
  setpriv --reuid=munge --regid=munge --init-groups \
    munged --foreground --socket="$ATTRIB_MUNGE_SOCKET" --pid-file="$munge_dir/munged.pid" \
    --log-file="$munge_dir/munged.log" --seed-file="$munge_dir/munged.seed" </dev/null >/dev/null 2>&1 &
  munged_pid=$!
  for _ in $(seq 100); do [ -S "$ATTRIB_MUNGE_SOCKET" ] && return 0; sleep 0.1; done
  fail "attrib's munged did not start: $(tail -n 5 "$munge_dir/munged.log" 2>/dev/null)"
}
kill_munged() { kill -KILL "$munged_pid"; wait "$munged_pid" 2>/dev/null || true; munged_pid=; }
trap '[ -n "$munged_pid" ] && kill "$munged_pid" 2>/dev/null; stop_attributiond' EXIT
start_munged
start_daemon

kill_munged
note "attrib's munged killed"
job=$(submit -N1 --wrap 'exit 3')
# The hooks (EpilogSlurmctld, jobcomp/script) leave at once: no credential, nothing
# sent, the job spooled. Their wall time: from the job's end in slurmctld's log to the
# last spool file.
declare -A seen=()
for _ in $(seq 100); do
  for f in "$run_dir/spool/lab_${job}_"*.jobended; do [ -e "$f" ] && seen[$f]=$(stat -c %.3Y "$f" | tr -d .); done
  [ ${#seen[@]} -ge 2 ] && break
  sleep 0.03
done
[ ${#seen[@]} -ge 2 ] || fail "job $job: ${#seen[@]} spool files, expected one per hook"
ended=$(sed -n "s/^\[\([^]]*\)\] _job_complete: JobId=$job done\$/\1/p" "$ATTRIB_E2E_CLUSTER_DIR/log/slurmctld.log" | tail -n 1)
[ -n "$ended" ] || fail "no end of job $job in slurmctld's log"
last_ms=$(printf '%s\n' "${seen[@]}" | sort -n | tail -n 1)
hook_ms=$(( last_ms - $(date -d "$ended" +%s%N) / 1000000 ))
note "job $job spooled ${hook_ms} ms after it ended (hook deadline ${deadline_ms} ms)"
# Within the deadline (and start-up): libmunge alone retried the dead socket for 2.25 s.
[ "$hook_ms" -le $((deadline_ms + 500)) ] || fail "the hooks spooled job $job ${hook_ms} ms after it ended, with munged down"
# The head takes the spooled reports from disk (no credential needed) and judges the job.
for _ in $(seq 100); do
  [ "$(sqlite3 "$run_dir/attrib.db" "select status from jobs where job_id='$job'")" = done ] && break
  sleep 0.1
done
expect_eq "$(sqlite3 "$run_dir/attrib.db" "select status from jobs where job_id='$job'")" done "job $job judged from the spool with munged down"
grep -q "spool: job $job queued" "$run_dir/attributiond.log" || fail "the head's log does not show job $job queued from the spool"
shown=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$job" 2>&1 || true)
note "attrib-show with munged down: $shown"
expect_contains "$shown" "munge" "attrib-show's error with munged down"

start_munged
note "attrib's munged back"
await_verdict "$job"
expect_eq "$(verdict "$job" .domain)" UNATTRIBUTED "domain"
expect_eq "$(sqlite3 "$run_dir/attrib.db" "select count(*) from jobs where job_id='$job'")" 1 "runs archived for job $job"
expect_eq "$(grep -o 'attrib:' <<<"$(sacct_field "$job" Comment)" | wc -l)" 1 "attrib segments in the Comment"
expect_spool_drained
expect_no_node_drained
echo PASS
