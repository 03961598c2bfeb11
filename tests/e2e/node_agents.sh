#!/usr/bin/env bash
# One node agent per node, each reading its own journal: Xid 79 on n3, NCCL timeouts in
# n1/n2's application output -> GPU_HARDWARE on n3 with coverage 3/3. Then the same with
# n3's agent stopped: coverage shows n3 `failed` and no cause is invented.
source "$(dirname "$0")/lib.sh"
setup_run node_agents
write_node_agents "$run_dir"
trap 'for h in n1 n2 n3; do stop_node_agent $h; done; stop_attributiond' EXIT
for host in n1 n2 n3; do
  seed_journal "$run_dir/agent-$host" "$host"
  start_node_agent "$run_dir" "$host" || fail "agent $host did not start"
done
start_daemon

# run_job: a 3-node job that fails while the evidence appears in the agents' journals.
run_job() {
  local job
  job=$(submit -N3 --wrap 'sleep 4; exit 1')
  wait_state "$job" RUNNING
  sleep 1
  inject_journal "$run_dir/agent-n3" n3 --transport kernel --uid 0 -- "${XID79_LINES[@]}"
  for host in n1 n2; do
    inject_journal "$run_dir/agent-$host" "$host" --transport stdout --identifier python3 --uid 1000 -- \
      "$NCCL_TIMEOUT_LINE"
  done
  await_verdict "$job"
  echo "$job"
}

job=$(run_job | tail -n 1)
expect_eq "$(verdict "$job" .domain)" GPU_HARDWARE "domain"
expect_eq "$(verdict "$job" '.affected_nodes | join(",")')" n3 "affected nodes"
expect_eq "$(verdict "$job" '[.symptoms[] | select(.event.kind == "nccl.watchdog_timeout") | .event.node] | sort | join(",")')" \
  "n1,n2" "symptom nodes"
expect_contains "$(sacct_field "$job" Comment)" "attrib: GPU_HARDWARE node=n3" "sacct comment"
expect_contains "$(sacct_field "$job" Comment)" "coverage=3/3" "coverage in the comment"
for host in n1 n2 n3; do
  expect_contains "$(cat "$run_dir/agent-$host/agent.log")" "job $job: collected" "agent $host served the job"
done

stop_node_agent n3
note "n3's agent stopped"
job=$(run_job | tail -n 1)
expect_eq "$(verdict "$job" '[.coverage[] | select(.node == "n3") | .source + "=" + .status] | join(",")')" \
  "agent=failed" "n3 coverage"
expect_eq "$(verdict "$job" .root_cause)" null "no root cause without n3"
[ "$(verdict "$job" .domain)" != GPU_HARDWARE ] || fail "a hardware cause was invented for the missing node"
expect_contains "$(sacct_field "$job" Comment)" "coverage=2/3" "coverage in the comment"
echo PASS
