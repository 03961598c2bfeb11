#!/usr/bin/env bash
# Two jobs share n2, one of its two GPUs each (the cluster's GRES, scripts/cluster.sh).
# The driver's map of n2's GPUs (collector gpu_map over a copy of
# /proc/driver/nvidia/gpus: minor 0 is 0000:07:00.0, minor 1 is 0000:0a:00.0) and the
# jobs' SPANK task records (their GPU indices) tell the GPUs apart. An Xid 79 on job A's
# GPU is job A's root cause (GPU_HARDWARE on that GPU) and, for job B, a neighbour's line:
# B's verdict is its own, with A's Xid named as context.
source "$(dirname "$0")/lib.sh"
setup_run shared_node_gpu
gpus=$run_dir/gpus
for gpu in 0:0000:07:00.0 1:0000:0a:00.0; do
  minor=${gpu%%:*} bus=${gpu#*:}
  install -d -m 755 "$gpus/n2/$bus"
  # nv-procfs.c's lines for one GPU (kernel-open/nvidia/nv-procfs.c), root's 0644 copy.
  printf 'Model: \t\t NVIDIA A100-SXM4-80GB\nBus Type: \t PCIe\nBus Location: \t %s\nDevice Minor: \t %s\nGPU Excluded:\t No\n' \
    "$bus" "$minor" >"$gpus/n2/$bus/information"
done
cat >> "$run_dir/attrib.yaml" <<YAML
  - kind: gpu_map
    options:
      directory: $gpus/{node}
YAML
start_daemon

a=$(submit -N1 -n1 -w n2 --gres=gpu:1 --wrap 'sleep 5; exit 1')
b=$(submit -N1 -n1 -w n2 --gres=gpu:1 --wrap 'sleep 5; exit 2')
wait_state "$a" RUNNING
wait_state "$b" RUNNING
# Which GPU Slurm gave job A: "GRES=gpu:1(IDX:0)" in its detailed record.
a_index=$(scontrol show job -d "$a" | sed -n 's/.*GRES=gpu[^(]*(IDX:\([0-9]*\)).*/\1/p' | head -n1)
b_index=$(scontrol show job -d "$b" | sed -n 's/.*GRES=gpu[^(]*(IDX:\([0-9]*\)).*/\1/p' | head -n1)
[ -n "$a_index" ] && [ -n "$b_index" ] && [ "$a_index" != "$b_index" ] ||
  fail "the jobs did not get a GPU each: A '$a_index', B '$b_index'"
a_bus=$([ "$a_index" = 0 ] && echo 0000:07:00 || echo 0000:0a:00)
inject n2 --transport kernel --uid 0 -- "NVRM: Xid (PCI:$a_bus): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
await_verdict "$a"
await_verdict "$b"
note "A: $(jq -c '{domain, gpus: .affected_gpus, allocation}' "$run_dir/verdict-$a.json")"
note "B: $(jq -c '{domain, neighbours: [.neighbours[]?.summary], allocation}' "$run_dir/verdict-$b.json")"

expect_eq "$(verdict "$a" ".allocation.nodes.n2.gpu_indices | join(\",\")")" "$a_index" "job A's GPU index from its records"
expect_eq "$(verdict "$a" ".allocation.nodes.n2.gpus | join(\",\")")" "$a_bus.0" "job A's GPU from the driver's map"
expect_eq "$(verdict "$a" .domain)" GPU_HARDWARE "job A's domain"
expect_eq "$(verdict "$a" '.affected_gpus[0].pci')" "$a_bus.0" "job A's failed GPU"
expect_contains "$(sacct_field "$a" Comment)" "attrib: GPU_HARDWARE node=n2 gpu=$a_bus.0" "job A's sacct comment"

expect_eq "$(verdict "$b" ".allocation.nodes.n2.gpu_indices | join(\",\")")" "$b_index" "job B's GPU index"
[ "$(verdict "$b" .domain)" != GPU_HARDWARE ] || fail "job B blamed on job A's GPU: $(verdict "$b" .comment)"
expect_eq "$(verdict "$b" '[.neighbours[] | select(.event.kind == "gpu.xid") | .job] | join(",")')" "$a" \
  "job A's Xid as job B's neighbour"
expect_eq "$(verdict "$b" '.neighbours[] | select(.event.kind == "gpu.xid") | .why')" \
  "GPU $a_bus.0 on n2 was held by job $a, not this job" "why the Xid is not job B's"
case "$(sacct_field "$b" Comment)" in *GPU_HARDWARE*) fail "job B's comment blames a GPU: $(sacct_field "$b" Comment)" ;; esac
echo PASS
