#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for the soak's Slurm path and its test
# (docs/verification.md, "The soak on a Slurm cluster"): munged, slurmctld and slurmd from
# Debian's packages, every file (key, sockets, state, logs, slurm.conf) under DIR, free TCP ports,
# the daemons run as the calling user. Nothing under /etc is read or written.
#
#   scripts/slurm_cluster.sh start DIR   # prints the line to eval: export SLURM_CONF=DIR/slurm.conf
#   scripts/slurm_cluster.sh stop DIR
#
# start waits until the node is idle and fails, with the daemons' logs, when it does not get there.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)
conf="$dir/slurm.conf"

stop_cluster() {
  # slurmd and slurmctld first (they hold munge credentials), then munged. The pids are read
  # before the signals: a daemon removes its pid file before it has exited.
  local pids=()
  for pid_file in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    if [[ -s $pid_file ]]; then
      pids+=("$(cat "$pid_file")")
      kill "${pids[-1]}" 2>/dev/null || true
    fi
  done
  for _ in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null && alive=1
    done
    [[ $alive -eq 0 ]] && return 0
    sleep 0.1
  done
  echo "slurm_cluster: daemons in $dir still running after 10 s: ${pids[*]}" >&2
  return 1
}

show_logs() {
  for log in "$dir"/log/*.log; do
    [[ -f $log ]] || continue
    echo "--- $log" >&2
    tail -n 15 "$log" >&2
  done
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_cluster() {
  for tool in munged slurmctld slurmd sinfo; do
    command -v "$tool" >/dev/null 2>&1 ||
      { echo "slurm_cluster: $tool not found (scripts/setup.sh installs Slurm and munge)" >&2; exit 1; }
  done
  stop_cluster || true
  rm -rf "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
  # munged refuses a key directory that others can write, and a socket directory others cannot
  # enter.
  mkdir -p "$dir/munge/key" "$dir/state" "$dir/spool" "$dir/log"
  chmod 700 "$dir/munge/key"
  chmod 755 "$dir/munge"
  head -c 1024 /dev/urandom > "$dir/munge/key/munge.key"
  chmod 400 "$dir/munge/key/munge.key"
  local socket="$dir/munge/munge.socket"
  munged --force --key-file="$dir/munge/key/munge.key" --socket="$socket" \
         --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
         --log-file="$dir/log/munged.log"

  local user
  user=$(id -un)
  cat > "$conf" <<EOF
# Written by scripts/slurm_cluster.sh: one node, this machine, every path under $dir.
ClusterName=nmsa
SlurmctldHost=localhost
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
# Pending array tasks are scheduled every second, not every minute (the default): a soak is
# many short tasks.
SchedulerParameters=sched_interval=1
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=soak Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  slurmctld -f "$conf"
  slurmd -f "$conf" -N localhost
  for _ in $(seq 100); do
    if SLURM_CONF=$conf sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle; then
      echo "export SLURM_CONF=$conf"
      return 0
    fi
    sleep 0.2
  done
  echo "slurm_cluster: the node in $conf did not become idle within 20 s" >&2
  show_logs
  stop_cluster || true
  exit 1
}

case "$action" in
  start) start_cluster ;;
  stop)  stop_cluster ;;
  *)     usage ;;
esac
