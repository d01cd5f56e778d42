"""A long task that survives its time limit: it trains in steps, saves a checkpoint when drover warns it
(--signal USR1@TIME), exits 75 to be requeued (--requeue N), and resumes from the checkpoint on the next attempt.

    drover launch --command 'python3 train.py' --jobname long \
        --task-timeout 8 --signal USR1@4 --requeue 3

DROVER_RESUME=1 marks an attempt that follows a requeue; the checkpoint file is this task's own.
"""

import json
import os
import signal
import sys
import time

STEPS = 10
checkpoint = f"checkpoint.{os.environ.get('DROVER_TASK_ID', '0')}.json"
stop = False


def warned(signum, frame):
    global stop
    stop = True  # finish the step under way, then save and exit


signal.signal(signal.SIGUSR1, warned)
step = 0
if os.environ.get("DROVER_RESUME") == "1" and os.path.exists(checkpoint):
    with open(checkpoint) as f:
        step = json.load(f)["step"]
print(f"attempt {os.environ.get('DROVER_ATTEMPT')}: from step {step}", flush=True)
while step < STEPS:
    time.sleep(1)  # one step of training
    step += 1
    if stop:
        with open(checkpoint + ".tmp", "w") as f:
            json.dump({"step": step}, f)
        os.replace(checkpoint + ".tmp", checkpoint)
        print(f"saved at step {step}", flush=True)
        sys.exit(75)  # EX_TEMPFAIL: run me again
print(f"done: {step} steps", flush=True)
