#!/usr/bin/env bash
# Array tasks are attributed under the id users see ("<array job>_<task>"): task 2
# writes a CUDA OOM to its output file (named with %j, the task's raw job id) and one of
# its srun tasks exits 7; task 1 succeeds. The daemon finds task 2's output file and
# the SPANK task records (filed under "<array job>_2"), and each task gets its own verdict.
source "$(dirname "$0")/lib.sh"
: "${ATTRIB_TASK_RECORDS_DIR:?}"
setup_run array_tasks
start_daemon
array=$(sbatch --parsable --array=1-2 -N1 --output="$run_dir/job-%j.out" --wrap "
  if [ \$SLURM_ARRAY_TASK_ID = 2 ]; then
    echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free.'
    srun bash -c 'exit 7'
    exit 1
  fi" | cut -d';' -f1)
await_verdict "${array}_2"
await_verdict "${array}_1"

raw=$(sacct -n -X -P -j "${array}_2" -o JobIDRaw)
node=$(sacct_field "${array}_2" NodeList)
expect_eq "$(verdict "${array}_2" .job_id)" "${array}_2" "verdict under the array task's id"
expect_eq "$(verdict "${array}_2" .domain)" APPLICATION "task 2's domain"
expect_eq "$(verdict "${array}_2" .root_cause.event.kind)" cuda.oom "task 2's root cause"
expect_eq "$(verdict "${array}_2" "[.coverage[] | select(.source == \"app\") | .status] | join(\",\")")" ok \
  "job-$raw.out found (%j is the raw id $raw)"
[ -d "${ATTRIB_TASK_RECORDS_DIR//\{node\}/$node}/${array}_2" ] || fail "SPANK records not under ${array}_2"
expect_eq "$(verdict "${array}_2" "[.symptoms[].event | select(.kind == \"slurm.task_exit\" and .fields.step == \"0\") | .fields.exit_code] | join(\",\")")" 7 \
  "the srun task's exit, from its SPANK record"
expect_eq "$(verdict "${array}_1" .domain)" NONE "task 1 succeeded"
expect_contains "$(sacct_field "${array}_2" Comment)" "attrib: APPLICATION" "task 2's comment"
echo PASS
