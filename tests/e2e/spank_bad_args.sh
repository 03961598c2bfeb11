#!/usr/bin/env bash
# A plugstack line with an unknown argument: every slurmd logs one clear error, the
# plugin goes inert, and jobs still run (and still accept the plugin's options).
# Runs a second cluster in its own base directory next to the e2e cluster.
source "$(dirname "$0")/lib.sh"
: "${ATTRIB_SPANK_PLUGIN:?}"
base=$ATTRIB_E2E_DIR/bad-plugstack-cluster
mkdir -p "$base"
bad_spool=$base/tasks
cat > "$base.plugstack.conf" <<CONF
optional $ATTRIB_SPANK_PLUGIN spool_dir=$bad_spool/%n colour=blue
CONF
cleanup() { "$ATTRIB_SOURCE_DIR/scripts/cluster.sh" down "$base" >/dev/null 2>&1 || true; }
trap cleanup EXIT
ATTRIB_PLUGSTACK=$base.plugstack.conf "$ATTRIB_SOURCE_DIR/scripts/cluster.sh" up "$base" >/dev/null \
  || fail "second cluster did not come up"
(
  source "$base/env.sh"
  out=$base/job.out
  job=$(sbatch --wait --parsable -N3 -n3 --attrib-evidence --output="$out" \
    --wrap 'srun bash -c "echo rank \$SLURM_PROCID \${ATTRIB_RANK:-none} \${NCCL_DEBUG:-none}"' | cut -d';' -f1) \
    || fail "job refused or failed with a bad plugstack"
  expect_eq "$(sacct -n -X -P -j "$job" -o State)" COMPLETED "job state"
  expect_eq "$(sort "$out" | tr '\n' ' ')" "rank 0 none none rank 1 none none rank 2 none none " "inert plugin: no env"
  for node in n1 n2 n3; do
    log=$base/log/slurmd-$node.log
    expect_eq "$(grep -c "error: attrib: plugstack argument 'colour=blue': unknown key 'colour'" "$log")" 1 \
      "one error in $node's slurmd log"
    expect_contains "$(grep "attrib: plugstack" "$log")" "the plugin is inert, jobs are not affected" "error text"
  done
  [ ! -e "$bad_spool" ] || fail "an inert plugin wrote $bad_spool"
) || exit 1
echo PASS
