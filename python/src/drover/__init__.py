"""drover from Python: make a sweep, launch it, and read its status, tasks, results and logs.

    >>> import drover
    >>> job = drover.sweep("python train.py", {"--lr": [0.1, 0.01], "--seed": [1, 2]}, jobname="lr", tag=True)
    >>> job.launch(backend="local", max_tasks=4)
    >>> job.results(best="loss")

The client drives drover's command line (``--json``): `drover` on PATH, or $DROVER_BIN, or ``drover=`` given.
See docs/python.md in drover's repository.
"""

from .checkpoint import (
    REQUEUE_EXIT,
    checkpoint_requested,
    on_checkpoint,
    requeue,
    resuming,
    watch_for_checkpoint,
)
from .cli import Drover, find_drover
from .errors import DroverError
from .job import Job
from .launch import Launched
from .sweep import prelaunch_args, sweep

__all__ = [
    "REQUEUE_EXIT",
    "Drover",
    "DroverError",
    "Job",
    "Launched",
    "checkpoint_requested",
    "find_drover",
    "on_checkpoint",
    "prelaunch_args",
    "requeue",
    "resuming",
    "sweep",
    "watch_for_checkpoint",
]
__version__ = "0.1.0"
