#!/usr/bin/env bash
# Stop the single-node test Slurm started by scripts/test-cluster/slurm-up.sh.
#
# Stops only the daemons whose PIDs slurm-up.sh recorded (slurmd, slurmctld, munged, in that order):
# TERM, wait up to SLURM_DOWN_TIMEOUT seconds (default 15), then KILL. Never stops anything by name.
# Idempotent and quiet when nothing runs. Configuration, packages and Slurm state are left in place.
#
# Environment:
#   SLURM_DOWN_TIMEOUT     seconds to wait after TERM before KILL (default 15)
#   DROVER_SLURM_STATE_DIR where slurm-up.sh recorded the PIDs (default /run/drover-test-cluster/slurm)
set -euo pipefail

STATE_DIR=${DROVER_SLURM_STATE_DIR:-/run/drover-test-cluster/slurm}
TIMEOUT=${SLURM_DOWN_TIMEOUT:-15}
[[ $TIMEOUT =~ ^[0-9]+$ ]] || { echo "slurm-down: SLURM_DOWN_TIMEOUT must be an integer" >&2; exit 1; }

[[ -d $STATE_DIR ]] || exit 0
exec 9>"$STATE_DIR/lock"
flock -w 900 9 || { echo "slurm-down: could not lock $STATE_DIR/lock" >&2; exit 1; }

T0=$(date +%s.%N)
proc_start() { awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$1/stat" 2>/dev/null; }
running() { local s; s=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) && [[ -n $s && $s != Z ]]; }

stopped=()
for name in slurmd slurmctld munged; do
  f=$STATE_DIR/$name.pid
  [[ -r $f ]] || continue
  pid='' st=''
  read -r pid st <"$f" || true
  if [[ $pid =~ ^[0-9]+$ ]] && [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "$name" ]] && running "$pid" &&
    [[ -z ${st:-} || "$(proc_start "$pid")" == "$st" ]]; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < TIMEOUT * 10; i++)); do
      running "$pid" || break
      sleep 0.1
    done
    if running "$pid"; then
      echo "slurm-down: $name (PID $pid) ignored TERM for ${TIMEOUT}s; sending KILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        running "$pid" || break
        sleep 0.1
      done
    fi
    stopped+=("$name=$pid")
  fi
  rm -f "$f"
done
rm -f "$STATE_DIR/slurmd.started" "$STATE_DIR/running.conf"

if ((${#stopped[@]})); then
  printf 'slurm-down: stopped %s in %ss\n' "${stopped[*]}" \
    "$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
fi
