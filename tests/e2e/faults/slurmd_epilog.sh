#!/usr/bin/env bash
# The hook as slurmd's Epilog (root, on every node of the job, where a non-zero exit
# drains the node), beside EpilogSlurmctld and jobcomp/script. A two-node job is reported
# by both nodes' Epilogs at their own times: that is one attempt, judged once and
# commented once. With the head down, each Epilog spools and exits 0 at once; with its
# config gone, it still exits 0. No node is drained in any case.
source "$(dirname "$0")/../lib.sh"
setup_run fault_slurmd_epilog
conf=$ATTRIB_E2E_CLUSTER_DIR/etc/slurm.conf
[ -f "$conf" ] || fail "no slurm.conf at $conf"
epilog_off() { sed -i '/^Epilog=/d' "$conf"; scontrol reconfigure >/dev/null 2>&1 || true; }
trap 'epilog_off; stop_attributiond' EXIT
sed -i '/^Epilog=/d' "$conf"
echo "Epilog=$ATTRIB_E2E_DIR/attrib-epilog-hook" >> "$conf"
scontrol reconfigure || fail "scontrol reconfigure"
# (The config is captured first: grep -q leaving early would fail the pipe under pipefail.)
epilog_set() { local config; config=$(scontrol show config); grep -q "^Epilog  *= $ATTRIB_E2E_DIR" <<<"$config"; }
for _ in $(seq 50); do epilog_set && break; sleep 0.1; done
epilog_set || fail "slurmctld did not take Epilog="

# runs_of JOB: the archived runs (attempts) of the job.
runs_of() { sqlite3 "$run_dir/attrib.db" "select count(*) from jobs where job_id='$1'"; }
# slurmd_reports JOB: how many reports of the job came from a slurmd Epilog (hook kind 3).
slurmd_reports() { sqlite3 "$run_dir/attrib.db" "select hooks from jobs where job_id='$1'" | grep -o ',3/[^@,]*@' | wc -l; }

# 1. Head up: both nodes' Epilogs report the job; one run, one verdict, one comment.
start_daemon
job=$(submit -N2 --wrap 'exit 3')
await_verdict "$job"
for _ in $(seq 100); do [ "$(slurmd_reports "$job")" -ge 2 ] && break; sleep 0.1; done
sleep 2 # a second run, if the reports were taken for two attempts, is judged by now
note "job $job: hooks $(sqlite3 "$run_dir/attrib.db" "select group_concat(hooks, ' | ') from jobs where job_id='$job'")"
expect_eq "$(runs_of "$job")" 1 "runs archived for job $job (two nodes' Epilogs are one attempt)"
expect_eq "$(slurmd_reports "$job")" 2 "slurmd Epilog reports held by job $job's run"
expect_eq "$(verdict "$job" .domain)" UNATTRIBUTED "domain"
expect_eq "$(verdict "$job" '.nodes | join(",")')" "n1,n2" "nodes the verdict covers"
comment=$(sacct_field "$job" Comment)
expect_eq "$(grep -o 'attrib:' <<<"$comment" | wc -l)" 1 "attrib segments in the Comment ($comment)"
expect_no_node_drained "after job $job"

# 2. Head down: every hook spools and exits 0 without waiting; the head drains the spool.
stop_daemon
job2=$(submit -N2 --wrap 'exit 0')
for _ in $(seq 100); do
  [ "$(ls "$run_dir/spool/lab_${job2}_"*.jobended 2>/dev/null | wc -l)" -ge 4 ] && break
  sleep 0.1
done
spooled=$(ls "$run_dir/spool/lab_${job2}_"*.jobended 2>/dev/null | wc -l)
note "job $job2: $spooled spool files with the head down"
[ "$spooled" -ge 4 ] || fail "job $job2: expected 4 reports spooled (2 slurmd Epilogs, EpilogSlurmctld, jobcomp), got $spooled"
for _ in $(seq 50); do [ -z "$(squeue -h -j "$job2" 2>/dev/null)" ] && break; sleep 0.1; done
[ -z "$(squeue -h -j "$job2" 2>/dev/null)" ] || fail "job $job2 still in the queue: $(squeue -h -j "$job2" -o %T)"
expect_no_node_drained "with the head down"
start_daemon
await_verdict "$job2"
expect_spool_drained
sleep 1
expect_eq "$(runs_of "$job2")" 1 "runs archived for job $job2 (from the spool)"
expect_eq "$(slurmd_reports "$job2")" 2 "slurmd Epilog reports held by job $job2's run"
expect_eq "$(verdict "$job2" .domain)" NONE "domain of job $job2"
expect_eq "$(grep -o 'attrib:' <<<"$(sacct_field "$job2" Comment)" | wc -l)" 1 "attrib segments in job $job2's Comment"

# 3. The hook's config is gone (a broken install): the Epilog still exits 0.
mv "$run_dir/attrib.yaml" "$run_dir/attrib.yaml.away"
job3=$(submit -N2 --wrap 'exit 0')
for _ in $(seq 100); do [ -z "$(squeue -h -j "$job3" 2>/dev/null)" ] && break; sleep 0.1; done
[ -z "$(squeue -h -j "$job3" 2>/dev/null)" ] || fail "job $job3 still in the queue without the hook's config"
mv "$run_dir/attrib.yaml.away" "$run_dir/attrib.yaml"
expect_eq "$(sacct_field "$job3" State)" COMPLETED "state of job $job3"
expect_no_node_drained "after Epilogs without a config"
echo PASS
