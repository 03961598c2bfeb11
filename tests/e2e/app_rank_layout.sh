#!/usr/bin/env bash
# Rank -> node from the step layout: a 3-node sbatch job whose one output file (written
# on the batch host n1) holds every rank's lines. srun -n6 spreads ranks block-wise, so
# rank 4 ran on n3. Rank 4 runs out of CUDA memory; ranks 0 and 2 then report NCCL
# watchdog timeouts. slurmdbd's step record (6 tasks, 3 nodes, Block) places rank 4 on
# n3: the verdict is APPLICATION on n3, not on the batch host, with the watchdog
# timeouts as symptoms on n1 and n2.
source "$(dirname "$0")/lib.sh"
setup_run app_rank_layout
start_daemon
out=$run_dir/job-%j.out
job=$(sbatch --parsable -N3 -n6 --output="$out" --wrap "srun --label -n6 bash -c '
  case \$SLURM_PROCID in
    4) echo \"[rank4]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 39.39 GiB total capacity; 38.10 GiB already allocated)\"
       exit 1 ;;
    0|2) sleep 1
       echo \"[rank\$SLURM_PROCID]:[E ProcessGroupNCCL.cpp:563] [Rank \$SLURM_PROCID] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600321 milliseconds before timing out.\"
       exit 1 ;;
  esac
  sleep 2'" | cut -d';' -f1)
await_verdict "$job"
expect_eq "$(sacct_field "$job" NodeList)" "n[1-3]" "the job's nodes"
expect_eq "$(verdict "$job" .domain)" APPLICATION "domain"
expect_eq "$(verdict "$job" .root_cause.event.kind)" cuda.oom "root cause kind"
expect_eq "$(verdict "$job" .root_cause.event.source)" app.rank4 "rank 4's stream"
expect_eq "$(verdict "$job" .root_cause.event.node)" n3 "rank 4 ran on n3 (block layout)"
expect_eq "$(verdict "$job" '.affected_nodes | join(",")')" n3 "affected node"
expect_eq "$(verdict "$job" '[.symptoms[] | select(.event.kind | startswith("nccl.")) | "\(.event.source)@\(.event.node)"] | sort | join(",")')" \
  "app.rank0@n1,app.rank2@n2" "watchdog timeouts on their ranks' nodes"
expect_contains "$(sacct_field "$job" Comment)" "attrib: APPLICATION node=n3" "sacct comment"
echo PASS
