"""Launching a job's tasks: the `drover launch` command line, and what a launch answered."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

#: What `--result` may say: the result file (default) or the last JSON-object line of stdout.
RESULT_SOURCES = ("file", "stdout")


@dataclass(frozen=True)
class Launched:
    """What one `drover launch` did.

    Attributes:
        jobname: the job.
        launch: the launch's id, or None when there was nothing to launch (e.g. ``rerun()`` with no failures).
        backend: where it ran (``local``, ``slurm``, ``gridengine``, ``pool:NAME``); None if nothing was.
        tasks: how many tasks it launched.
        tasklist: those tasks, as a tasklist (``1-3,5``).
        counts: after a foreground local launch: its tasks by final state; else None.
        exit_code: drover's exit code: 0, or 1 when a task of a foreground launch did not succeed.
        data: everything ``launch --json`` printed.
    """

    jobname: str
    launch: Optional[str]
    backend: Optional[str]
    tasks: int
    tasklist: Optional[str]
    counts: Optional[Dict[str, int]]
    exit_code: int
    data: Dict[str, Any] = field(repr=False)

    @property
    def ok(self) -> bool:
        """True when drover exited 0 (every task of a foreground launch succeeded)."""
        return self.exit_code == 0

    @classmethod
    def of(cls, data: Dict[str, Any], exit_code: int) -> "Launched":
        """A Launched from `launch --json`'s object and drover's exit code."""
        return cls(
            jobname=str(data.get("jobname", "")),
            launch=data.get("launch"),
            backend=data.get("backend"),
            tasks=int(data.get("tasks", 0)),
            tasklist=data.get("tasklist"),
            counts=data.get("counts"),
            exit_code=exit_code,
            data=data,
        )


def _count(name: str, value: Optional[int]) -> List[str]:
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}={value!r} is not a whole number")
    return [f"--{name.replace('_', '-')}", str(value)]


def _text(name: str, value: Optional[Union[str, int, float, "os.PathLike[str]"]]) -> List[str]:
    if value is None:
        return []
    if isinstance(value, bool):
        raise TypeError(f"{name}={value!r}: give a value such as '10m' or 90")
    text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    return [f"--{name.replace('_', '-')}={text}"]


def _env(env: Optional[Mapping[str, Union[str, int, float]]]) -> List[str]:
    if env is None:
        return []
    if not isinstance(env, Mapping):
        raise TypeError(f"env={env!r}: give a dict of names and values, e.g. {{'OMP_NUM_THREADS': '1'}}")
    out = []
    for name, value in env.items():
        if not isinstance(name, str) or "=" in name:
            raise ValueError(f"env: the name {name!r} is not a variable name (a string without '=')")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise TypeError(f"env[{name!r}]={value!r}: give a string or a number")
        out.append(f"--env={name}={value}")
    return out


def launch_args(
    jobname: str,
    *,
    backend: str = "local",
    pool: Optional[str] = None,
    tasklist: Optional[str] = None,
    failed: bool = False,
    unfinished: bool = False,
    max_tasks: Optional[int] = None,
    cpus: Optional[int] = None,
    gpus: Optional[int] = None,
    mem: Optional[Union[str, int, float]] = None,
    duration: Optional[Union[str, int, float]] = None,
    task_timeout: Optional[Union[str, int, float]] = None,
    signal: Optional[str] = None,
    requeue: Optional[int] = None,
    requeue_exit: Optional[int] = None,
    retries: Optional[int] = None,
    tasks_per_node: Optional[int] = None,
    max_tasks_per_node: Optional[int] = None,
    venv: Optional[Union[str, "os.PathLike[str]"]] = None,
    env: Optional[Mapping[str, Union[str, int, float]]] = None,
    result: Optional[str] = None,
    jobfile: Optional[Union[str, "os.PathLike[str]"]] = None,
    detach: bool = False,
    dry_run: bool = False,
    scheduler_args: Sequence[str] = (),
) -> List[str]:
    """The argv of `drover launch --json -q` (without the program); see Job.launch() for the parameters."""
    if failed and unfinished:
        raise ValueError("failed=True and unfinished=True: give one of them")
    if result is not None and result not in RESULT_SOURCES:
        raise ValueError(f"result={result!r}: use 'file' (DROVER_RESULT_FILE) or 'stdout'")
    if isinstance(scheduler_args, str):
        raise TypeError("scheduler_args is a string: give a list of words, e.g. ['--exclusive']")
    # Values are written --OPTION=VALUE, so one that starts with '-' is never read as an option.
    argv = ["launch", f"--jobname={jobname}", "--json", "-q"]
    argv += _text("pool", pool) if pool is not None else _text("backend", backend)
    argv += _text("tasklist", tasklist)
    argv += ["--failed"] if failed else []
    argv += ["--unfinished"] if unfinished else []
    for name, value in (
        ("max_tasks", max_tasks),
        ("cpus", cpus),
        ("gpus", gpus),
        ("retries", retries),
        ("requeue", requeue),
        ("requeue_exit", requeue_exit),
        ("tasks_per_node", tasks_per_node),
        ("max_tasks_per_node", max_tasks_per_node),
    ):
        argv += _count(name, value)
    for name, text in (
        ("mem", mem),
        ("duration", duration),
        ("task_timeout", task_timeout),
        ("signal", signal),
        ("venv", venv),
        ("result", result),
        ("jobfile", jobfile),
    ):
        argv += _text(name, text)
    argv += _env(env)
    argv += ["--detach"] if detach else []
    argv += ["--dry-run"] if dry_run else []
    if scheduler_args:
        argv += ["--", *[str(a) for a in scheduler_args]]
    return argv
