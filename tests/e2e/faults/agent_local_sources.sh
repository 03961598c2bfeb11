#!/usr/bin/env bash
# A node agent on its documented default sources: the machine's own journal (journald
# collector, no directory: sd_journal_open(SD_JOURNAL_LOCAL_ONLY)) and the real
# /dev/kmsg (kmsg collector, default path). The machine has no running journald here, so
# entries are put into a journal file of its own machine id under /var/log/journal (as
# journald would write them), and removed afterwards.
# During a job on n1:
#   - an NCCL watchdog timeout in the job's output, in the local journal: the agent finds
#     it (proof it reads the local journal);
#   - a line written to the real /dev/kmsg by root, marked with this run's nonce: user
#     space gets facility "user" there, so the kmsg collector counts it as a user-space
#     record and does not take it for the kernel's (proof it reads the device);
#   - the same, as journald imports it: _TRANSPORT=kernel with SYSLOG_FACILITY=1; the
#     journald collector trusted it as a kernel line (a forged Xid 79 named GPU_HARDWARE).
# The verdict names no GPU fault, and n1's coverage shows both sources read.
source "$(dirname "$0")/../lib.sh"
setup_run fault_agent_local_sources
[ -s /etc/machine-id ] || fail "no /etc/machine-id: sd-journal's local journal is /var/log/journal/<machine id>"
[ -w /dev/kmsg ] || fail "/dev/kmsg is not writable (run as root on a machine with a kernel log)"
journal_dir=/var/log/journal/$(cat /etc/machine-id)
nonce=attrib-e2e-$$-$RANDOM
created_dir=
[ -d "$journal_dir" ] || { mkdir -p "$journal_dir"; created_dir=1; }
written=()
cleanup() {
  stop_node_agent n1
  stop_attributiond
  [ ${#written[@]} -eq 0 ] || rm -f "${written[@]}"
  [ -z "$created_dir" ] || rmdir "$journal_dir" 2>/dev/null || true
}
trap cleanup EXIT
# local_journal [journal-inject options] -- MESSAGE...: into the machine's own journal, now
# unless --time-us is given.
local_journal() { written+=("$("$JOURNAL_INJECT" --dir "$journal_dir" --host n1 --time-us now "$@")"); }

write_node_agents "$run_dir"
cat > "$run_dir/agent-n1/attrib.yaml" <<YAML
cluster: lab
node:
  name: n1
  listen: ["127.0.0.1:7271"]
auth:
  mode: munge
  munge_socket: $ATTRIB_MUNGE_SOCKET
  slurm_user: slurm
rules:
  pack_dir: ${ATTRIB_RULES_PACK_DIR:-$ATTRIB_SOURCE_DIR/rules/pack}
collectors:
  - kind: journald
    options:
      app_identifiers: [python3]
  - kind: kmsg
YAML
# The journal begins before the job: its coverage of the window is whole.
local_journal --time-us $(( ($(date +%s) - 3600) * 1000000 )) --transport syslog --identifier attrib-e2e -- \
  "$nonce: journal history before the job"
start_node_agent "$run_dir" n1 || fail "n1's agent did not start"
start_daemon

job=$(submit -N1 -w n1 --wrap 'sleep 4; exit 1')
wait_state "$job" RUNNING
sleep 1
local_journal --transport stdout --identifier python3 --uid 1000 -- "$NCCL_TIMEOUT_LINE"
forged="$nonce: ${XID79_LINES[1]}"
printf '<12>%s\n' "$forged" > /dev/kmsg
local_journal --transport kernel --identifier "$nonce" --field SYSLOG_FACILITY=1 -- "$forged"
await_verdict "$job"

coverage() { verdict "$job" "[.coverage[] | select(.node == \"n1\" and .source == \"$1\")][0] | \"\\(.status) \\(.detail)\""; }
note "job $job: $(verdict "$job" .domain); n1 kernel: $(coverage kernel); n1 app: $(coverage app)"
[ "$(verdict "$job" .domain)" != GPU_HARDWARE ] || fail "a line user space wrote to the kernel log was taken for the kernel's: $(verdict "$job" .comment)"
expect_eq "$(verdict "$job" '[.. | objects | select(has("line")) | .line | select(contains("'"$nonce"'"))] | length')" 0 \
  "events from the marked lines"
expect_eq "$(verdict "$job" '[.symptoms[]?, .unexplained[]?, .root_cause // empty | (.event // .) | select(.kind == "nccl.watchdog_timeout" and .node == "n1")] | length')" 1 \
  "the NCCL timeout from n1's local journal"
kernel=$(coverage kernel)
expect_contains "$kernel" "user-space records (facility != kern) skipped" "n1's kernel coverage (the kmsg read of /dev/kmsg)"
expect_contains "$kernel" "user-space records of the kernel transport (facility != kern) skipped" "n1's kernel coverage (the local journal)"
case "$kernel" in failed* | unavailable*) fail "n1's kernel sources not read: $kernel" ;; esac
expect_contains "$(cat "$run_dir/agent-n1/agent.log")" "job $job: collected" "n1's agent served the job"
expect_contains "$(sacct_field "$job" Comment)" "attrib:" "sacct comment"
echo PASS
