#!/usr/bin/env bash
# The rank that hung, on the real cluster. A job of four ranks on n1 and n2 runs with
# --attrib-evidence, so spank_attrib.so points PyTorch's flight recorder at the job's
# spool (TORCH_NCCL_DEBUG_INFO_TEMP_FILE=<spool>/<job>/user/nccl_trace_rank_). Each rank
# writes there, as PyTorch's DebugInfoWriter does on a collective timeout, the dump a real
# PyTorch wrote for its rank (tests/data/flight_recorder: rank 2 never joined the fourth
# all_reduce), then fails. The flight_recorder collector reads the dumps on each node and
# the verdict names rank 2 on n2 as the rank the others waited on, in attrib-show too.
source "$(dirname "$0")/lib.sh"
: "${ATTRIB_TASK_RECORDS_DIR:?}"
setup_run flight_recorder
dumps=$run_dir/dumps
install -d -m 755 "$dumps"
install -m 644 "$ATTRIB_SOURCE_DIR"/tests/data/flight_recorder/pickle/nccl_trace_rank_* "$dumps/"
start_daemon

job=$(sbatch --parsable --output=/dev/null -N2 -w n1,n2 --ntasks-per-node=2 --attrib-evidence \
  --wrap "srun -N2 -n4 --ntasks-per-node=2 bash -c 'cp $dumps/nccl_trace_rank_\$SLURM_PROCID \"\${TORCH_NCCL_DEBUG_INFO_TEMP_FILE}\$SLURM_PROCID\"; exit 1'" |
  cut -d';' -f1)
await_verdict "$job"
note "$(jq -c '{domain, hung_rank, fr: [.coverage[] | select(.source == "flight_recorder") | {node, status, detail}]}' \
  "$run_dir/verdict-$job.json")"

expect_eq "$(sacct_field "$job" State)" FAILED "sacct state"
expect_eq "$(verdict "$job" '[.coverage[] | select(.source == "flight_recorder") | .node + ":" + .status + ":" + .detail] | join(",")')" \
  "n1:ok:2 dump(s),n2:ok:2 dump(s)" "flight-recorder coverage"
expect_eq "$(verdict "$job" .hung_rank.rank)" 2 "hung rank"
expect_eq "$(verdict "$job" .hung_rank.node)" n2 "hung rank's node"
expect_eq "$(verdict "$job" .hung_rank.seq)" 4 "the collective it never joined"
expect_eq "$(verdict "$job" .hung_rank.collective)" gloo:all_reduce "its operation"
expect_eq "$(verdict "$job" '.hung_rank.waiting_ranks | map(tostring) | join(",")')" 0,1,3 "the ranks that waited"
expect_eq "$(verdict "$job" '[.unexplained[]?, .symptoms[]? | select((.event // .).source == "flight_recorder")] | length')" 0 \
  "the dumps' lines are not listed as evidence"
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$job" >"$run_dir/show.txt" || fail "attrib-show $job"
expect_contains "$(cat "$run_dir/show.txt")" "Hung rank:    rank 2 on n2 never joined collective #4 (gloo:all_reduce)" \
  "attrib-show's hung rank"
echo PASS
