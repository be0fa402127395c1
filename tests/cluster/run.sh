#!/usr/bin/env bash
# `make test-cluster`: bring up a single-node SLURM on this machine, submit the demo workflow
# through profiles/slurm, check every output and that the jobs went through sbatch, and tear
# the cluster down again (only the daemons this script started, by PID; only the files it
# wrote outside the project). Needs root and the Debian packages slurmctld, slurmd,
# slurm-client and munge (installed when missing and apt works). Exit status 77: it cannot
# run on this machine (not root, no packages, a SLURM set-up of the machine's own).
#
# Facts this rests on (Debian 12, Slurm 22.05): no daemon starts on install; Slurm 22.05
# authenticates with munge; without slurmdbd `sacct` fails, so job status comes from squeue
# (--slurm-status-command squeue) and MinJobAge must keep a finished job visible to it until
# the next check: at least three times --slurm-init-seconds-before-status-checks, and, as the
# plugin backs off by 10 s per check without a finished job up to 180 s, here 600 s (with 30 s
# a long group job's end was missed and the run waited forever); the job-step plugin drops SLURM_CONF before its inner srun,
# so the config must be at /etc/slurm/slurm.conf; no slurm_account without slurmdbd.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV_BIN=${VENV_BIN:-$ROOT/.venv/bin}
WORK=$ROOT/.test/cluster
CONF_DIR=/etc/slurm
TIMEOUT=${TIMEOUT:-1800}
say() { echo "test-cluster: $*"; }

if [ "$(id -u)" != 0 ]; then
  say "needs root (it starts munged, slurmctld and slurmd); run it as root, e.g. in a container"
  exit 77
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null \
   || ! command -v munged >/dev/null; then
  say "installing slurmctld slurmd slurm-client munge"
  if ! { timeout 600 apt-get update -q >/dev/null &&
         DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -q slurmctld slurmd slurm-client munge >/dev/null; }
  then
    say "cannot install the SLURM packages here (apt-get failed); install slurmctld slurmd slurm-client munge"
    exit 77
  fi
fi
for f in slurm.conf gres.conf; do
  if [ -e "$CONF_DIR/$f" ]; then
    say "$CONF_DIR/$f exists: this machine has a SLURM set-up of its own, which this test does not touch;"
    say "submit with profiles/slurm to that cluster instead"
    exit 77
  fi
done

HOST=$(hostname -s)
T=$(mktemp -d /tmp/plmfair-slurm.XXXXXX)
chmod 0711 "$T"  # munge clients need to reach the socket inside
WROTE_CONF=()
cleanup() {
  local rc=$?
  for daemon in slurmd slurmctld munged; do
    if [ -s "$T/$daemon.pid" ]; then
      pid=$(cat "$T/$daemon.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  for f in "${WROTE_CONF[@]}"; do rm -f "$f"; done
  rmdir "$CONF_DIR" 2>/dev/null || true
  if [ $rc -ne 0 ]; then
    for log in slurmctld slurmd munged; do
      [ -f "$T/$log.log" ] && { echo "--- $log.log (last lines)"; tail -n 20 "$T/$log.log"; }
    done
  fi
  rm -rf "$T"
  exit $rc
}
trap cleanup EXIT

# munge, with its own key and socket
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 status=none
chmod 0400 "$T/munge.key"
munged --force --key-file="$T/munge.key" --socket="$T/munge.socket" --pid-file="$T/munged.pid" \
  --log-file="$T/munged.log" --seed-file="$T/munged.seed"

# a node that advertises one GPU (/dev/null as its device file), so that the scoring jobs'
# --gpus=1 is scheduled as on a GPU cluster; the jobs themselves find no CUDA and use the CPU
mkdir -p "$CONF_DIR" "$T/state" "$T/spool"
cat > "$CONF_DIR/slurm.conf" <<CONF
# written by plmfair tests/cluster/run.sh; removed when the test ends
ClusterName=plmfairtest
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge.socket
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
GresTypes=gpu
NodeName=$HOST CPUs=16 RealMemory=64000 Gres=gpu:1 State=UNKNOWN
PartitionName=plmfair Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
WROTE_CONF+=("$CONF_DIR/slurm.conf")
cat > "$CONF_DIR/gres.conf" <<CONF
# written by plmfair tests/cluster/run.sh; removed when the test ends
AutoDetect=off
NodeName=$HOST Name=gpu File=/dev/null Count=1
CONF
WROTE_CONF+=("$CONF_DIR/gres.conf")

timeout 60 slurmctld -c
timeout 60 slurmd
for _ in $(seq 60); do
  state=$(timeout 10 sinfo -h -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || { say "the node did not come up (state: ${state:-none})"; exit 1; }
say "single-node SLURM up on $HOST"

rm -rf "$WORK"
mkdir -p "$WORK"
SMK=("$VENV_BIN/snakemake" --snakefile "$ROOT/Snakefile" --directory "$WORK"
     --configfile "$ROOT/.test/config/config.yaml"
     --workflow-profile "$ROOT/profiles/slurm"
     --default-resources slurm_partition=plmfair
     --slurm-status-command squeue --slurm-init-seconds-before-status-checks 2
     # the node advertises 16 CPUs for the rules' cpus_per_gpu; tiny models get one thread each
     --max-threads 1
     --slurm-keep-successful-logs --jobs 8 --config "mirror=$ROOT/.test/data")
start=$(date +%s)
if ! timeout "$TIMEOUT" "${SMK[@]}" > "$WORK/snakemake.log" 2>&1; then
  tail -n 60 "$WORK/snakemake.log"
  say "FAILED: the workflow did not finish through SLURM (log: $WORK/snakemake.log)"
  exit 1
fi
say "workflow finished through SLURM in $(( $(date +%s) - start )) s"

# every output is there and up to date
if ! timeout 300 "${SMK[@]}" --dry-run > "$WORK/dry-run.log" 2>&1 || ! grep -q "Nothing to be done" "$WORK/dry-run.log"; then
  tail -n 40 "$WORK/dry-run.log"
  say "FAILED: outputs missing or out of date after the run"
  exit 1
fi
"$VENV_BIN/python" "$ROOT/tests/cluster/check_run.py" --work "$WORK" --log "$WORK/snakemake.log" \
  --config "$ROOT/.test/config/config.yaml"
say "passed"
