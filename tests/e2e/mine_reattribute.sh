#!/usr/bin/env bash
# Issue 17's proof on the real cluster: 50 jobs fail with a message no rule knows and are
# UNATTRIBUTED. attrib-rules mine ranks that message's template first and proposes a rule;
# with the domain filled in, attrib-rules validate accepts it unchanged, attrib-reattribute
# lists exactly those 50 jobs as changing, and --apply flips exactly them: their comments
# in slurmdbd now name the new domain, the other jobs' are untouched, and the archive keeps
# both versions of each verdict with its pack's hash.
#
# The messages are test fixtures written here (marked so), not field messages: the point
# is the workflow, not the rule.
source "$(dirname "$0")/lib.sh"
setup_run mine_reattribute
start_daemon
pack=${ATTRIB_RULES_PACK_DIR:-$ATTRIB_SOURCE_DIR/rules/pack}
db=$run_dir/attrib.db
heartbeat='echo "attrib-e2e fixture: heartbeat of step $((RANDOM % 100)) ok"'

failing=() control=() succeeded=()
for i in $(seq 50); do
  failing+=("$(sbatch --parsable -N1 --output="$run_dir/job-%j.out" --wrap \
    "$heartbeat; echo \"attrib-e2e fixture: widget controller $((i % 8)) stopped responding after $((i * 3)) ms\"; exit 1" |
    cut -d';' -f1)")
done
for i in $(seq 5); do
  control+=("$(sbatch --parsable -N1 --output="$run_dir/job-%j.out" --wrap \
    "echo \"attrib-e2e fixture: control job finished phase $i\"; exit 3" | cut -d';' -f1)")
  succeeded+=("$(sbatch --parsable -N1 --output="$run_dir/job-%j.out" --wrap "$heartbeat" | cut -d';' -f1)")
done
note "waiting for ${#failing[@]} + ${#control[@]} + ${#succeeded[@]} verdicts"
for job in "${failing[@]}" "${control[@]}" "${succeeded[@]}"; do await_verdict "$job"; done
for job in "${failing[@]}" "${control[@]}"; do
  expect_eq "$(verdict "$job" .domain)" UNATTRIBUTED "job $job before the new rule"
done

# Mine: the widget template first (50 attempts, none successful), the control's next, the
# heartbeat (also in the successful jobs) last.
"$ATTRIB_BUILD_DIR/tools/attrib-rules" mine --pack "$pack" --database "$db" --propose 1 --out "$run_dir/site" \
  --save --json > "$run_dir/mined.json" || fail "attrib-rules mine failed"
# --save leaves them for the dashboard's Unexplained panel.
expect_eq "$(sqlite3 "$db" 'select attempts from mined_templates where rank = 1')" 50 "saved templates"
"$ATTRIB_BUILD_DIR/tools/attrib-rules" mine --pack "$pack" --database "$db" --propose 0 | tee "$run_dir/mined.txt"
expect_contains "$(jq -r '.templates[0].template' "$run_dir/mined.json")" \
  "widget controller <NUM> stopped responding after <NUM> ms" "the first template"
expect_eq "$(jq -r '.templates[0].attempts' "$run_dir/mined.json")" 50 "attempts of the first template"
expect_eq "$(jq -r '.templates[0].successful_attempts' "$run_dir/mined.json")" 0 "successful attempts of the first"
expect_eq "$(jq -r '.templates[-1].template' "$run_dir/mined.json")" \
  "attrib-e2e fixture: heartbeat of step <NUM> ok" "the background template ranks last"
[ "$(jq -r '.templates[-1].successful_attempts' "$run_dir/mined.json")" -ge 1 ] || fail "heartbeat not seen in successes"
rule=$run_dir/site/mined-1.yaml
[ -f "$rule" ] || fail "no proposed rule at $rule"

# As proposed, the loader refuses it (the domain is the admin's to fill) ...
if "$ATTRIB_BUILD_DIR/tools/attrib-rules" validate --pack "$pack" --site "$run_dir/site" > "$run_dir/refused.txt" 2>&1; then
  fail "a rule with domain FILL_IN was accepted"
fi
# ... filled, it is accepted as is.
sed -i 's/domain: FILL_IN/domain: APPLICATION/' "$rule"
"$ATTRIB_BUILD_DIR/tools/attrib-rules" validate --pack "$pack" --site "$run_dir/site" > "$run_dir/validate.txt" 2>&1 ||
  fail "the filled rule does not validate: $(cat "$run_dir/validate.txt")"
# ... and the golden fixtures still give their verdicts with it.
"$ATTRIB_BUILD_DIR/tools/attrib-rules" test --pack "$pack" --site "$run_dir/site" \
  --fixtures "$ATTRIB_SOURCE_DIR/tests/fixtures" > "$run_dir/test.txt" 2>&1 ||
  fail "attrib-rules test with the filled rule: $(tail -5 "$run_dir/test.txt")"

reattribute() { "$ATTRIB_BUILD_DIR/tools/attrib-reattribute" --pack "$pack" --site "$run_dir/site" --database "$db" "$@"; }
reattribute --json > "$run_dir/diff.json" || fail "attrib-reattribute failed"
reattribute | tee "$run_dir/diff.txt"
expect_eq "$(jq -r '.counts.changed' "$run_dir/diff.json")" 50 "runs that would change"
expect_eq "$(jq -c '.transitions' "$run_dir/diff.json")" '[{"runs":50,"transition":"UNATTRIBUTED -> APPLICATION"}]' \
  "transitions"
expect_eq "$(jq -r '[.runs[] | select(.outcome == "changed") | .job_id] | sort | join(",")' "$run_dir/diff.json")" \
  "$(printf '%s\n' "${failing[@]}" | sort | paste -sd,)" "the changed runs are the widget jobs"
expect_eq "$(sqlite3 "$db" 'select count(*) from verdict_versions')" 0 "versions before --apply"

reattribute --apply > "$run_dir/apply.txt" || fail "attrib-reattribute --apply failed"
expect_contains "$(cat "$run_dir/apply.txt")" "Applied: 50 runs revised" "--apply"
expect_eq "$(sqlite3 "$db" 'select count(*) from verdict_versions')" 100 "two versions of each revised run"
expect_eq "$(sqlite3 "$db" "select count(distinct ruleset_hash) from verdict_versions")" 2 "each with its pack's hash"

# The head rewrites the comments; slurmdbd then holds the new domain for exactly those jobs.
all_ids=$(printf '%s\n' "${failing[@]}" "${control[@]}" | paste -sd,)
for _ in $(seq 600); do
  flipped=$(sacct -n -X -P -j "$all_ids" -o JobID,Comment | grep -c 'attrib: APPLICATION' || true)
  [ "$flipped" = 50 ] && break
  sleep 0.1
done
sacct -n -X -P -j "$all_ids" -o JobID,Comment > "$run_dir/comments.txt"
expect_eq "$(grep -c 'attrib: APPLICATION' "$run_dir/comments.txt" || true)" 50 "comments that name APPLICATION"
for job in "${failing[@]}"; do
  expect_eq "$(grep -c "^$job|.*attrib: APPLICATION" "$run_dir/comments.txt")" 1 "job $job's comment"
  expect_eq "$(grep -o 'attrib:' <<<"$(grep "^$job|" "$run_dir/comments.txt")" | wc -l)" 1 "one attrib segment in $job's"
done
for job in "${control[@]}"; do
  expect_contains "$(grep "^$job|" "$run_dir/comments.txt")" "attrib: UNATTRIBUTED" "control job $job untouched"
done
job=${failing[0]}
expect_eq "$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" --json "$job" | jq -r .root_cause.rule)" site.mined_1 \
  "attrib-show shows the revised verdict"
shown=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$job")
expect_contains "$shown" "Versions:" "attrib-show lists the versions"
expect_contains "$shown" "UNATTRIBUTED (low)" "attrib-show: the first version"
expect_contains "$shown" "APPLICATION site.mined_1 (low)" "attrib-show: the re-attributed version"
expect_eq "$(sqlite3 "$db" "select count(*) from jobs where status != 'done'")" 0 "every run done again"
expect_no_node_drained "after re-attribution"
# Judged again under the same pack, nothing changes any more.
expect_eq "$(reattribute --json | jq -r '.counts.changed // 0')" 0 "changes after --apply"
echo PASS
