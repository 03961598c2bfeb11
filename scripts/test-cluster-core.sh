#!/usr/bin/env bash
# The real-cluster core of the suite, on whatever Slurm this machine has: builds only what
# it needs, runs the Slurm adapter's and the SPANK module's unit tests, then the e2e
# scenarios that touch every Slurm API attrib uses on a real local cluster: the demo's
# Xid 79 job with its verdict in sacct, the user's Comment kept (and a forged segment
# replaced), the verdict in AdminComment, SPANK task records, node drain, requeued
# attempts, daemon down -> spool -> drained, the slurmdbd client (job and step rows,
# requeue rows, each comment field written and read back), and attrib-doctor's checks of
# slurmctld's configuration, healthy and broken. scripts/test.sh runs it
# in a Debian 13 root for Slurm 24.11 (scripts/in-debian13.sh); the Debian 12 build runs
# the same scenarios within the whole suite. Run as root.
#   scripts/test-cluster-core.sh [--build-only]   # --build-only: only compile what it runs
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTRIB_BUILD_DIR:-$src/build}
"$src/scripts/install-deps.sh"
source "$src/scripts/lib/runtime.sh"
preflight_runtime "$(attrib_runtime_dir "$build")"

unit_tests=(slurm/slurm_test spank/spank_unit_tests)
ATTRIB_BUILD_TARGETS="attributiond attrib-epilog attrib-epilog-send attrib-show attrib-replay spank_attrib
  slurmdbd_client_test slurm_test spank_unit_tests attrib-doctor" \
  "$src/scripts/build.sh"
[ "${1:-}" != --build-only ] || exit 0

slurm_version=$(dpkg-query -W -f='${Version}' libslurm-dev | cut -d- -f1)  # the headers built against
source "$src/scripts/lib/ctest-stage.sh"  # stages, stages_summary, run_ctest
trap 'stages_summary "attrib cluster core on Slurm $slurm_version" $?' EXIT

for test in "${unit_tests[@]}"; do
  "$build/tests/unit/$test" --gtest_brief=1
  stages+=(" unit $(basename "$test"): passed")
done
cd "$build"
scenarios="xid79_symptoms|user_comment_kept|admin_comment_field|spank_task_records|drain_node|requeue_attempts"
scenarios+="|daemon_down_spool|doctor"
run_ctest "e2e core" --output-on-failure --timeout 600 \
  -R "^(stage_runtime|cluster_up|cluster_down|slurmdbd_client_test|e2e_($scenarios))\$"
