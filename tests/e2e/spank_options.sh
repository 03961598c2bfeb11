#!/usr/bin/env bash
# spank_attrib.so's user options: shown in sbatch/srun/salloc --help; --attrib-evidence
# sets NCCL_DEBUG=WARN (unless the user set it) and the PyTorch flight recorder into the
# job's spool; --attrib=off (allowed in the e2e plugstack) leaves no records or ATTRIB_*.
source "$(dirname "$0")/lib.sh"
: "${ATTRIB_TASK_RECORDS_DIR:?}"
setup_run spank_options
start_daemon

for command in sbatch srun salloc; do
  help=$("$command" --help 2>&1)
  expect_contains "$help" "--attrib=on|off" "$command --help"
  expect_contains "$help" "--attrib-evidence" "$command --help"
done

spool_of() { echo "${ATTRIB_TASK_RECORDS_DIR//\{node\}/$1}"; }
run_env_job() {  # run_env_job OUT [sbatch options]: srun env of one task into OUT
  local out=$1
  shift
  sbatch --wait --parsable --output=/dev/null -N1 -w n2 "$@" --wrap "srun env > $out" | cut -d';' -f1
}

job=$(run_env_job "$run_dir/evidence.env" --attrib-evidence)
env_text=$(cat "$run_dir/evidence.env")
expect_contains "$env_text" "NCCL_DEBUG=WARN" "opt-in NCCL_DEBUG"
expect_contains "$env_text" "TORCH_NCCL_DUMP_ON_TIMEOUT=1" "opt-in flight recorder"
expect_contains "$env_text" "TORCH_NCCL_TRACE_BUFFER_SIZE=2000" "opt-in trace buffer"
expect_contains "$env_text" "TORCH_NCCL_DEBUG_INFO_TEMP_FILE=$(spool_of n2)/$job/user/nccl_trace_rank_" "dump location"
[ -d "$(spool_of n2)/$job/user" ] || fail "no evidence directory for job $job"
expect_contains "$env_text" "ATTRIB_RANK=0" "ATTRIB_RANK"

NCCL_DEBUG=INFO run_env_job "$run_dir/user-nccl.env" --attrib-evidence --export=ALL >/dev/null
expect_contains "$(cat "$run_dir/user-nccl.env")" "NCCL_DEBUG=INFO" "the user's NCCL_DEBUG wins"

run_env_job "$run_dir/plain.env" >/dev/null
! grep -q '^NCCL_DEBUG=' "$run_dir/plain.env" || fail "NCCL_DEBUG set without the opt-in"
expect_contains "$(cat "$run_dir/plain.env")" "ATTRIB_STEP_ID=0" "ATTRIB_STEP_ID"

job=$(run_env_job "$run_dir/off.env" --attrib=off)
! grep -qE '^ATTRIB_(JOB_ID|STEP_ID|RANK)=' "$run_dir/off.env" || fail "ATTRIB_* exported for an opted-out job"
[ ! -e "$(spool_of n2)/$job" ] || fail "records written for opted-out job $job"
expect_eq "$(sacct_field "$job" State)" COMPLETED "opted-out job state"
# The daemon (head.allow_opt_out: true here) keeps the job but attributes nothing.
for _ in $(seq 300); do
  shown=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$job" 2>&1 || true)
  [[ "$shown" == *"was not attributed"* ]] && break
  sleep 0.1
done
expect_contains "$shown" "was not attributed: opted out by the user" "attrib-show for the opted-out job"
[[ "$(sacct_field "$job" Comment)" != *"attrib:"* ]] || fail "opted-out job $job got a verdict comment"

# A typo in the option is refused at submission, not at run time.
! sbatch --attrib=of --wrap true >/dev/null 2>&1 || fail "sbatch accepted --attrib=of"
echo PASS
