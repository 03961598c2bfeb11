#!/usr/bin/env bash
# A real Slurm cluster (22.05 on Debian 12, 24.11 on Debian 13) on this one machine, for
# the end-to-end tests and the demo.
#
#   scripts/cluster.sh up     [BASE_DIR]   start munged, MariaDB, slurmdbd, slurmctld and
#                                          slurmd for nodes n1 n2 n3; wait until usable
#   scripts/cluster.sh down   [BASE_DIR]   stop everything by PID, in reverse order
#   scripts/cluster.sh status [BASE_DIR]   one line per daemon; exit 0 only if all run
#
# For the tests of what Slurm does to jobs when parts of the cluster fail:
#   scripts/cluster.sh node-kill  BASE_DIR NODE  SIGKILL the node's slurmd (a node that
#                                                 died: slurmctld marks it DOWN, NODE_FAIL)
#   scripts/cluster.sh node-start BASE_DIR NODE  start its slurmd again; wait until idle
#   scripts/cluster.sh ctld-lose-state BASE_DIR FIRST_JOB_ID
#                                          slurmctld restarted from nothing (its state
#                                          lost), numbering jobs from FIRST_JOB_ID again
#   scripts/cluster.sh dbd-stop  BASE_DIR      stop slurmdbd (accounting down: slurmctld
#                                          queues its records until it is back)
#   scripts/cluster.sh dbd-start BASE_DIR      start slurmdbd again; wait until it answers
#
# BASE_DIR defaults to /tmp/attrib-cluster. Every file lives under it (configuration,
# munge socket, MariaDB data, Slurm state, logs); nothing is read from or written to
# /etc/slurm, and the system's own munged/MariaDB (if any) are left alone. `up` always
# starts from a fresh state (new database, new StateSaveLocation) so job ids restart
# at 1 and no record of an earlier run can be confused with a new one.
#
# Optional environment for `up`:
#   ATTRIB_EPILOG_SLURMCTLD   path written as EpilogSlurmctld= (runs as user slurm, no PATH)
#   ATTRIB_JOBCOMP_SCRIPT     path written as JobCompType=jobcomp/script + JobCompLoc=
#   ATTRIB_PLUGSTACK          path written as PlugStackConfig= (default: an empty file)
#   ATTRIB_SLURM_CONF_EXTRA   extra slurm.conf lines, appended verbatim
#   ATTRIB_CLUSTER_CGROUP=v1  jobs confined by cgroup v1 (proctrack/task cgroup, memory
#                             enforced: a job past --mem ends OUT_OF_MEMORY); needs the
#                             v1 memory controller at /sys/fs/cgroup/memory
#   ATTRIB_CLUSTER_PORT_BASE  first of the ports used (default: derived from BASE_DIR so
#                             clusters under different base directories do not collide)
#
# After `up`, `source BASE_DIR/env.sh` points the Slurm commands at this cluster.
# Must run as root (slurmd, and daemons that drop to their own users).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/runtime.sh"

readonly NODES=(n1 n2 n3)
readonly CLUSTER_NAME=lab
readonly DB_NAME=slurm_acct_db
readonly DB_PASSWORD=attrib-test-only   # loopback-only database of a throw-away cluster

usage() {
  echo "usage: $0 {up|down|status} [BASE_DIR]" >&2
  echo "       $0 {node-kill|node-start} BASE_DIR NODE" >&2
  echo "       $0 ctld-lose-state BASE_DIR FIRST_JOB_ID" >&2
  echo "       $0 {dbd-stop|dbd-start} BASE_DIR" >&2
  exit 2
}

if [ $# -lt 1 ] || [ $# -gt 3 ]; then usage; fi
action=$1
base=$(realpath -m "${2:-/tmp/attrib-cluster}")
action_arg=${3:-}
case "$base" in
  / | /tmp | /usr* | /etc* | /var | /root | /home) echo "cluster.sh: refusing BASE_DIR $base" >&2; exit 2 ;;
esac

export SLURM_CONF=$base/etc/slurm.conf
pid_dir=$base/pids
log_dir=$base/log
# Start order; `down` walks it backwards.
daemons=(munged mariadbd slurmdbd slurmctld "${NODES[@]/#/slurmd-}")

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

# Ports: a block of 100 starting at port_base (below the kernel's ephemeral range).
if [ -n "${ATTRIB_CLUSTER_PORT_BASE:-}" ]; then
  port_base=$ATTRIB_CLUSTER_PORT_BASE
else
  port_base=$((10000 + ($(printf '%s' "$base" | cksum | cut -d' ' -f1) % 220) * 100))
fi
mysql_port=$((port_base + 6))
slurmctld_port=$((port_base + 17))
slurmdbd_port=$((port_base + 19))
node_port() { echo $((port_base + 21 + $1)); }   # $1 = node index from 0

# A throw-away accounting database: small files, no durability work.
mariadb_options=(--innodb-log-file-size=8M --innodb-buffer-pool-size=32M
  --skip-innodb-doublewrite --innodb-flush-log-at-trx-commit=0)

# --- process helpers -------------------------------------------------------------

# Prints running | zombie | stopped for a PID. Exited daemons whose parent does not
# reap them stay zombies, and `kill -0` still succeeds on those.
pid_state() {
  local stat
  stat=$(ps -o stat= -p "$1" 2>/dev/null | tr -d ' ') || true
  case "$stat" in
    "") echo stopped ;;
    Z*) echo zombie ;;
    *) echo running ;;
  esac
}

daemon_pid() { cat "$pid_dir/$1.pid" 2>/dev/null || true; }

daemon_state() {
  local pid
  pid=$(daemon_pid "$1")
  if [ -z "$pid" ]; then echo stopped; else pid_state "$pid"; fi
}

# start_daemon NAME COMMAND...: runs COMMAND in its own session with stdio on a log
# file (so no caller's pipe, e.g. CTest's, stays open) and records its PID. Every
# command here ends in an exec of the daemon itself, so $! is the daemon's PID.
start_daemon() {
  local name=$1
  shift
  (cd / && exec setsid "$@" </dev/null >"$log_dir/$name.out" 2>&1 9>&-) &
  echo $! >"$pid_dir/$name.pid"
}

# wait_for DESCRIPTION SECONDS COMMAND...: polls COMMAND every 0.1 s.
wait_for() {
  local what=$1 seconds=$2 deadline
  shift 2
  deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then
      echo "cluster.sh: timed out after ${seconds}s waiting for $what" >&2
      return 1
    fi
    sleep 0.1
  done
}

port_listening() { ss -Hltn "sport = :$1" | grep -q LISTEN; }

# All daemons still running? Catches one that died during start-up early.
check_alive() {
  local name
  for name in "$@"; do
    if [ "$(daemon_state "$name")" != running ]; then
      echo "cluster.sh: $name exited during start-up; last lines of its logs:" >&2
      tail -n 20 "$log_dir/$name.out" "$log_dir/$name.log" 2>/dev/null >&2 || true
      return 1
    fi
  done
}

# Phase timings for the summary line: where bring-up time goes.
phase_times=""
phase_started=
phase_done() {   # phase_done NAME: time since the previous phase ended
  local now=${EPOCHREALTIME/./}
  phase_times+=" $1=$(((now - phase_started) / 100000))ds"
  phase_started=$now
}

stop_pid() {   # stop_pid NAME PID: TERM, wait up to 15 s, then KILL
  local name=$1 pid=$2 i
  [ "$(pid_state "$pid")" = running ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 150; i++)); do
    [ "$(pid_state "$pid")" = running ] || return 0
    sleep 0.1
  done
  echo "cluster.sh: $name ($pid) ignored SIGTERM; sending SIGKILL" >&2
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    [ "$(pid_state "$pid")" = running ] || return 0
    sleep 0.1
  done
  die "$name ($pid) did not stop"
}

# Job step daemons (slurmstepd) outlive slurmd; find ours by the SLURM_CONF they inherit.
stop_leftover_stepds() {
  local pid
  for pid in $(pgrep -x slurmstepd || true); do
    if { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_CONF"; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

# --- actions -----------------------------------------------------------------------

cmd_status() {
  local name any_down=0 state
  for name in "${daemons[@]}"; do
    state=$(daemon_state "$name")
    printf '%-10s %-8s %s\n' "$name" "$state" "$(daemon_pid "$name")"
    [ "$state" = running ] || any_down=1
  done
  return $any_down
}

cmd_down() {
  local i name pid
  # Cancel what still runs while slurmctld is there to do it cleanly.
  if [ "$(daemon_state slurmctld)" = running ]; then
    local jobs=()
    mapfile -t jobs < <(timeout 5 squeue -h -o %A 2>/dev/null || true)
    [ ${#jobs[@]} -eq 0 ] || timeout 5 scancel --quiet "${jobs[@]}" >/dev/null 2>&1 || true
  fi
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do
    name=${daemons[$i]}
    pid=$(daemon_pid "$name")
    [ -n "$pid" ] || continue
    stop_pid "$name" "$pid"
    rm -f "$pid_dir/$name.pid"
  done
  stop_leftover_stepds
}

# How jobs are confined: by process tracking only (the default, works everywhere), or by
# cgroup v1 with memory enforced (ATTRIB_CLUSTER_CGROUP=v1; also writes cgroup.conf).
confinement() {
  if [ "${ATTRIB_CLUSTER_CGROUP:-}" = v1 ]; then
    printf '%s\n' ProctrackType=proctrack/cgroup TaskPlugin=task/cgroup SelectTypeParameters=CR_Core_Memory \
      DefMemPerNode=200
  else
    printf '%s\n' ProctrackType=proctrack/linuxproc TaskPlugin=task/none SelectTypeParameters=CR_Core
  fi
}

write_cgroup_conf() {
  [ "${ATTRIB_CLUSTER_CGROUP:-}" = v1 ] || return 0
  if [ ! -d /sys/fs/cgroup/memory ]; then
    echo "ATTRIB_CLUSTER_CGROUP=v1: no cgroup v1 memory controller at /sys/fs/cgroup/memory" >&2
    exit 1
  fi
  cat >"$base/etc/cgroup.conf" <<EOF
# Generated by scripts/cluster.sh (ATTRIB_CLUSTER_CGROUP=v1).
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainRAMSpace=yes
ConstrainSwapSpace=yes
EOF
}

# Two GPUs per node, as Slurm's GRES: device files Slurm only stats (each a character
# device like /dev/null, or a plain file where this machine cannot make one), so that jobs
# asking for --gres=gpu:N get SLURM_JOB_GPUS / SLURM_STEP_GPUS indices as on a GPU node
# (the shared-node scenarios: an Xid on a GPU only the neighbour held).
GPUS_PER_NODE=2
write_gres_conf() {
  local i
  install -d -m 755 "$base/dev"
  for ((i = 0; i < GPUS_PER_NODE; i++)); do
    mknod -m 666 "$base/dev/nvidia$i" c 1 3 2>/dev/null || : >"$base/dev/nvidia$i"
  done
  echo "Name=gpu File=$base/dev/nvidia[0-$((GPUS_PER_NODE - 1))]" >"$base/etc/gres.conf"
}

write_slurm_conf() {
  local host=$1 cpus=$2 i
  {
    cat <<EOF
# Generated by scripts/cluster.sh for a throw-away test cluster under $base.
ClusterName=$CLUSTER_NAME
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$slurmctld_port
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$base/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$base/state/slurmctld
SlurmdSpoolDir=$base/spool/%n
SlurmctldPidFile=$base/run/slurmctld.pid
SlurmdPidFile=$base/run/slurmd-%n.pid
SlurmctldLogFile=$log_dir/slurmctld.log
SlurmdLogFile=$log_dir/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MpiDefault=none
$(confinement)
SelectType=select/cons_tres
GresTypes=gpu
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$slurmdbd_port
# With slurmdbd this is not a password: it names the munged socket used for the
# connections to slurmdbd (AuthInfo above only covers the rest).
AccountingStoragePass=socket=$base/munge/munge.socket
AccountingStoreFlags=job_comment
PlugStackConfig=${ATTRIB_PLUGSTACK:-$base/etc/plugstack.conf}
ReturnToService=2
# Small timeouts: finished jobs leave slurmctld quickly, a dead slurmd is noticed
# within seconds (NODE_FAIL tests), and cancelled steps are killed promptly.
MinJobAge=5
KillWait=2
SlurmdTimeout=10
SlurmctldTimeout=10
MessageTimeout=5
InactiveLimit=0
Waittime=0
SchedulerType=sched/backfill
# Heterogeneous jobs are started only by the backfill pass (default every 30 s).
SchedulerParameters=bf_interval=1
# A job in partition "urgent" preempts jobs of "debug" (the default), which are requeued:
# the preemption tests. Nothing is submitted to "urgent" otherwise.
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
EOF
    if [ -n "${ATTRIB_EPILOG_SLURMCTLD:-}" ]; then
      echo "EpilogSlurmctld=$ATTRIB_EPILOG_SLURMCTLD"
    fi
    if [ -n "${ATTRIB_JOBCOMP_SCRIPT:-}" ]; then
      echo "JobCompType=jobcomp/script"
      echo "JobCompLoc=$ATTRIB_JOBCOMP_SCRIPT"
    fi
    for i in "${!NODES[@]}"; do
      echo "NodeName=${NODES[$i]} NodeHostname=$host NodeAddr=127.0.0.1 Port=$(node_port "$i") CPUs=$cpus RealMemory=1000 Gres=gpu:$GPUS_PER_NODE State=UNKNOWN"
    done
    echo "PartitionName=debug Nodes=$(IFS=,; echo "${NODES[*]}") Default=YES MaxTime=INFINITE State=UP PriorityTier=1"
    echo "PartitionName=urgent Nodes=$(IFS=,; echo "${NODES[*]}") MaxTime=INFINITE State=UP PriorityTier=2"
    if [ -n "${ATTRIB_SLURM_CONF_EXTRA:-}" ]; then
      printf '%s\n' "$ATTRIB_SLURM_CONF_EXTRA"
    fi
  } >"$base/etc/slurm.conf"
}

write_slurmdbd_conf() {
  cat >"$base/etc/slurmdbd.conf" <<EOF
# Generated by scripts/cluster.sh.
AuthType=auth/munge
AuthInfo=socket=$base/munge/munge.socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$slurmdbd_port
SlurmUser=slurm
DebugLevel=info
LogFile=$log_dir/slurmdbd.log
PidFile=$base/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$mysql_port
StorageUser=slurm
StoragePass=$DB_PASSWORD
StorageLoc=$DB_NAME
EOF
  # slurmdbd refuses a configuration file others can read (it holds the DB password).
  chown slurm:slurm "$base/etc/slurmdbd.conf"
  chmod 600 "$base/etc/slurmdbd.conf"
}

write_env_file() {
  cat >"$base/env.sh" <<EOF
# Source this file to use the attrib test cluster under $base.
export SLURM_CONF=$SLURM_CONF
export ATTRIB_CLUSTER_DIR=$base
export ATTRIB_CLUSTER_NAME=$CLUSTER_NAME
# This cluster's munged: attrib authenticates its RPCs with it (auth.munge_socket;
# attrib-show reads ATTRIB_MUNGE_SOCKET).
export ATTRIB_MUNGE_SOCKET=$base/munge/munge.socket
case ":\$PATH:" in *:/usr/sbin:*) ;; *) export PATH="\$PATH:/usr/sbin" ;; esac
EOF
}

# -i: ignore (absent) saved state; slurmctld registers the cluster with slurmdbd itself.
start_slurmctld() {
  start_daemon slurmctld slurmctld -D -i
  wait_for "slurmctld" 30 port_listening "$slurmctld_port" || { check_alive slurmctld; exit 1; }
}

# Each node in its own UTS namespace, so jobs see hostname n1, n2, n3.
start_slurmd() {
  install -d -m 755 "$base/spool/$1"
  start_daemon "slurmd-$1" unshare --uts sh -c "hostname $1 && exec slurmd -D -N $1"
}

known_node() {
  local name
  for name in "${NODES[@]}"; do [ "$name" = "$1" ] && return 0; done
  die "no node '$1' (nodes: ${NODES[*]})"
}

cmd_node_kill() {
  known_node "$action_arg"
  local pid
  pid=$(daemon_pid "slurmd-$action_arg")
  [ -n "$pid" ] || die "slurmd of $action_arg is not running"
  kill -KILL "$pid" 2>/dev/null || true
  wait_for "slurmd of $action_arg to exit" 10 pid_gone "$pid"
  rm -f "$pid_dir/slurmd-$action_arg.pid"
}

pid_gone() { [ "$(pid_state "$1")" != running ]; }
node_idle() { [ "$(sinfo -h -N -n "$1" -o %t | sort -u)" = idle ]; }

cmd_node_start() {
  known_node "$action_arg"
  [ "$(daemon_state "slurmd-$action_arg")" != running ] || die "slurmd of $action_arg is already running"
  start_slurmd "$action_arg"
  # ReturnToService=2: a DOWN node that registers again is usable without an admin.
  wait_for "$action_arg to be idle again" 60 node_idle "$action_arg" || { check_alive "slurmd-$action_arg"; exit 1; }
}

cmd_ctld_lose_state() {
  [[ "$action_arg" =~ ^[1-9][0-9]*$ ]] || die "FIRST_JOB_ID must be a job id, not '$action_arg'"
  local pid
  pid=$(daemon_pid slurmctld)
  [ -z "$pid" ] || stop_pid slurmctld "$pid"
  find "$base/state/slurmctld" -mindepth 1 -delete
  # FirstJobId is read only when there is no saved state; taken out again afterwards, as
  # an admin restoring from nothing would (the counter lives in the new state).
  echo "FirstJobId=$action_arg" >>"$SLURM_CONF"
  start_slurmctld
  sed -i '/^FirstJobId=/d' "$SLURM_CONF"
  wait_for "${#NODES[@]} idle nodes in sinfo" 60 three_nodes_idle || { check_alive "${daemons[@]}"; exit 1; }
}

cmd_dbd_stop() {
  local pid
  pid=$(daemon_pid slurmdbd)
  [ -n "$pid" ] || die "slurmdbd is not running"
  stop_pid slurmdbd "$pid"
  rm -f "$pid_dir/slurmdbd.pid"
}

cmd_dbd_start() {
  [ "$(daemon_state slurmdbd)" != running ] || die "slurmdbd is already running"
  start_daemon slurmdbd slurmdbd -D
  wait_for "slurmdbd" 30 port_listening "$slurmdbd_port" || { check_alive slurmdbd; exit 1; }
  wait_for "sacctmgr to list cluster $CLUSTER_NAME" 30 cluster_registered || { check_alive slurmdbd; exit 1; }
}

three_nodes_idle() {
  [ "$(sinfo -h -N -o '%N %t' | sort -u | grep -c ' idle$')" -eq ${#NODES[@]} ]
}

cluster_registered() {
  sacctmgr -n -P show cluster format=cluster | grep -qx "$CLUSTER_NAME"
}

cmd_up() {
  local host cpus i name port
  phase_started=${EPOCHREALTIME/./}
  local started=$phase_started
  [ "$(id -u)" -eq 0 ] || die "must run as root"
  for name in munged mariadbd mariadb-install-db slurmdbd slurmctld slurmd sinfo sacctmgr unshare setpriv ss; do
    PATH=$PATH:/usr/sbin:/sbin command -v "$name" >/dev/null || die "$name not found; run scripts/install-deps.sh"
  done
  export PATH=$PATH:/usr/sbin:/sbin

  # Replace whatever an earlier run left behind with a fresh cluster.
  cmd_down
  for port in $mysql_port $slurmctld_port $slurmdbd_port $(for i in "${!NODES[@]}"; do node_port "$i"; done); do
    ! port_listening "$port" || die "port $port is in use (set ATTRIB_CLUSTER_PORT_BASE)"
  done
  rm -rf "${base:?}"/{etc,munge,mysql,state,spool,run,log,pids,env.sh,dev}
  install -d -m 755 "$base" "$base/etc" "$base/run" "$base/spool" "$pid_dir"
  install -d -m 755 -o slurm -g slurm "$log_dir" "$base/state"
  install -d -m 700 -o slurm -g slurm "$base/state/slurmctld"
  install -d -m 755 -o munge -g munge "$base/munge"
  install -d -m 755 -o mysql -g mysql "$base/mysql"
  chmod 755 "$base/run" && chown slurm:slurm "$base/run"   # slurmdbd writes its pid file there

  # Preflight: munged, slurmdbd/slurmctld (SlurmUser) and the hooks run as other users;
  # a base directory (or hook) they cannot reach must fail here, naming path and user,
  # not as a daemon that never comes up.
  require_reachable munge -x "$base/munge" "munged's socket directory"
  require_reachable slurm -w "$log_dir" "the Slurm daemons' log directory"
  [ -z "${ATTRIB_EPILOG_SLURMCTLD:-}" ] || require_reachable slurm -x "$ATTRIB_EPILOG_SLURMCTLD" "EpilogSlurmctld"
  [ -z "${ATTRIB_JOBCOMP_SCRIPT:-}" ] || require_reachable slurm -x "$ATTRIB_JOBCOMP_SCRIPT" "JobCompLoc"

  host=$(hostname -s)
  cpus=$(nproc)
  [ "$cpus" -le 2 ] || cpus=2
  write_slurm_conf "$host" "$cpus"
  write_gres_conf
  write_cgroup_conf
  write_slurmdbd_conf
  [ -n "${ATTRIB_PLUGSTACK:-}" ] || : >"$base/etc/plugstack.conf"

  # munged, with its own socket so the system's munged (if any) is not involved.
  if [ ! -s /etc/munge/munge.key ]; then
    install -d -m 700 -o munge -g munge /etc/munge
    setpriv --reuid=munge --regid=munge --init-groups mungekey --create --keyfile=/etc/munge/munge.key
  fi
  start_daemon munged setpriv --reuid=munge --regid=munge --init-groups \
    munged --foreground --socket="$base/munge/munge.socket" --pid-file="$base/munge/munged.pid" \
    --log-file="$base/munge/munged.log" --seed-file="$base/munge/munged.seed"
  wait_for "munged" 10 test -S "$base/munge/munge.socket" || { check_alive munged; exit 1; }
  phase_done munged

  # MariaDB: private data directory, socket and loopback port; a fresh copy of a
  # pristine data directory made once per MariaDB version (saves ~2 s per bring-up).
  local template=$base/cache/mariadb-data version
  version=$(mariadbd --version)
  if [ "$(cat "$template.version" 2>/dev/null)" != "$version" ]; then
    rm -rf "$template" "$template.version"
    install -d -m 755 "$base/cache"
    mariadb-install-db --no-defaults --datadir="$template" --user=mysql "${mariadb_options[@]}" \
      --auth-root-authentication-method=socket --skip-test-db >"$log_dir/mariadb-install-db.out" 2>&1 \
      || { cat "$log_dir/mariadb-install-db.out" >&2; die "mariadb-install-db failed"; }
    echo "$version" >"$template.version"
  fi
  cp -a "$template" "$base/mysql/data"
  phase_done mariadb-datadir
  start_daemon mariadbd mariadbd --no-defaults --user=mysql --datadir="$base/mysql/data" "${mariadb_options[@]}" \
    --socket="$base/mysql/mysqld.sock" --pid-file="$base/mysql/mysqld.pid" \
    --port="$mysql_port" --bind-address=127.0.0.1 --skip-name-resolve \
    --log-error="$log_dir/mariadbd.log"
  wait_for "MariaDB" 30 mariadb --no-defaults --socket="$base/mysql/mysqld.sock" -u root -e 'SELECT 1' \
    || { check_alive mariadbd; exit 1; }
  mariadb --no-defaults --socket="$base/mysql/mysqld.sock" -u root <<EOF
CREATE DATABASE $DB_NAME;
CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
GRANT ALL ON $DB_NAME.* TO 'slurm'@'127.0.0.1';
EOF
  phase_done mariadbd

  start_daemon slurmdbd slurmdbd -D
  wait_for "slurmdbd" 30 port_listening "$slurmdbd_port" || { check_alive slurmdbd; exit 1; }
  phase_done slurmdbd

  start_slurmctld
  phase_done slurmctld

  for name in "${NODES[@]}"; do start_slurmd "$name"; done

  wait_for "${#NODES[@]} idle nodes in sinfo" 60 three_nodes_idle \
    || { check_alive "${daemons[@]}"; sinfo -N >&2; exit 1; }
  phase_done nodes-idle
  wait_for "sacctmgr to list cluster $CLUSTER_NAME" 30 cluster_registered \
    || { check_alive "${daemons[@]}"; exit 1; }
  check_alive "${daemons[@]}"
  phase_done sacctmgr

  write_env_file
  local total=$(((${EPOCHREALTIME/./} - started) / 100000))
  echo "cluster.sh: cluster '$CLUSTER_NAME' up under $base in $((total / 10)).$((total % 10))s (nodes: ${NODES[*]})"
  echo "cluster.sh: phases (ds = 0.1 s):$phase_times"
  echo "# to use it:"
  cat "$base/env.sh"
}

mkdir -p "$(dirname "$base")"
exec 9>>"$base.lock"
flock 9   # one action at a time per base directory

export PATH=$PATH:/usr/sbin:/sbin
case "$action" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  node-kill) cmd_node_kill ;;
  node-start) cmd_node_start ;;
  ctld-lose-state) cmd_ctld_lose_state ;;
  dbd-stop) cmd_dbd_stop ;;
  dbd-start) cmd_dbd_start ;;
  *) usage ;;
esac
