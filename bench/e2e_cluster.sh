# Sourced by the benchmarks on the real cluster (e2e_sacct_latency.sh, e2e_array_burst.sh):
# bring_up_cluster NAME brings up a scripts/cluster.sh cluster under $build/bench-e2e-cluster
# with the real attrib-epilog as EpilogSlurmctld, its work directory $work
# ($build/bench-e2e-NAME), the e2e suite's attributiond config in $run (not started), and
# tears it all down at exit. Needs $build and $source_dir; runs as root.
bring_up_cluster() {
  [ "$(id -u)" -eq 0 ] || { echo "$1: run as root (slurmd)" >&2; exit 2; }
  # A cluster just torn down (a previous benchmark's) may take a moment to go.
  for _ in $(seq 100); do pgrep -x slurmctld >/dev/null || break; sleep 0.1; done
  if pgrep -x slurmctld >/dev/null; then
    echo "$1: another slurmctld is running (pgrep -a slurmctld); not starting a second cluster" >&2
    exit 3
  fi
  cluster_dir=$build/bench-e2e-cluster
  work=$build/bench-e2e-$1
  rm -rf "$work"
  mkdir -p "$work"
  chmod 755 "$work"
  # EpilogSlurmctld takes no arguments: a wrapper pointing attrib-epilog at this run's config.
  printf '#!/bin/sh\nexec %s --config %s\n' "$build/epilog/attrib-epilog" "$work/run/attrib.yaml" > "$work/attrib-epilog-hook"
  chmod 755 "$work/attrib-epilog-hook"
  export ATTRIB_BUILD_DIR=$build ATTRIB_SOURCE_DIR=$source_dir
  daemon_pid=
  trap tear_down_cluster EXIT
  ATTRIB_EPILOG_SLURMCTLD=$work/attrib-epilog-hook "$source_dir/scripts/cluster.sh" up "$cluster_dir" >"$work/cluster-up.log" 2>&1 ||
    { tail -n 30 "$work/cluster-up.log" >&2; exit 1; }
  source "$cluster_dir/env.sh"
  DAEMON_ADDR=127.0.0.1:7189
  source "$source_dir/scripts/lib/local-attrib.sh"
  run=$work/run
  write_attrib_config "$run"
  seed_journal "$run"
  printf 'machine: %s cores (nproc), cpu "%s"\n' "$(nproc)" "$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
}

tear_down_cluster() {
  if [ -n "${daemon_pid:-}" ]; then kill -TERM "$daemon_pid" 2>/dev/null || true; wait "$daemon_pid" 2>/dev/null || true; fi
  "$source_dir/scripts/cluster.sh" down "$cluster_dir" >/dev/null 2>&1 || true
}
