#!/usr/bin/env bash
# The job's own output file, as EpilogSlurmctld reports it: an srun --label job whose
# task 1 runs out of CUDA memory while task 0 waits. The app_output collector reads the
# file, splits it into per-rank streams, and the verdict is APPLICATION on the node
# (untrusted text is enough for an application verdict, never for a hardware one).
source "$(dirname "$0")/lib.sh"
setup_run app_output
start_daemon
out=$run_dir/job-%j.out
job=$(sbatch --parsable -N1 -n2 --output="$out" --wrap "srun --label -n2 bash -c '
  if [ \$SLURM_PROCID = 1 ]; then
    echo \"[rank1]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 2; 39.39 GiB total capacity; 38.10 GiB already allocated)\"
    exit 1
  fi
  sleep 2'" | cut -d';' -f1)
await_verdict "$job"
expect_eq "$(sacct_field "$job" State)" FAILED "sacct state"
expect_eq "$(verdict "$job" .domain)" APPLICATION "domain"
expect_eq "$(verdict "$job" .root_cause.event.kind)" cuda.oom "root cause kind"
expect_eq "$(verdict "$job" .root_cause.event.trusted)" false "application text is untrusted"
expect_eq "$(verdict "$job" .root_cause.event.source)" app.rank1 "the rank's own stream"
node=$(sacct_field "$job" NodeList)
expect_eq "$(verdict "$job" '.affected_nodes | join(",")')" "$node" "the job's node"
expect_contains "$(sacct_field "$job" Comment)" "attrib: APPLICATION node=$node" "sacct comment"
echo PASS
