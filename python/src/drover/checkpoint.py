"""For tasks that checkpoint: know when drover warns of the time limit, save, and ask to be requeued.

A launch with ``signal="USR1@5m"`` and ``requeue=3`` (``--signal``, ``--requeue``) warns each task five minutes
before its limit; a task that then saves its state and exits with REQUEUE_EXIT (75) runs again, up to three
times, as a new attempt with ``DROVER_RESUME=1``::

    import drover

    state = load(path) if drover.resuming() else fresh()
    drover.on_checkpoint(lambda: save(state, path))   # on the warning: save, then exit 75
    for step in range(state.step, STEPS):
        train_one_step(state)

or, to save only between steps::

    drover.watch_for_checkpoint()
    for step in ...:
        train_one_step(state)
        if drover.checkpoint_requested():
            save(state, path)
            drover.requeue()

The signal is SIGUSR1 unless told: give the one the launch's ``signal=`` names.
"""

from __future__ import annotations

import os
import signal as _signal
import sys
from typing import Any, Callable, NoReturn, Union

#: The exit code by which a task asks drover to run it again (EX_TEMPFAIL), unless the launch says another.
REQUEUE_EXIT = 75

SignalLike = Union[str, int, _signal.Signals]

_requested = False


def _signum(sig: SignalLike) -> int:
    if isinstance(sig, bool):
        raise TypeError(f"signal={sig!r}: give a name such as 'USR1' or a number")
    if isinstance(sig, int):
        return int(sig)
    if not isinstance(sig, str):
        raise TypeError(f"signal={sig!r}: give a name such as 'USR1' or a number")
    name = sig.upper()
    name = name if name.startswith("SIG") else f"SIG{name}"
    found = getattr(_signal.Signals, name, None) if name.isidentifier() else None
    if found is None:
        raise ValueError(f"signal={sig!r} is not a signal: give a name such as 'USR1'")
    if found in (_signal.SIGKILL, _signal.SIGSTOP):
        raise ValueError(f"signal={sig!r} cannot be caught: use USR1, USR2 or TERM")
    return int(found)


def resuming() -> bool:
    """True in an attempt that follows a requeue: load the checkpoint the earlier attempt saved."""
    return os.environ.get("DROVER_RESUME") == "1"


def requeue(code: int = REQUEUE_EXIT) -> NoReturn:
    """Exit so that drover runs the task again (the launch's ``requeue=`` permitting): call it after saving."""
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(code)


def on_checkpoint(save: Callable[[], Any], signal: SignalLike = "USR1", code: int = REQUEUE_EXIT) -> None:
    """On the warning `signal`, call `save()` and exit `code` (75): drover requeues the task.

    `save` runs in the main thread between two Python steps, as every Python signal handler does. If it raises,
    the task ends with that error (not requeued), so a checkpoint that could not be written is not taken for one.
    """
    if not callable(save):
        raise TypeError(f"save={save!r} is not callable: give a function of no arguments")

    def handler(signum: int, frame: Any) -> None:
        save()
        requeue(code)

    _signal.signal(_signum(signal), handler)


def watch_for_checkpoint(signal: SignalLike = "USR1") -> None:
    """From now on, the warning `signal` only marks that a checkpoint was asked for: see checkpoint_requested()."""

    def handler(signum: int, frame: Any) -> None:
        global _requested
        _requested = True

    _signal.signal(_signum(signal), handler)


def checkpoint_requested() -> bool:
    """True once the warning came (after watch_for_checkpoint()): save, then requeue()."""
    return _requested
