#!/usr/bin/env bash
# attrib-doctor on the real cluster: a healthy setup (head, three node agents, the hook as
# EpilogSlurmctld and jobcomp/script, the SPANK plugin, slurmdbd) has no FAIL and exits 0;
# then six breakages, one at a time and each put back, give the matching FAIL line with its
# fix and exit 1: the hook not executable, AccountingStoreFlags without job_comment, an
# agent down, an agent with another rule pack, munged stopped, the spool not writable by
# the SlurmUser. Last, --job walks a judged job to its Comment in slurmdbd.
source "$(dirname "$0")/lib.sh"
setup_run doctor
conf=$ATTRIB_E2E_CLUSTER_DIR/etc/slurm.conf
hook=$ATTRIB_E2E_DIR/attrib-epilog-hook
DOCTOR=$ATTRIB_BUILD_DIR/tools/attrib-doctor

# attrib's own munged, so stopping it leaves Slurm's alone.
use_private_munged

restore() {
  chmod 755 "$hook"
  chown slurm: "$run_dir/spool"
  if ! grep -q '^AccountingStoreFlags=job_comment$' "$conf"; then
    sed -i 's/^AccountingStoreFlags=.*$/AccountingStoreFlags=job_comment/' "$conf"
    scontrol reconfigure >/dev/null 2>&1 || true
  fi
  for h in n1 n2 n3; do stop_node_agent "$h"; done
  stop_attributiond
  [ -z "$munged_pid" ] || kill "$munged_pid" 2>/dev/null || true
}
trap restore EXIT

write_node_agents "$run_dir"
for file in "$run_dir/attrib.yaml" "$run_dir"/agent-*/attrib.yaml; do
  sed -i "s|^  munge_socket: .*|  munge_socket: $ATTRIB_MUNGE_SOCKET|" "$file"
done
start_munged
for host in n1 n2 n3; do
  seed_journal "$run_dir/agent-$host" "$host"
  start_node_agent "$run_dir" "$host" || fail "agent $host did not start"
done
start_daemon

# doctor [ARGS...]: its output in $out, its exit status in $status.
# (stderr apart: libslurm prints its own errors there, e.g. the dry-run write's "didn't
# affect anything".)
doctor() { status=0; out=$("$DOCTOR" --config "$run_dir/attrib.yaml" "$@" 2>>"$run_dir/doctor.stderr") || status=$?; }
# expect_fail AREA CHECK FIX WHY: exit 1 and a FAIL line for AREA: CHECK whose fix says FIX.
expect_fail() {
  expect_eq "$status" 1 "$4: exit status"
  local line
  line=$(grep "^FAIL  $1: $2 -- " <<<"$out" || true)
  [ -n "$line" ] || fail "$4: no FAIL line for '$1: $2' in:"$'\n'"$out"
  expect_contains "$line" "fix: $3" "$4: the fix"
}

note "healthy"
doctor
echo "$out"
expect_eq "$status" 0 "healthy: exit status"
[ -z "$(grep '^FAIL' <<<"$out")" ] || fail "healthy: a FAIL line"
for line in "OK    slurm: EpilogSlurmctld -- $hook is executable by SlurmUser slurm" \
            "OK    slurm: AccountingStoreFlags -- job_comment is stored" \
            "OK    slurm: SPANK plugin -- " "OK    slurm: slurmdbd Comment write -- " \
            "OK    spool: writable -- " "OK    munge: encode and decode -- " "OK    head: attributiond -- " \
            "OK    agent n1: rule pack -- " "OK    agent n2: clock -- " "OK    agent n3: reachable -- "; do
  expect_contains "$out" "$line" "healthy"
done
doctor --json
expect_eq "$(jq -r .ok <<<"$out")" true "healthy: --json ok"
expect_eq "$(jq -r '[.findings[] | select(.level == "FAIL")] | length' <<<"$out")" 0 "healthy: --json FAIL lines"

note "1. the hook not executable"
chmod 644 "$hook"
doctor
expect_fail slurm EpilogSlurmctld "chmod 0755 $hook" "hook not executable"
chmod 755 "$hook"

note "2. AccountingStoreFlags without job_comment"
sed -i 's/^AccountingStoreFlags=job_comment$/AccountingStoreFlags=job_env/' "$conf"
scontrol reconfigure || fail "scontrol reconfigure"
flags() { local config; config=$(scontrol show config); grep '^AccountingStoreFlags' <<<"$config"; }
for _ in $(seq 50); do [[ "$(flags)" != *job_comment* ]] && break; sleep 0.1; done
[[ "$(flags)" != *job_comment* ]] || fail "slurmctld kept job_comment"
doctor
expect_fail slurm AccountingStoreFlags "AccountingStoreFlags=job_comment in slurm.conf" "comment flag missing"
sed -i 's/^AccountingStoreFlags=job_env$/AccountingStoreFlags=job_comment/' "$conf"
scontrol reconfigure || fail "scontrol reconfigure"
for _ in $(seq 50); do [[ "$(flags)" == *job_comment* ]] && break; sleep 0.1; done

note "3. an agent down"
stop_node_agent n3
doctor
expect_fail "agent n3" reachable "start the agent on n3" "agent down"
doctor --node n1
expect_eq "$status" 0 "--node n1 while n3 is down"
[[ "$out" != *"agent n3"* ]] || fail "--node n1 checked n3"
start_node_agent "$run_dir" n3 || fail "agent n3 did not restart"

note "4. an agent with another rule pack"
stop_node_agent n2
cp -rL "$ATTRIB_SOURCE_DIR/rules/pack" "$run_dir/other-pack"
sed -i 's/^version: .*/version: 0.0.1-other/' "$run_dir/other-pack/pack.yaml"
sed -i "s|^  pack_dir: .*|  pack_dir: $run_dir/other-pack|" "$run_dir/agent-n2/attrib.yaml"
start_node_agent "$run_dir" n2 || fail "agent n2 did not start with the other pack"
doctor
expect_fail "agent n2" "rule pack" "install the head's attrib-rules package" "agent with another pack"
expect_contains "$(grep '^FAIL  agent n2: rule pack' <<<"$out")" "runs pack 0.0.1-other" "the agent's pack version"

note "5. munged stopped"
kill_munged
doctor
expect_fail munge encode "start munged" "munged stopped"
start_munged

note "6. the spool not writable by the SlurmUser"
chown root: "$run_dir/spool"
chmod 755 "$run_dir/spool"
doctor
expect_fail spool writable "chown slurm: $run_dir/spool" "spool not writable"
chown slurm: "$run_dir/spool"

note "--job: a judged job, walked to its Comment"
stop_node_agent n2
sed -i "s|^  pack_dir: .*|  pack_dir: ${ATTRIB_RULES_PACK_DIR:-$ATTRIB_SOURCE_DIR/rules/pack}|" "$run_dir/agent-n2/attrib.yaml"
start_node_agent "$run_dir" n2 || fail "agent n2 did not restart"
job=$(submit -N1 --wrap 'exit 3')
await_verdict "$job"
for _ in $(seq 100); do [[ "$(sacct_field "$job" Comment)" == *"attrib: "* ]] && break; sleep 0.1; done
doctor --job "$job"
expect_eq "$status" 0 "--job: exit status"
expect_contains "$out" "OK    job $job: received -- " "--job: received"
expect_contains "$out" "OK    job $job: verdict -- " "--job: verdict"
expect_contains "$out" "OK    job $job: comment -- Comment in slurmdbd: attrib: " "--job: comment"
doctor --job 999999
expect_fail "job 999999" received 'check the slurm checks above (the hook); then `attrib-show --attribute 999999`' \
  "--job of an unknown job"
echo PASS
