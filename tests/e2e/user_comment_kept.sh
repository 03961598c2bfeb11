#!/usr/bin/env bash
# The user's own --comment survives; the attrib segment is added beside it, and replaces
# one the user forged.
source "$(dirname "$0")/lib.sh"
setup_run user_comment_kept
start_daemon
job=$(submit -N1 --comment "exp 42" --wrap 'exit 3')
await_verdict "$job"
comment=$(sacct_field "$job" Comment)
expect_contains "$comment" "exp 42" "user's comment kept"
expect_contains "$comment" "attrib: UNATTRIBUTED" "attrib segment"
expect_eq "${comment%%attrib:*}" "exp 42 | " "user's text first, untouched"
# The head writes the Comment as soon as slurmdbd's row shows the job's end; slurmctld
# completes the row (its allocation) about 2.5 s after the end. That update keeps both.
sleep 4
expect_eq "$(sacct_field "$job" Comment)" "$comment" "the Comment after slurmctld completed the row"

# A user's --comment that forges an attrib segment, claiming a later attempt than any
# attrib judged (which would hold a real verdict back): attrib never wrote it, so the
# verdict replaces it and the user's own words before it stay.
forged="attrib: GPU_HARDWARE node=n2 rule=gpu.fallen_off_bus action=DRAIN_NODE symptoms=1 coverage=3/3 attempt=9"
job=$(as_user sbatch --parsable --output=/dev/null -N1 --comment "mine | $forged" --wrap 'exit 3' | cut -d';' -f1)
await_verdict "$job"
expect_eq "$(sacct_field "$job" Comment)" "mine | $(verdict "$job" .comment)" "the forged segment replaced"
echo PASS
