#!/usr/bin/env bash
# A private one-node Slurm cluster for tests and benchmarks, on loopback, in one folder.
#
#   scripts/slurm-test-env.sh up DIR     install slurm-wlm and munge if missing, write DIR/slurm.conf,
#                                        start munged, slurmctld and slurmd; prints SLURM_CONF=...
#   scripts/slurm-test-env.sh down DIR   stop the daemons started by `up` (by the pids in DIR), wait
#                                        for them to be gone
#
# Everything lives in DIR: configs, munge key and socket, state, spool, logs and pid files. The
# machine's own /etc/slurm and /etc/munge are never touched, so this can run beside a real Slurm
# installation, and two runs with different DIRs do not meet (the ports are picked free at setup).
# Callers point the Slurm clients at the cluster with SLURM_CONF=DIR/slurm.conf.
#
# Exit status of `up`: 0 ready; 3 Slurm can't be installed here; 4 a daemon didn't start or the node
# never became usable (the last log lines say why). `up` failing still leaves nothing running.
set -uo pipefail

cmd=${1:-}
dir=${2:-}
if [[ -z "$cmd" || -z "$dir" ]]; then
  echo "usage: $0 up|down DIR" >&2
  exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

log() { echo "slurm-test-env: $*" >&2; }

# Stops the daemons this script started in $dir: pids from our own pid files only, never by name.
down() {
  local pf pid
  # Jobs first, while slurmctld and slurmd still run: a job step (slurmstepd and the batch script)
  # outlives a stopped slurmd, so cancel every job of this private cluster and wait for them to go.
  if [[ -s "$dir/slurmctld.pid" && -f "$dir/slurm.conf" ]]; then
    export SLURM_CONF="$dir/slurm.conf"
    scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 150); do
      [[ -z "$(squeue -h -o %i -t all 2>/dev/null | head -1)" ]] && break
      [[ -z "$(squeue -h -o %i 2>/dev/null | head -1)" ]] && break
      sleep 0.1
    done
  fi
  for pf in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
    [[ -s "$pf" ]] || continue
    pid=$(cat "$pf")
    [[ "$pid" =~ ^[0-9]+$ ]] || continue
    kill -TERM "$pid" 2>/dev/null || { rm -f "$pf"; continue; }
    # Wait (bounded) for the process to go, then insist.
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$pf"
  done
  return 0
}

if [[ "$cmd" == "down" ]]; then
  down
  exit 0
fi
if [[ "$cmd" != "up" ]]; then
  echo "usage: $0 up|down DIR" >&2
  exit 2
fi

# 1. Packages (Debian's slurm-wlm 22.05 and munge), only when missing.
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null ||
   ! command -v munged >/dev/null; then
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    log "slurm-wlm/munge are not installed and this is not root on Debian: can't install them"
    exit 3
  fi
  log "installing slurm-wlm and munge"
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get install -y -qq --no-install-recommends slurm-wlm munge >"$dir/apt.log" 2>&1 ||
         { apt-get update -qq >>"$dir/apt.log" 2>&1 &&
           apt-get install -y -qq --no-install-recommends slurm-wlm munge >>"$dir/apt.log" 2>&1; }; }; then
    log "apt-get install slurm-wlm munge failed:"
    tail -5 "$dir/apt.log" >&2
    exit 3
  fi
fi

fail() {
  log "$1"
  for f in munged.log slurmctld.log slurmd.log; do
    [[ -s "$dir/$f" ]] && { echo "--- $f (tail)" >&2; tail -15 "$dir/$f" >&2; }
  done
  down
  exit 4
}

# Free TCP ports for slurmctld and slurmd (Slurm needs numbers, not port 0). They are drawn outside
# the kernel's ephemeral range (ip_local_port_range), which is where every bind to port 0 and every
# outgoing connection gets its port: a test binding port 0 beside this one (the rule for all of ours)
# can never be handed a port picked here between the pick and slurmd's bind. Each is checked free by
# binding it on every address, as Slurm's daemons do.
read -r ctld_port slurmd_port < <(python3 - <<'EOF'
import random, socket
lo, hi = map(int, open('/proc/sys/net/ipv4/ip_local_port_range').read().split())
ranges = [r for r in (range(10000, lo), range(hi + 1, 65536)) if len(r) > 0]
picked, tries = [], 0
while len(picked) < 2 and tries < 1000:
    tries += 1
    p = random.choice(random.choice(ranges))
    if p in picked:
        continue
    s = socket.socket()
    try:
        s.bind(("", p))
        picked.append(p)
    except OSError:
        pass
    finally:
        s.close()
print(*picked)
EOF
)
[[ -n "${slurmd_port:-}" ]] || fail "could not pick free ports"

host=$(hostname -s)
cpus=$(nproc)
# RealMemory in MB, a little below the total so slurmd's own check never finds less than declared.
mem_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
gpus=${SLURM_TEST_GPUS:-2}  # counted GRES only (no device files): lets --gres=gpu:N be scheduled for real
user=$(id -un)

mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"

# 2. munge with a private key and socket.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1 count=1024 status=none
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" \
  || fail "munged did not start"

cat >"$dir/slurm.conf" <<EOF
# One-node test cluster written by scripts/slurm-test-env.sh (loopback only).
ClusterName=gauntlet-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups in a test sandbox: track processes by parent pid, bind no CPUs.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=30
MaxArraySize=10001
MaxJobCount=20000
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb Gres=gpu:$gpus Feature=gauntlet-test State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
# Extra slurm.conf lines from the caller (the benchmark tries throughput settings this way).
[[ -n "${SLURM_TEST_EXTRA_CONF:-}" ]] && printf '%s\n' "$SLURM_TEST_EXTRA_CONF" >>"$dir/slurm.conf"
# slurmd drops a GPU GRES without a device file, so each counted GPU gets a character device node
# in $dir with /dev/null's numbers (1:3): schedulable, and harmless if a job opens it.
for ((i = 0; i < gpus; i++)); do
  rm -f "$dir/fakegpu$i"
  mknod "$dir/fakegpu$i" c 1 3 || fail "mknod $dir/fakegpu$i failed (needs root)"
done
cat >"$dir/gres.conf" <<EOF
NodeName=$host Name=gpu File=$dir/fakegpu[0-$((gpus - 1))]
EOF
# cgroup.conf keeps slurmd from probing cgroup mounts it does not use.
cat >"$dir/cgroup.conf" <<EOF
CgroupPlugin=autodetect
IgnoreSystemd=yes
EOF

export SLURM_CONF="$dir/slurm.conf"

# 3. slurmctld (clean state: -c), then slurmd for this host.
slurmctld -c -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N "$host" || fail "slurmd did not start"

# 4. Wait (bounded) for the node to be usable: scontrol answers and the node is idle.
state=""
for _ in $(seq 300); do
  state=$(sinfo -h -N -n "$host" -o '%T' 2>/dev/null | head -1)
  # idle: ready. inval: slurmctld rejected the node's registration, which no wait will change.
  [[ "$state" == idle* || "$state" == inval* ]] && break
  sleep 0.1
done
[[ "$state" == idle* ]] || fail "node $host did not become idle (state: '${state:-no answer from slurmctld}')"

log "ready: $host, $cpus CPUs, ${mem_mb} MB, gpu:$gpus, slurmctld :$ctld_port, slurmd :$slurmd_port"
echo "SLURM_CONF=$SLURM_CONF"
