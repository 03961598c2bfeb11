#!/usr/bin/env bash
# exit 3 with nothing in any log: UNATTRIBUTED, never a guessed domain.
source "$(dirname "$0")/lib.sh"
setup_run exit3_unattributed
start_daemon
job=$(submit -N1 --wrap 'exit 3')
await_verdict "$job"
expect_eq "$(sacct_field "$job" State)" FAILED "sacct state"
expect_eq "$(sacct_field "$job" ExitCode)" "3:0" "sacct exit code"
expect_contains "$(sacct_field "$job" Comment)" "attrib: UNATTRIBUTED" "sacct comment"
expect_eq "$(verdict "$job" .domain)" UNATTRIBUTED "domain"
expect_eq "$(verdict "$job" .exit_code)" 3 "exit code"
expect_eq "$(verdict "$job" .root_cause)" null "root cause"
# The failed batch step as slurmdbd recorded it, listed but not blamed.
expect_eq "$(verdict "$job" '[.unexplained[] | select(.kind == "slurm.step_failed") | "\(.fields.step) \(.fields.exit_code)"] | join(",")')" \
  "$job.batch 3" "failed step from slurmdbd among the unexplained events"
expect_eq "$(verdict "$job" '[.coverage[] | select(.source == "slurm") | .status] | join(",")')" ok "slurm accounting coverage"
echo PASS
