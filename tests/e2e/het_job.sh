#!/usr/bin/env bash
# A heterogeneous job is judged once, as a whole: its components' hooks all report under
# the het job's id, the evidence of every component's nodes is read, and one joint verdict
# names each component's state. Here component 1's node loses its GPU (Xid 79 in its
# kernel log) while component 0 runs the batch script elsewhere: the joint verdict blames
# component 1's node, and `attrib-show H+1` answers with the same verdict.
source "$(dirname "$0")/lib.sh"
setup_run het_job
start_daemon

cat > "$run_dir/het.sh" <<'SCRIPT'
#!/bin/bash
#SBATCH -N1 -n1
#SBATCH hetjob
#SBATCH -N1 -n1
srun --het-group=1 bash -c 'sleep 3; exit 5'
exit 5
SCRIPT
job=$(sbatch --parsable --output=/dev/null "$run_dir/het.sh" | cut -d';' -f1)
note "het job $job"
# Het jobs are started by the backfill pass: both components run together.
for _ in $(seq 300); do [ "$(squeue -h -j "$job" -o %T | sort -u)" = RUNNING ] && break; sleep 0.1; done
[ "$(squeue -h -j "$job" -o %T | sort -u)" = RUNNING ] || fail "het job $job never ran"
node1=$(squeue -h -j "$job" -o '%i %N' | awk -v c="$job+1" '$1 == c {print $2}')
note "component $job+1 runs on $node1"
sleep 1
inject "$node1" --transport kernel --uid 0 -- "${XID79_LINES[@]}"
await_verdict "$job"
rows=$(sacct -n -X -P -j "$job" -o JobID,State,ExitCode,NodeList)
note "sacct: $(tr '\n' ' ' <<<"$rows")"

expect_eq "$(verdict "$job" .job_id)" "$job" "the joint verdict's id"
expect_eq "$(verdict "$job" '[.components[] | "\(.job_id)|\(.state)|\(.exit_code):\(.signal)|\(.nodes | join(","))"] | join(" ")')" \
  "$(awk -F'|' '{printf "%s%s|%s|%s|%s", (NR > 1 ? " " : ""), $1, $2, $3, $4}' <<<"$rows")" \
  "each component as its own row says"
expect_eq "$(verdict "$job" '.nodes | join(",")')" \
  "$(awk -F'|' '{print $4}' <<<"$rows" | xargs -n1 scontrol show hostnames | sort -u | paste -sd,)" \
  "the joint verdict reads every component's nodes"
expect_eq "$(verdict "$job" .domain)" GPU_HARDWARE "domain"
expect_eq "$(verdict "$job" '.affected_nodes | join(",")')" "$node1" "the node of the component that lost its GPU"
expect_contains "$(sacct_field "$job" Comment | head -n 1)" "attrib: GPU_HARDWARE node=$node1" "the Comment"

shown=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$job" 2>&1)
expect_contains "$shown" "Heterogeneous job, one verdict for its 2 components" "attrib-show text"
[[ "$shown" != *"runs in the archive"* ]] || fail "the het job was judged more than once: $shown"
expect_eq "$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --json "$job+1" | jq -r .job_id)" "$job" "attrib-show H+1"
! grep -q "job $job+" "$run_dir/attributiond.log" || fail "a component was queued on its own"
echo "PASS: one joint verdict for the het job"
