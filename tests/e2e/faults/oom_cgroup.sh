#!/usr/bin/env bash
# A job killed by its memory cgroup on the real cluster: the suite's cluster is restarted
# with cgroup v1 confinement (scripts/cluster.sh, ATTRIB_CLUSTER_CGROUP=v1) and a job
# allocates far past its --mem. Slurm ends it OUT_OF_MEMORY and slurmstepd says so in the
# job's output; the verdict is the application's (a memcg OOM is the job's own limit,
# not the host's), the node is not drained, the Comment is written once. The cluster is
# restarted as before at the end, whatever happened.
source "$(dirname "$0")/../lib.sh"
setup_run fault_oom_cgroup
[ -d /sys/fs/cgroup/memory ] || fail "no cgroup v1 memory controller at /sys/fs/cgroup/memory: this scenario needs it"
restart_cluster() {
  cluster down >/dev/null 2>&1 || true
  ATTRIB_CLUSTER_CGROUP=$1 ATTRIB_EPILOG_SLURMCTLD=$ATTRIB_E2E_DIR/attrib-epilog-hook \
    ATTRIB_JOBCOMP_SCRIPT=$ATTRIB_E2E_DIR/attrib-epilog-hook ATTRIB_PLUGSTACK=$ATTRIB_E2E_DIR/plugstack.conf \
    "$ATTRIB_SOURCE_DIR/scripts/cluster.sh" up "$ATTRIB_E2E_CLUSTER_DIR" >"$run_dir/cluster-$2.log" 2>&1
}
trap 'stop_attributiond; restart_cluster "" after || { echo "could not restart the cluster:" >&2; tail -n 20 "$run_dir/cluster-after.log" >&2; }' EXIT
restart_cluster v1 cgroup || fail "the cluster did not come up with cgroup v1: $(tail -n 20 "$run_dir/cluster-cgroup.log")"
start_daemon

out=$run_dir/oom-job.out
job=$(sbatch --parsable -N1 --mem=50 --output="$out" \
  --wrap '/usr/bin/python3 -c "import time; chunks = [bytearray(16 << 20) for _ in range(64)]; time.sleep(5)"' | cut -d';' -f1)
await_verdict "$job"
note "job $job: sacct $(sacct_field "$job" State) $(sacct_field "$job" ExitCode); output: $(tr '\n' ' ' < "$out" | cut -c1-300)"
expect_eq "$(sacct_field "$job" State)" OUT_OF_MEMORY "sacct state"
expect_eq "$(verdict "$job" .terminal_state)" OUT_OF_MEMORY "verdict's terminal state"
expect_eq "$(verdict "$job" .domain)" APPLICATION "domain"
expect_eq "$(verdict "$job" .recommended_action)" FIX_APPLICATION "recommended action (the job's, no node action)"
expect_eq "$(verdict "$job" .root_cause.rule)" app.cgroup_oom "root-cause rule"
expect_eq "$(verdict "$job" .root_cause.event.kind)" slurm.oom_kill "root-cause event"
expect_eq "$(verdict "$job" .root_cause.event.node)" "$(sacct_field "$job" NodeList)" "root cause's node"
comment=$(sacct_field "$job" Comment)
expect_eq "$(grep -o 'attrib:' <<<"$comment" | wc -l)" 1 "attrib segments in the Comment ($comment)"
expect_contains "$comment" "attrib: APPLICATION" "sacct comment"
expect_no_node_drained
echo PASS
