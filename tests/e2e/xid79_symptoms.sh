#!/usr/bin/env bash
# Xid 79 on n2's kernel log while NCCL watchdog timeouts fill n1 and n3's application
# output: the verdict blames n2's GPU and lists the timeouts as symptoms.
source "$(dirname "$0")/lib.sh"
setup_run xid79_symptoms
start_daemon

job=$(submit -N3 --wrap 'sleep 4; exit 1')
wait_state "$job" RUNNING
sleep 1
inject n2 --transport kernel --uid 0 -- "${XID79_LINES[@]}"
sleep 1
for host in n1 n3; do
  inject "$host" --transport stdout --identifier python3 --uid 1000 -- \
    "$NCCL_TIMEOUT_LINE"
done
await_verdict "$job"

expect_eq "$(sacct_field "$job" State)" FAILED "sacct state"
comment=$(sacct_field "$job" Comment)
expect_contains "$comment" "attrib: GPU_HARDWARE node=n2" "sacct comment"
expect_eq "$(verdict "$job" .domain)" GPU_HARDWARE "domain"
expect_eq "$(verdict "$job" '.affected_nodes | join(",")')" n2 "affected nodes"
expect_eq "$(verdict "$job" .root_cause.event.source)" kernel "root cause source"
expect_eq "$(verdict "$job" .comment)" "${comment}" "verdict comment == sacct comment"
expect_eq "$(verdict "$job" '[.symptoms[] | select(.event.kind | startswith("nccl")) | .event.node] | sort | unique | join(",")')" \
  "n1,n3" "symptom nodes"
expect_eq "$(verdict "$job" '[.symptoms[].explained_by] | unique | join(",")')" "$(verdict "$job" .root_cause.rule)" \
  "symptoms explained by the root cause"
expect_eq "$(verdict "$job" '[.coverage[] | select(.node == "n2" and .source == "kernel") | .status] | join(",")')" ok "n2 kernel coverage"
# slurmdbd's record of the failed batch step (slurm_accounting collector) is a symptom too.
expect_eq "$(verdict "$job" '[.symptoms[] | select(.event.kind == "slurm.step_failed") | .event.fields.step] | join(",")')" \
  "$job.batch" "failed batch step from slurmdbd"
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$job" | tee "$run_dir/show.txt"
expect_contains "$(cat "$run_dir/show.txt")" "Domain:       GPU_HARDWARE" "attrib-show text"
# The raw evidence the head archived (every line read in the window, as collected),
# exported by an admin and replayed offline: the very verdict, byte for byte, but for the
# `run` only the archive knows (without_run).
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" --export-bundle "$run_dir/bundle" "$job" >"$run_dir/export.txt" 2>&1 ||
  fail "export: $(cat "$run_dir/export.txt")"
expect_contains "$(cat "$run_dir/export.txt")" "with its raw evidence" "attrib-show --export-bundle"
[ -f "$run_dir/bundle/n2/kernel.jsonl" ] || fail "no n2/kernel.jsonl in the exported bundle: $(ls -R "$run_dir/bundle")"
"$ATTRIB_BUILD_DIR/tools/attrib-replay" --json --pack "${ATTRIB_RULES_PACK_DIR:-$ATTRIB_SOURCE_DIR/rules/pack}" \
  "$run_dir/bundle" > "$run_dir/replayed.json" || fail "attrib-replay of the exported bundle failed"
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" --json "$job" | without_run > "$run_dir/archived.json"
cmp -s "$run_dir/replayed.json" "$run_dir/archived.json" ||
  fail "the replayed raw evidence gives another verdict: $(diff <(jq -S . "$run_dir/archived.json") <(jq -S . "$run_dir/replayed.json") | head -c 1500)"
# The archive's figures as an admin reads them: this job's raw evidence is counted.
"$ATTRIB_SHOW" --server "$DAEMON_ADDR" --stats --json >"$run_dir/stats.json" 2>&1 || fail "stats: $(cat "$run_dir/stats.json")"
[ "$(jq '.evidence.runs >= 1 and .evidence.stored_bytes > 0 and .used_bytes > 0' "$run_dir/stats.json")" = true ] ||
  fail "attrib-show --stats: $(cat "$run_dir/stats.json")"
stats_text=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --stats)
expect_contains "$stats_text" "Retention: raw evidence 30 days" "attrib-show --stats"
echo PASS
