#!/usr/bin/env bash
# CTest fixture stage_runtime: the end-to-end suite's runtime directory (outside the
# checkout, reachable by every user the cluster runs things as): the staged hook, SPANK
# module and attrib-show, the EpilogSlurmctld wrapper and the plugstack file; then the
# preflight, so a runtime the users cannot reach fails here, naming path and user, rather
# than as a cluster that never comes up.
#   stage-runtime.sh BUILD_DIR RUNTIME_DIR TASK_SPOOL
set -euo pipefail
build=$1 runtime=$2 task_spool=$3
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/runtime.sh"

install -d -m 755 "$runtime"
stage_binaries "$build" "$runtime/bin"
# EpilogSlurmctld takes no arguments: the wrapper points attrib-epilog at the config of
# whichever scenario is running (tests/e2e/lib.sh links `current` to it).
cat > "$runtime/attrib-epilog-hook" <<HOOK
#!/bin/sh
exec $runtime/bin/attrib-epilog --config $runtime/current/attrib.yaml
HOOK
chmod 755 "$runtime/attrib-epilog-hook"
# The SPANK plugin is loaded for every scenario (it must never hurt a job). Its spool lives
# under the cluster's spool/, which cluster.sh wipes on `up`, so job ids reused by a fresh
# cluster never meet stale records. allow_opt_out=yes so --attrib=off is testable.
echo "optional $runtime/bin/spank_attrib.so spool_dir=$task_spool allow_opt_out=yes" > "$runtime/plugstack.conf"
chmod 644 "$runtime/plugstack.conf"

require_reachable slurm -x "$runtime/attrib-epilog-hook" "the EpilogSlurmctld hook slurmctld runs"
require_reachable slurm -x "$runtime/bin/attrib-epilog" "the hook's binary"
require_reachable nobody -x "$runtime/bin/attrib-show" "attrib-show, run by ordinary users"
require_reachable munge -x "$runtime" "the cluster's directory, where munged makes its socket"
setpriv --reuid=slurm --regid="$(id -g slurm)" --clear-groups "$runtime/bin/attrib-epilog" --help >/dev/null ||
  { echo "preflight: slurm cannot run $runtime/bin/attrib-epilog (is /tmp mounted noexec?)" >&2; exit 1; }
echo "runtime staged in $runtime"
