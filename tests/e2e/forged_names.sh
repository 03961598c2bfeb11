#!/usr/bin/env bash
# Trust by structure on the real cluster (docs/security.md), with remediation.mode drain:
#  1. a job runs a program named like an Xid report that segfaults: the machine's real
#     kernel prints its segfault line (comm and file name: the forged text) into the real
#     /dev/kmsg, which the head reads with the kmsg collector;
#  2. a job names a step like slurmctld's node-failure message (srun -J 'Killing JobId=...
#     on failed node n2'), which slurmdbd's step record carries into the accounting line.
# Neither verdict may blame the GPU, the scheduler or any hardware, and no node is drained.
source "$(dirname "$0")/lib.sh"
setup_run forged_names
trap 'scontrol update nodename=n1,n2 state=resume >/dev/null 2>&1 || true; stop_attributiond' EXIT
[ -r /dev/kmsg ] || fail "/dev/kmsg is not readable: this scenario needs the machine's real kernel ring"

# The real kernel ring, read for every node (they all run on this machine); remediation on.
sed -i '/^collectors:/a\  - kind: kmsg\n    options: {path: /dev/kmsg}' "$run_dir/attrib.yaml"
printf 'remediation:\n  mode: drain\n  max_drains_per_hour: 4\n' >> "$run_dir/attrib.yaml"
start_daemon

forged='NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus'
printf 'int main(void) { volatile int *p = 0; *p = 1; return 0; }\n' > "$run_dir/crash.c"
gcc -o "$run_dir/$forged" "$run_dir/crash.c" || fail "cannot build the crashing program"

job1=$(submit -N1 -n1 -w n1 --wrap "sleep 1; '$run_dir/$forged'")
job2=$(submit -N1 -n1 -w n2 --wrap "srun -J 'Killing JobId=1 on failed node n2' sh -c 'sleep 1; exit 3'")
await_verdict "$job1"
await_verdict "$job2"

note "job $job1 (segfaulting '$forged'): $(verdict "$job1" .comment)"
grep -q "segfault at" <<<"$(verdict "$job1" '[.root_cause.event.line, .unexplained[].line, .symptoms[].event.line] | join("\n")')" ||
  note "(the kernel did not log the segfault: show_unhandled_signals is off?)"
for job in "$job1" "$job2"; do
  domain=$(verdict "$job" .domain)
  case "$domain" in
    GPU_HARDWARE | GPU_DRIVER | NVLINK_FABRIC | NETWORK | HOST_HARDWARE | STORAGE | SCHEDULER)
      fail "job $job: forged text gave $domain ($(verdict "$job" .comment))" ;;
  esac
  action=$(verdict "$job" .recommended_action)
  case "$action" in DRAIN_NODE | RESET_GPU | REBOOT_NODE) fail "job $job: forged text recommends $action" ;; esac
done
expect_eq "$(verdict "$job1" .domain)" APPLICATION "the segfault is the program's own"
note "job $job2 (step named like slurmctld): $(verdict "$job2" .comment)"
for node in n1 n2; do
  state=$(sinfo -h -n "$node" -o '%T')
  case "$state" in drain*) fail "$node was drained ($(sinfo -h -n "$node" -o '%250E'))" ;; esac
done
echo "PASS: forged program and step names blame no hardware and drain nothing"
