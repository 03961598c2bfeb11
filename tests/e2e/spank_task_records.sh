#!/usr/bin/env bash
# spank_attrib.so on the real cluster: srun -N3 -n6 where rank 3 (on n2) exits 7 and
# rank 5 (on n3) is killed by SIGKILL later. The task records land on the right nodes
# with the right ranks, codes and order, tasks see ATTRIB_*, and the verdict names n2.
source "$(dirname "$0")/lib.sh"
: "${ATTRIB_TASK_RECORDS_DIR:?}"
setup_run spank_task_records
start_daemon

# -n6 on three 2-CPU nodes: block distribution puts ranks 0,1 on n1, 2,3 on n2, 4,5 on n3.
job=$(submit -N3 -n6 --wrap "srun bash -c 'echo \"\$ATTRIB_JOB_ID \$ATTRIB_STEP_ID \$ATTRIB_RANK\" > $run_dir/env.\$SLURM_PROCID
  case \$SLURM_PROCID in 3) sleep 1; exit 7;; 5) sleep 3; kill -9 \$\$;; *) sleep 5;; esac'")
await_verdict "$job"

record() {  # record NODE FILE: the task_exit line of one record file
  local file=${ATTRIB_TASK_RECORDS_DIR//\{node\}/$1}/$job/$2
  [ -f "$file" ] || fail "no record $file"
  jq -c 'select(.event == "task_exit")' "$file"
}
for rank in 0 1 2 3 4 5; do
  node=n$((rank / 2 + 1))
  exit_line=$(record "$node" "0.$rank.json")
  [ -n "$exit_line" ] || fail "rank $rank on $node has no task_exit line"
  expect_eq "$(jq -r '"\(.node) \(.global_rank) \(.local_rank) \(.job_id) \(.step)"' <<<"$exit_line")" \
    "$node $rank $((rank % 2)) $job 0" "rank $rank identity"
  case $rank in
    3) want="7 0" ;;
    5) want="0 9" ;;
    *) want="0 0" ;;
  esac
  expect_eq "$(jq -r '"\(.exit_code) \(.signal)"' <<<"$exit_line")" "$want" "rank $rank exit code and signal"
  expect_eq "$(cat "$run_dir/env.$rank")" "$job 0 $rank" "ATTRIB_JOB_ID ATTRIB_STEP_ID ATTRIB_RANK of rank $rank"
  # Only the node that ran the task holds its record.
  for other in n1 n2 n3; do
    [ "$other" = "$node" ] || [ ! -e "${ATTRIB_TASK_RECORDS_DIR//\{node\}/$other}/$job/0.$rank.json" ] \
      || fail "rank $rank also recorded on $other"
  done
done
end3=$(record n2 0.3.json | jq .end_us)
end5=$(record n3 0.5.json | jq .end_us)
[ "$end3" -lt "$end5" ] || fail "rank 3 ended at $end3, not before rank 5 at $end5"
batch=$(record n1 batch.0.json)
expect_eq "$(jq -r '"\(.step) \(.step_id) \(.global_rank)"' <<<"$batch")" "batch 4294967291 0" "batch step record"
[ "$(jq .exit_code <<<"$batch")" -ne 0 ] || fail "batch step should have failed with srun"

expect_eq "$(verdict "$job" .domain)" UNATTRIBUTED "domain (an exit code says where, not why)"
expect_eq "$(verdict "$job" '.affected_nodes | join(",")')" n2 "affected node = first failing rank's node"
expect_eq "$(verdict "$job" '[.unexplained[] | select(.kind == "slurm.task_exit") | "\(.node) \(.fields.rank) \(.fields.exit_code)"] | join(",")')" \
  "n2 3 7" "the first abnormal task end"
expect_eq "$(verdict "$job" '[.symptoms[] | select(.event.kind == "slurm.task_exit" and .event.fields.step == "0") | "\(.event.node) \(.event.fields.rank) \(.event.fields.signal) \(.explained_by)"] | join(",")')" \
  "n3 5 9 slurm.first_task_failure" "the later SIGKILL is a symptom"
expect_eq "$(verdict "$job" '[.coverage[] | select(.source == "spank" and .status == "ok") | .node] | unique | join(",")')" \
  "n1,n2,n3" "task record coverage"
expect_contains "$(sacct_field "$job" Comment)" "attrib: UNATTRIBUTED node=n2" "sacct comment"
echo PASS
