#!/usr/bin/env bash
# A reused job id is a new job. slurmctld loses its state and numbers jobs from
# FirstJobId again while slurmdbd still holds the old jobs: the new job gets the id of a
# job attrib already judged. It gets its own verdict (attempt 0: not a requeue of the
# old job), its own Comment on its own row; the old job keeps its verdict and Comment,
# and attrib-show shows the newest, saying that an older one exists.
source "$(dirname "$0")/lib.sh"
setup_run id_reuse
start_daemon

old=$(submit -N1 --wrap 'exit 3')
await_verdict "$old"
old_comment=$(sacct_field "$old" Comment)
expect_contains "$old_comment" "attrib:" "the old job's Comment"

cluster ctld-lose-state "$old" || fail "slurmctld did not come back without its state"
new=$(submit -N1 --wrap 'exit 0')
expect_eq "$new" "$old" "the new job's id (slurmctld numbers from FirstJobId again)"
run_verdict "$new" 1
run_verdict "$new" 0
first="$run_dir/verdict-$new-run0.json"
second="$run_dir/verdict-$new-run1.json"
rows=$(sacct -D -n -X -P -j "$new" -o State,Comment)
note "sacct -D: $(tr '\n' ' ' <<<"$rows")"

expect_eq "$(jq -r '"\(.terminal_state) \(.exit_code)"' "$first")" "FAILED 3" "the old job's verdict"
expect_eq "$(jq -r '"\(.terminal_state) \(.exit_code) \(.domain)"' "$second")" "COMPLETED 0 NONE" "the new job's verdict"
expect_eq "$(jq -r .attempt "$second")" 0 "the new job's attempt (a new job, not a requeue)"
expect_eq "$(sed -n 1p <<<"$rows")" "FAILED|$old_comment" "the old job's row keeps its Comment"
expect_eq "$(sed -n 2p <<<"$rows")" "COMPLETED|$(jq -r .comment "$second")" "the new job's row has its own verdict"
shown=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$new" 2>&1)
expect_contains "$shown" "COMPLETED" "attrib-show shows the newest job"
expect_contains "$shown" "has 2 runs in the archive" "attrib-show says an older one exists"
echo "PASS: the reused id is a new job with its own verdict; the old one keeps its own"
