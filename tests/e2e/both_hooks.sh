#!/usr/bin/env bash
# attrib-epilog works as EpilogSlurmctld and as jobcomp/script on the real slurmctld: each
# reports the job with what it really knows (jobcomp/script also has the state), the
# daemon queues it once, and the verdict is written once.
source "$(dirname "$0")/lib.sh"
setup_run both_hooks
start_daemon
job=$(submit -N2 --wrap 'exit 3')
await_verdict "$job"
log=$(cat "$run_dir/attributiond.log")
expect_contains "$log" "job $job: queued" "first hook queued the job"
expect_contains "$log" "job $job: already queued" "second hook deduplicated"
expect_contains "$log" "hook HOOK_KIND_EPILOG_SLURMCTLD, nodes n[1-2]" "EpilogSlurmctld reported the node list"
expect_contains "$log" "hook HOOK_KIND_JOBCOMP_SCRIPT, nodes n[1-2]" "jobcomp/script reported the node list"
expect_eq "$(grep -o 'attrib:' <<<"$(sacct_field "$job" Comment)" | wc -l)" 1 "attrib segments in the comment"
echo PASS
