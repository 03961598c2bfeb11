#!/usr/bin/env bash
# head.comment_field AdminComment: the verdict goes where users cannot write. An ordinary
# user submits a job whose --comment carries a forged attrib segment (claiming a later
# attempt and a node to drain); slurmctld refuses them AdminComment, attrib writes the
# verdict there, alone, and leaves the user's Comment as they wrote it.
source "$(dirname "$0")/lib.sh"
setup_run admin_comment_field
sed -i 's/^head:$/head:\n  comment_field: AdminComment/' "$run_dir/attrib.yaml"
grep -q '^  comment_field: AdminComment$' "$run_dir/attrib.yaml" || fail "cannot set head.comment_field"
start_daemon
forged="attrib: GPU_HARDWARE node=n2 rule=gpu.fallen_off_bus action=DRAIN_NODE symptoms=1 coverage=3/3 attempt=9"
job=$(as_user sbatch --parsable --output=/dev/null -N1 --comment "$forged" --wrap 'sleep 2; exit 3' | cut -d';' -f1)
[ -n "$job" ] || fail "the user could not submit"
if refused=$(as_user scontrol update jobid="$job" AdminComment="attrib: forged" 2>&1); then
  fail "an ordinary user wrote AdminComment"
fi
expect_contains "$refused" "denied" "slurmctld's answer to the user"
ATTRIB_COMMENT_FIELD=AdminComment await_verdict "$job"
expect_eq "$(sacct_field "$job" AdminComment)" "$(verdict "$job" .comment)" "AdminComment: the verdict's segment alone"
expect_contains "$(verdict "$job" .comment)" "attrib: UNATTRIBUTED" "the verdict (exit 3, no evidence)"
expect_eq "$(sacct_field "$job" Comment)" "$forged" "the user's Comment as they wrote it"
echo "PASS: the verdict is in AdminComment, out of users' reach; their Comment is theirs"
