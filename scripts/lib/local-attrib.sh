# Running attrib against the local cluster of scripts/cluster.sh: shared by the demo
# (scripts/demo.sh) and the end-to-end tests (tests/e2e/lib.sh). Source it after setting
#   ATTRIB_BUILD_DIR, ATTRIB_SOURCE_DIR, DAEMON_ADDR
# and sourcing the cluster's env.sh.

ATTRIBUTIOND=$ATTRIB_BUILD_DIR/attributiond/attributiond
ATTRIB_SHOW=$ATTRIB_BUILD_DIR/tools/attrib-show
ATTRIB_EPILOG=$ATTRIB_BUILD_DIR/epilog/attrib-epilog
JOURNAL_INJECT=$ATTRIB_SOURCE_DIR/scripts/journal-inject.sh

# attrib authenticates every RPC with the cluster's own munged (its env.sh exports the
# socket; older env.sh files lack it). Exported: attrib-show --server reads no config file
# and takes the socket from ATTRIB_MUNGE_SOCKET.
export ATTRIB_MUNGE_SOCKET=${ATTRIB_MUNGE_SOCKET:-${ATTRIB_CLUSTER_DIR:-/nonexistent}/munge/munge.socket}

# write_attrib_config DIR: a config for a head daemon whose state lives in DIR and that
# reads a central journal directory DIR/journal holding every node's entries.
write_attrib_config() {
  local dir=$1
  mkdir -p "$dir/journal" "$dir/spool"
  chown slurm: "$dir/spool"   # the epilog runs as SlurmUser
  cat > "$dir/attrib.yaml" <<YAML
cluster: lab
head:
  listen: ["$DAEMON_ADDR"]
  database: $dir/attrib.db
  spool_dir: $dir/spool
  spool_scan_interval_s: 1
  workers: 2
  scope_poll_interval_ms: 500
  retry_backoff_s: 1
  allow_opt_out: true
  # The demo and each e2e scenario judge their own jobs; the sweep of slurmdbd would also
  # pick up those that ran before on the shared cluster (sweep_missed_hook turns it on).
  sweep: false
  # The journal directory holds only this run's evidence; a short lead keeps the window
  # to the job itself.
  window_lead_s: 0
  window_grace_s: 2
epilog:
  server: "$DAEMON_ADDR"
  deadline_ms: 1000
  spool_dir: $dir/spool
auth:
  mode: munge
  munge_socket: $ATTRIB_MUNGE_SOCKET
  slurm_user: slurm
rules:
  pack_dir: ${ATTRIB_RULES_PACK_DIR:-$ATTRIB_SOURCE_DIR/rules/pack}
collectors:
  - kind: journald
    options:
      directory: $dir/journal
      match_hostname: true
      app_identifiers: [python3]
  - kind: slurm_accounting
  - kind: app_output
YAML
  # Task records of spank_attrib.so, when the cluster loads it (the e2e cluster does:
  # tests/e2e/CMakeLists.txt sets ATTRIB_TASK_RECORDS_DIR, "{node}" = node name).
  # Appended: collectors is the last key of the file.
  if [ -n "${ATTRIB_TASK_RECORDS_DIR:-}" ]; then
    cat >> "$dir/attrib.yaml" <<YAML
  - kind: spank_records
    options:
      directory: "$ATTRIB_TASK_RECORDS_DIR"
  - kind: flight_recorder
    options:
      directory: "$ATTRIB_TASK_RECORDS_DIR"
YAML
  fi
}

# seed_journal DIR [HOST...]: each node's journal (default n1 n2 n3) begins with its boot, an hour ago, as a real
# node's journal would; without history the collector rightly reports `partial`.
seed_journal() {
  local dir=$1 host hosts
  shift
  hosts=("$@")
  [ ${#hosts[@]} -gt 0 ] || hosts=(n1 n2 n3)
  for host in "${hosts[@]}"; do
    "$JOURNAL_INJECT" --dir "$dir/journal" --host "$host" --transport kernel --uid 0 \
      --time-us $(( ($(date +%s) - 3600) * 1000000 )) -- \
      "Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0) #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)" \
      >/dev/null
  done
}

# start_attributiond DIR: starts the daemon in the background (PID in $daemon_pid) and
# waits until it answers.
start_attributiond() {
  local dir=$1
  "$ATTRIBUTIOND" --config "$dir/attrib.yaml" >> "$dir/attributiond.log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 100); do
    # attrib-show exits 2 for an unknown job: capture first, pipefail would hide the match.
    local answer
    answer=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" no-such-job 2>&1 || true)
    [[ "$answer" == *"unknown job"* ]] && return 0
    if ! kill -0 "$daemon_pid" 2>/dev/null; then
      echo "attributiond exited at start:" >&2; tail -n 20 "$dir/attributiond.log" >&2; return 1
    fi
    sleep 0.1
  done
  echo "attributiond did not come up" >&2
  return 1
}

stop_attributiond() {
  if [ -n "${daemon_pid:-}" ] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -TERM "$daemon_pid"
    wait "$daemon_pid" 2>/dev/null || true
  fi
  daemon_pid=
}

submit() { sbatch --parsable --output=/dev/null "$@" | cut -d';' -f1; }

# wait_job_state JOBID STATE: squeue's view, for timing evidence inside the job.
wait_job_state() {
  for _ in $(seq 300); do
    [ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = "$2" ] && return 0
    sleep 0.1
  done
  echo "job $1 never reached $2" >&2
  return 1
}

# inject_journal DIR HOST [journal-inject options] -- MESSAGE...: real journal entries, now.
inject_journal() {
  local dir=$1 host=$2
  shift 2
  "$JOURNAL_INJECT" --dir "$dir/journal" --host "$host" --time-us now "$@" >/dev/null
}

# wait_verdict JOBID OUT_JSON: until the verdict is archived, written to the job's
# Comment (ATTRIB_COMMENT_FIELD: the head.comment_field in use) and the daemon has
# finished the job.
wait_verdict() {
  local shown
  for _ in $(seq 600); do
    shown=$("$ATTRIB_SHOW" --server "$DAEMON_ADDR" "$1" 2>/dev/null || true)
    if [[ -n "$shown" && "$shown" != *"not yet written to Slurm"* ]] &&
       "$ATTRIB_SHOW" --server "$DAEMON_ADDR" --json "$1" > "$2" 2>/dev/null &&
       [[ "$(sacct -n -X -j "$1" -o "${ATTRIB_COMMENT_FIELD:-Comment}%1000")" == *"attrib:"* ]]; then
      return 0
    fi
    sleep 0.1
  done
  echo "no verdict for job $1 within 60 s" >&2
  return 1
}

XID79_LINES=(
  "NVRM: GPU at PCI:0000:3b:00: GPU-660d987e-5b28-3bf6-2a2d-1d5ecae7f6df"
  "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
)
NCCL_TIMEOUT_LINE="[rank0]:[E1130 10:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out."

# write_node_agents DIR [FIRST_PORT]: one node agent per node (attributiond --role node),
# each reading only its own journal directory DIR/agent-<node>/journal, and a head config
# that asks the agents instead of reading logs itself.
write_node_agents() {
  local dir=$1 port=${2:-7271} host addresses=""
  for host in n1 n2 n3; do
    mkdir -p "$dir/agent-$host/journal"
    cat > "$dir/agent-$host/attrib.yaml" <<YAML
cluster: lab
node:
  name: $host
  listen: ["127.0.0.1:$port"]
auth:
  mode: munge
  munge_socket: $ATTRIB_MUNGE_SOCKET
  slurm_user: slurm
rules:
  pack_dir: ${ATTRIB_RULES_PACK_DIR:-$ATTRIB_SOURCE_DIR/rules/pack}
collectors:
  - kind: journald
    options:
      directory: $dir/agent-$host/journal
      match_hostname: false
      app_identifiers: [python3]
YAML
    addresses+="${addresses:+, }$host: \"127.0.0.1:$port\""
    port=$((port + 1))
  done
  # The head keeps its own settings but reads no logs: agents only.
  sed -i -e "/^head:\$/a\\  agents: {addresses: {$addresses}, deadline_ms: 3000}" -e '/^collectors:/,$d' "$dir/attrib.yaml"
  echo "collectors: []" >> "$dir/attrib.yaml"
}

# start_node_agent DIR NODE: PID in agent_pids[NODE].
declare -A agent_pids=()
start_node_agent() {
  local dir=$1 host=$2 answer
  "$ATTRIBUTIOND" --role node --config "$dir/agent-$host/attrib.yaml" >> "$dir/agent-$host/agent.log" 2>&1 &
  agent_pids[$host]=$!
  for _ in $(seq 100); do
    answer=$(grep -c "listening on" "$dir/agent-$host/agent.log" 2>/dev/null || true)
    [ "${answer:-0}" -gt 0 ] && return 0
    kill -0 "${agent_pids[$host]}" 2>/dev/null || { tail -n 20 "$dir/agent-$host/agent.log" >&2; return 1; }
    sleep 0.1
  done
  return 1
}

stop_node_agent() {
  local host=$1
  if [ -n "${agent_pids[$host]:-}" ] && kill -0 "${agent_pids[$host]}" 2>/dev/null; then
    kill -TERM "${agent_pids[$host]}"
    wait "${agent_pids[$host]}" 2>/dev/null || true
  fi
  unset "agent_pids[$host]"
}
