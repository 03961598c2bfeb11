#!/usr/bin/env bash
# A spool that no head drains (the epilog's host runs no head: a backup slurmctld, with
# epilog.delivery rpc) is re-sent by the epilog itself (attrib-epilog-send): a job ends while the daemon is down and its reports are
# spooled; the head, whose own spool is elsewhere, never sees them, until the next job's
# hook, once the daemon takes its own report, sends them along. Both jobs are judged
# once and the spool is empty.
source "$(dirname "$0")/lib.sh"
setup_run spool_resend
epilog_delivery rpc
# The head's spool is not the epilog's.
mkdir -p "$run_dir/head-spool"
sed -i "0,/spool_dir: .*/s||spool_dir: $run_dir/head-spool|" "$run_dir/attrib.yaml"
grep -q "spool_dir: $run_dir/spool" "$run_dir/attrib.yaml" || fail "the epilog's spool_dir is gone from the config"

first=$(submit -N1 --wrap 'exit 3')
for _ in $(seq 200); do
  [ "$(ls "$run_dir/spool"/lab_"$first"_*.jobended 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.1
done
[ "$(ls "$run_dir/spool"/lab_"$first"_*.jobended 2>/dev/null | wc -l)" -ge 2 ] ||
  fail "the hooks did not spool job $first (both EpilogSlurmctld and jobcomp/script)"
start_daemon
sleep 2
! "$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$first" >/dev/null 2>&1 || fail "the head found job $first by itself"

second=$(submit -N1 --wrap 'exit 0')
await_verdict "$second"
await_verdict "$first"
expect_eq "$(verdict "$first" '"\(.terminal_state) \(.exit_code)"')" "FAILED 3" "the re-sent job's verdict"
[ -z "$(ls "$run_dir/spool"/*.jobended 2>/dev/null)" ] || fail "spool not emptied: $(ls "$run_dir/spool")"
[[ "$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$first" 2>&1)" != *"runs in the archive"* ]] ||
  fail "job $first was judged twice"
echo "PASS: the epilog re-sent what it had spooled"
