#!/usr/bin/env bash
# Stop the single-node Grid Engine started by gridengine-up.sh.
# Asks the daemons to stop (qconf -kej HOST kills running jobs and stops execd, qconf -km stops qmaster), waits up
# to ~30 s, then sends TERM only to the PIDs recorded by gridengine-up.sh that are still alive. Never stops
# processes by name. Idempotent; prints nothing when nothing runs.
set -euo pipefail

STATE_DIR="${DROVER_TEST_CLUSTER_STATE:-/run/drover-test-cluster}/gridengine"
SPOOL=/var/spool/gridengine
HOST=$(hostname)
T0=$(date +%s.%N)

[ -d "$STATE_DIR" ] || exit 0
[ "$(id -u)" = 0 ] || { echo "gridengine-down: ERROR: must run as root" >&2; exit 1; }

exec 9>"$STATE_DIR/lock"
flock -w 900 9 || { echo "gridengine-down: ERROR: could not lock $STATE_DIR/lock" >&2; exit 1; }

alive() {
  [ -n "${1:-}" ] && [ -r "/proc/$1/comm" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]
}
read_pid() { [ -r "$1" ] && tr -dc '0-9' <"$1" || true; }

QM_PID=$(read_pid "$STATE_DIR/sge_qmaster.pid")
EX_PID=$(read_pid "$STATE_DIR/sge_execd.pid")
alive "$QM_PID" sge_qmaster || QM_PID=
alive "$EX_PID" sge_execd || EX_PID=

# Also ask a qmaster that runs from the spool's own PID file (not recorded here) to stop, but only TERM ours.
spool_qm=$(read_pid "$SPOOL/qmaster/qmaster.pid")
qm_running=
if [ -n "$QM_PID" ] || alive "$spool_qm" sge_qmaster; then qm_running=1; fi

if [ -z "$qm_running" ] && [ -z "$EX_PID" ]; then
  rm -f "$STATE_DIR/sge_qmaster.pid" "$STATE_DIR/sge_execd.pid"
  exit 0
fi

if [ -n "$qm_running" ]; then
  timeout 20 qconf -kej "$HOST" >/dev/null 2>&1 || true
  timeout 20 qconf -km >/dev/null 2>&1 || true
fi

# Wait up to 30 s for the recorded daemons to exit, then TERM the ones still alive (and wait 30 s more: a controlled qmaster shutdown takes ~10 s).
gone() { ! alive "$QM_PID" sge_qmaster && ! alive "$EX_PID" sge_execd; }
end=$(( $(date +%s) + 30 ))
while ! gone && [ "$(date +%s)" -lt "$end" ]; do sleep 0.2; done
termed=
if ! gone; then
  for pc in "$QM_PID:sge_qmaster" "$EX_PID:sge_execd"; do
    if alive "${pc%%:*}" "${pc#*:}"; then kill -TERM "${pc%%:*}" 2>/dev/null || true; termed="$termed ${pc#*:}"; fi
  done
  end=$(( $(date +%s) + 30 ))
  while ! gone && [ "$(date +%s)" -lt "$end" ]; do sleep 0.2; done
fi
if ! gone; then
  echo "gridengine-down: ERROR: still running after TERM: qmaster ${QM_PID:--} execd ${EX_PID:--}" >&2
  exit 1
fi
rm -f "$STATE_DIR/sge_qmaster.pid" "$STATE_DIR/sge_execd.pid"
echo "gridengine-down: stopped in $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s${termed:+ (TERM sent to:$termed)}"
