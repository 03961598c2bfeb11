#!/usr/bin/env bash
# exit 3 with nothing in any log: UNATTRIBUTED, never a guessed domain; the third such
# failure on one node, with another user's among them, names the node (low).
source "$(dirname "$0")/lib.sh"
setup_run exit3_unattributed
start_daemon
job=$(submit -N1 -w n1 --wrap 'exit 3')
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
expect_eq "$(verdict "$job" '.affected_nodes | join(",")')" n1 "the node where the task died (locator)"

# The same node in several users' unexplained failures (host.unexplained_failures_repeat):
# after this job and an ordinary user's, both UNATTRIBUTED on n1, the next one there that
# nothing explains names n1, low, never acting.
other=$(as_user sbatch --parsable --output=/dev/null -N1 -w n1 --wrap 'exit 3' | cut -d';' -f1)
await_verdict "$other"
expect_eq "$(verdict "$other" .domain)" UNATTRIBUTED "another user's job: one earlier failure is no pattern"
third=$(submit -N1 -w n1 --wrap 'exit 3')
await_verdict "$third"
expect_eq "$(verdict "$third" .root_cause.rule)" host.unexplained_failures_repeat "rule of the third failure on n1"
expect_eq "$(verdict "$third" .confidence)" low "confidence"
expect_eq "$(verdict "$third" .recommended_action)" RESUBMIT "action"
expect_contains "$(verdict "$third" .root_cause.summary)" "n1: 2 other jobs (" "summary"
expect_contains "$(sacct_field "$third" Comment)" "attrib: HOST_HARDWARE" "sacct comment"
echo PASS
