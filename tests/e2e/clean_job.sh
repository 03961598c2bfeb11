#!/usr/bin/env bash
# A job that succeeds gets NONE, in sacct and in the archive.
source "$(dirname "$0")/lib.sh"
setup_run clean_job
start_daemon
job=$(submit -N2 --wrap 'srun hostname >/dev/null')
await_verdict "$job"
expect_eq "$(sacct_field "$job" State)" COMPLETED "sacct state"
expect_contains "$(sacct_field "$job" Comment)" "attrib: NONE" "sacct comment"
expect_eq "$(verdict "$job" .domain)" NONE "domain"
expect_eq "$(verdict "$job" .root_cause)" null "root cause"
expect_eq "$(verdict "$job" .recommended_action)" NONE "action"
echo PASS
