#!/usr/bin/env bash
# With the daemon stopped the epilog exits 0 at once and spools the job; the verdict
# appears after the daemon starts. A spool file that neither root nor the SlurmUser wrote
# is not a report: the head moves it to bad/ and judges nothing from it.
source "$(dirname "$0")/lib.sh"
setup_run daemon_down_spool

# The epilog on its own, as EpilogSlurmctld would run it: exit 0, fast, one spool file.
start=$(date +%s%N)
env -i SLURM_JOB_ID=999999 SLURM_JOB_NODELIST='n[1-2]' SLURM_JOB_EXIT_CODE=768 SLURM_JOB_EXIT_CODE2=3:0 \
  "$ATTRIB_EPILOG" --config "$run_dir/attrib.yaml" 2>"$run_dir/epilog.err" || fail "epilog exited non-zero"
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
note "epilog with the daemon down took ${elapsed_ms} ms"
[ "$elapsed_ms" -lt 2000 ] || fail "epilog took ${elapsed_ms} ms with the daemon down"
ls "$run_dir/spool"/lab_999999_*.jobended >/dev/null || fail "epilog did not spool job 999999"
# The same report, as if another user had put it there (the spool open to others by mistake).
forged=$(ls "$run_dir/spool"/lab_999999_*.jobended | head -n 1)
chown nobody "$forged"

# A real job ending while the daemon is down.
job=$(submit -N2 --wrap 'exit 3')
for _ in $(seq 200); do
  ls "$run_dir/spool"/lab_"$job"_*.jobended >/dev/null 2>&1 && break
  sleep 0.1
done
ls "$run_dir/spool"/lab_"$job"_*.jobended >/dev/null || fail "EpilogSlurmctld did not spool job $job"
start_daemon
await_verdict "$job"
expect_eq "$(verdict "$job" .domain)" UNATTRIBUTED "domain"
expect_spool_drained
[ -e "$run_dir/spool/bad/$(basename "$forged")" ] || fail "the file nobody wrote is not in bad/: $(ls -R "$run_dir/spool")"
grep -q "written by uid $(id -u nobody), neither root nor the SlurmUser" "$run_dir/attributiond.log" ||
  fail "the head's log does not say why it refused the file"
! "$ATTRIB_SHOW" --server "$DAEMON_ADDR" 999999 >/dev/null 2>&1 || fail "job 999999 was queued from a file nobody wrote"
echo PASS
