#!/usr/bin/env bash
# munged down where attrib runs (the head's host, or slurmctld's where the hook runs, when
# those are not the hosts Slurm's own munged serves). Here attrib has a munged of its own,
# with the cluster's key, so Slurm keeps working while attrib's is killed:
#   - the hooks need no credential (epilog.delivery spool): the job is spooled and the
#     head, which reads its spool from disk and needs none either, queues it at once and
#     judges it; attrib-show, which needs one, fails with a clear error;
#   - with epilog.delivery rpc, attrib-epilog-send cannot get a credential: it gives up at
#     its deadline (libmunge alone retries a dead socket for 2.25 s), the job stays
#     spooled, and the hook exits 0 (its wall time bounded, slurmctld not held up);
#   - munged back: the verdict is shown, archived once, in the Comment once.
# No node is drained.
source "$(dirname "$0")/../lib.sh"
setup_run fault_munged_down
deadline_ms=$(sed -n 's/^  deadline_ms: \([0-9]*\)$/\1/p' "$run_dir/attrib.yaml")
use_private_munged
# The spool is scanned only every 60 s here: the head must take the hooks' files as they
# appear, not at a scan.
sed -i -e "s|^  munge_socket: .*|  munge_socket: $ATTRIB_MUNGE_SOCKET|" \
  -e "s/^  spool_scan_interval_s: .*/  spool_scan_interval_s: 60/" "$run_dir/attrib.yaml"
grep -q "munge_socket: $ATTRIB_MUNGE_SOCKET" "$run_dir/attrib.yaml" || fail "config does not name attrib's munged"

trap '[ -n "$munged_pid" ] && kill "$munged_pid" 2>/dev/null; stop_attributiond' EXIT
start_munged
start_daemon

kill_munged
note "attrib's munged killed"
job=$(submit -N1 --wrap 'exit 3')
# The hooks (EpilogSlurmctld, jobcomp/script) spool the job and leave; the head queues it
# from the spool (no credential needed), at once: from the job's end in slurmctld's log to
# the head's queueing.
for _ in $(seq 100); do
  [ "$(sqlite3 "$run_dir/attrib.db" "select count(*) from jobs where job_id='$job'")" -ge 1 ] && break
  sleep 0.05
done
queued_us=$(sqlite3 "$run_dir/attrib.db" "select min(received_us) from jobs where job_id='$job'")
[ -n "$queued_us" ] || fail "job $job not queued from the spool with munged down"
ended=$(sed -n "s/^\[\([^]]*\)\] _job_complete: JobId=$job done\$/\1/p" "$ATTRIB_E2E_CLUSTER_DIR/log/slurmctld.log" | tail -n 1)
[ -n "$ended" ] || fail "no end of job $job in slurmctld's log"
hook_ms=$(( queued_us / 1000 - $(date -d "$ended" +%s%N) / 1000000 ))
note "job $job queued ${hook_ms} ms after it ended, with munged down"
[ "$hook_ms" -le $((deadline_ms + 500)) ] || fail "job $job queued ${hook_ms} ms after it ended, with munged down"
for _ in $(seq 100); do
  [ "$(sqlite3 "$run_dir/attrib.db" "select status from jobs where job_id='$job'")" = done ] && break
  sleep 0.1
done
expect_eq "$(sqlite3 "$run_dir/attrib.db" "select status from jobs where job_id='$job'")" done "job $job judged from the spool with munged down"
grep -q "spool: job $job: queued" "$run_dir/attributiond.log" || fail "the head's log does not show job $job queued from the spool"

# epilog.delivery rpc (a host whose spool no head reads): the sender needs a credential.
rpc_dir=$run_dir/rpc
install -d -o slurm "$rpc_dir/spool"
sed -e "s/^epilog:\$/epilog:\n  delivery: rpc/" -e "s|^  spool_dir: $run_dir/spool\$|  spool_dir: $rpc_dir/spool|" \
  "$run_dir/attrib.yaml" > "$rpc_dir/attrib.yaml"
grep -q "spool_dir: $rpc_dir/spool" "$rpc_dir/attrib.yaml" || fail "no rpc config"
start_ns=$(date +%s%N)
SLURM_JOB_ID=999997 SLURM_JOB_NODELIST=n1 SLURM_JOB_EXIT_CODE2=1:0 \
  "$ATTRIB_EPILOG" --config "$rpc_dir/attrib.yaml" 2>"$rpc_dir/epilog.err" || fail "the rpc hook exited non-zero"
rpc_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
note "rpc hook with munged down: ${rpc_ms} ms: $(tr '\n' ' ' < "$rpc_dir/epilog.err")"
[ "$rpc_ms" -le $((deadline_ms + 500)) ] || fail "the rpc hook took ${rpc_ms} ms with munged down (deadline ${deadline_ms} ms)"
ls "$rpc_dir/spool"/lab_999997_*.jobended >/dev/null 2>&1 || fail "the rpc hook's job is not left spooled"
grep -q "stays spooled" "$rpc_dir/epilog.err" || fail "the rpc hook did not say the job stays spooled"

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
