#!/usr/bin/env bash
# A real sweep on the local backend, in a fresh temporary folder: 3 learning rates × 4 seeds, one task in
# twelve fails on purpose, drover shows live progress and the final status, then reruns only the failure.
set -euo pipefail
drover="$(cd "$(dirname "$0")/.." && pwd)/bin/drover.cjs"
work=$(mktemp -d "${TMPDIR:-/tmp}/drover-demo.XXXXXX")
cd "$work"
cat > train.sh <<'SCRIPT'
#!/bin/sh
# A stand-in for a training script: "trains" for a moment, prints a result, and fails once for lr 0.3 seed 2.
sleep 0.$(( (${DROVER_TASK_ID} * 37) % 9 + 1 ))
if [ "$2" = "0.3" ] && [ "$4" = "2" ] && [ ! -e retried ]; then touch retried; echo "diverged" >&2; exit 3; fi
echo "lr=$2 seed=$4 loss=0.$(( (${DROVER_TASK_ID} * 7919) % 1000 ))"
SCRIPT
chmod +x train.sh
echo "== drover prelaunch: a 3 x 4 grid"
"$drover" prelaunch +command ./train.sh +jobname demo +arg --lr 0.1 0.2 0.3 +arg --seed 1 2 3 4 +tag
echo
echo "== drover launch (one task fails on purpose)"
"$drover" launch --jobname demo --max-tasks 4 || echo "(exit $?: a task failed)"
echo
echo "== drover status demo"
"$drover" status demo
echo
echo "== drover launch --failed: rerun exactly what failed"
"$drover" launch --jobname demo --failed
echo
"$drover" status demo
echo
echo "== drover logs demo 1"
"$drover" logs demo 1
echo
echo "The demo folder is $work (its .drover/ holds the ledger, jobfile and logs)."
