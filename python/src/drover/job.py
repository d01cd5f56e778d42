"""A job of drover's record and what a user does with it: launch, status, tasks, results, rerun, logs."""

from __future__ import annotations

import os
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from .cli import Drover, DroverBin, error_of, parse_json
from .errors import DroverError
from .launch import Launched, launch_args
from .results import as_table

#: States a task is still on its way in: `wait()` waits until no task is in one of them.
ACTIVE = ("queued", "running")

PathLike = Union[str, "os.PathLike[str]"]


class Job:
    """A named job in a folder's `.drover/` (made by sweep(), `drover prelaunch`, or onager).

    Args:
        name: the job's name.
        cwd: the folder drover works in (default: the current one, when the Job is made).
        drover: the drover program (default: $DROVER_BIN, else `drover` on PATH).
        jobfile: where the job's jobfile is, when it is not ``.drover/jobs/<name>/jobs.json``.
        server, token: read tasks and status from a running `drover server` (its URL, and a token: default
            $DROVER_TOKEN) instead of the folder.

    Example:
        >>> job = drover.Job("lr", cwd="~/experiments")
        >>> job.status()["counts"]["failed"]
        0
    """

    def __init__(
        self,
        name: str,
        *,
        cwd: Optional[PathLike] = None,
        drover: Optional[DroverBin] = None,
        jobfile: Optional[PathLike] = None,
        server: Optional[str] = None,
        token: Optional[str] = None,
    ) -> None:
        if not isinstance(name, str):
            raise TypeError(f"the job's name {name!r} is a {type(name).__name__}: give a string")
        self.name = name
        # The folder is fixed now: a later os.chdir (a notebook's %cd) does not move the job.
        self.cwd = os.path.abspath(os.path.expanduser(os.fspath(cwd) if cwd is not None else os.getcwd()))
        self.jobfile = jobfile
        self.server = server
        self.token = token if token is not None else os.environ.get("DROVER_TOKEN")
        self._drover = Drover(cwd=self.cwd, drover=drover)

    def __repr__(self) -> str:
        return f"Job({self.name!r}, cwd={self.cwd!r})"

    def launch(
        self,
        backend: str = "local",
        *,
        wait: bool = True,
        poll: float = 2.0,
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
        venv: Optional[PathLike] = None,
        env: Optional[Mapping[str, Union[str, int, float]]] = None,
        result: Optional[str] = None,
        dry_run: bool = False,
        scheduler_args: Sequence[str] = (),
    ) -> Launched:
        """Launch the job's tasks (`drover launch`) and return what the launch did.

        Args:
            backend: ``local``, ``slurm`` or ``gridengine``.
            wait: local: run in the foreground until every task ended (False: ``--detach``); clusters and
                pools: after submitting, poll `status` every `poll` seconds until none is queued or running.
            pool: run on this pool of workers instead of a backend.
            tasklist: only these tasks (``"1-3,5"``); failed / unfinished: only those tasks.
            max_tasks, cpus, gpus, mem, duration, task_timeout, retries, tasks_per_node, max_tasks_per_node,
                venv: as `drover launch --help` says (``mem="4G"``, ``duration="10m"``).
            signal: ``"USR1@5m"``: each task gets SIGUSR1 five minutes before its time limit (task_timeout, or
                duration), to save its work and exit; it sees DROVER_TIME_LEFT_S and DROVER_DEADLINE.
            requeue: run a task that hit its task_timeout, or exited 75 (it checkpointed: drover.on_checkpoint),
                again, resumed (DROVER_RESUME=1), up to this many times; requeue_exit: another code than 75.
            env: variables for every task (``{"OMP_NUM_THREADS": 1}``), passed as they are, never by a shell.
            result: ``"stdout"`` takes each task's result from the last line of its stdout that is a JSON
                object, instead of the file named by $DROVER_RESULT_FILE (``"file"``, the default).
            dry_run: show what would run and record nothing.
            scheduler_args: words passed to sbatch or qsub as they are.

        Returns:
            A Launched. A task that did not succeed is not an exception: ``exit_code`` is 1 and ``counts``
            says how the tasks ended.

        Raises:
            DroverError: drover refused the launch (exit code 2, e.g. a bad value) or could not make it.
        """
        local = pool is None and backend == "local"
        argv = launch_args(
            self.name,
            backend=backend,
            pool=pool,
            tasklist=tasklist,
            failed=failed,
            unfinished=unfinished,
            max_tasks=max_tasks,
            cpus=cpus,
            gpus=gpus,
            mem=mem,
            duration=duration,
            task_timeout=task_timeout,
            signal=signal,
            requeue=requeue,
            requeue_exit=requeue_exit,
            retries=retries,
            tasks_per_node=tasks_per_node,
            max_tasks_per_node=max_tasks_per_node,
            venv=venv,
            env=env,
            result=result,
            jobfile=self.jobfile,
            detach=local and not wait and not dry_run,
            dry_run=dry_run,
            scheduler_args=scheduler_args,
        )
        done = self._drover.run(argv, ok_codes=(0, 1))
        if done.exit_code == 1 and not done.stdout.strip():
            raise error_of(done)  # exit 1 with no launch printed: the environment failed, not a task
        data = parse_json(done)
        if not isinstance(data, dict):
            raise DroverError(f"drover launch printed {data!r}, not an object", done.exit_code, done.argv)
        launched = Launched.of(data, done.exit_code)
        if wait and not local and not dry_run and launched.launch is not None:
            self.wait(poll=poll)
        return launched

    def rerun(self, failed: bool = True, **launch: Any) -> Launched:
        """Launch again what did not succeed: the failed tasks (`--failed`: failed, killed, timed out, lost,
        error), or with failed=False every unfinished task (`--unfinished`, never-launched and cancelled too).
        Takes launch()'s other arguments. With nothing to rerun, the Launched has ``launch=None``."""
        return self.launch(failed=failed, unfinished=not failed, **launch)

    def status(self) -> Dict[str, Any]:
        """The job's status (`drover status J --json`): counts per state, launches, slowest, failed tasks."""
        if self.server is not None:
            from .server import server_status

            return server_status(self.server, self.token, self.name)
        return self._drover.json(["status", "--json", "--", self.name])

    def wait(self, poll: float = 2.0, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Poll status() until no task is queued or running; return that last status.

        Raises:
            TimeoutError: `timeout` seconds went by first.
        """
        if not poll > 0:
            raise ValueError(f"poll={poll!r}: give the seconds between status checks, more than 0")
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.status()
            if not any(status["counts"].get(s, 0) for s in ACTIVE):
                return status
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"job {self.name!r} still has tasks queued or running after {timeout} s")
            time.sleep(poll)

    def tasks(
        self, state: Optional[Union[str, Sequence[str]]] = None, tasklist: Optional[str] = None
    ) -> List[Dict[str, Any]]:
        """The job's tasks (`drover list --json`), one dict each: task, command, tag, state, exit_code,
        attempts, launch, params, started_at, ended_at, duration_s, host. Optionally only some states
        (``"failed"`` or ``["failed", "lost"]``) or tasks (``"1-3"``).

        With ``server=`` and ``token=`` given to Job, the server's task route answers instead."""
        if self.server is not None:
            from .server import server_tasks

            return server_tasks(self.server, self.token, self.name, state=state, tasklist=tasklist)
        return self._drover.json(["list", f"--jobname={self.name}", "--json", *_filters(state, tasklist)])

    def results(
        self,
        sort: Optional[str] = None,
        best: Optional[str] = None,
        *,
        state: Optional[Union[str, Sequence[str]]] = None,
        tasklist: Optional[str] = None,
        frame: Optional[bool] = None,
    ) -> Any:
        """The job's results (`drover results J --json`), one row per task: task, state, tag, each param,
        duration_s and each result field (nested fields flattened: ``metrics.acc``).

        Args:
            sort: order by this field (``"loss"``, ``"loss:desc"``): a result field, param, duration_s, task.
            best: keep only the best task by this field (``"loss"`` is the least; ``"acc:max"``).
            state, tasklist: only these states or tasks.
            frame: None: a pandas DataFrame when pandas is installed, else a list of dicts; False: always the
                list; True: always a DataFrame (ImportError without pandas).

        Returns:
            A DataFrame or a list of dicts; with `best`, of one row, or None when no task has that field as a
            finite number (yet: no task wrote it as one).

        Raises:
            DroverError: drover refused a value (exit code 2), e.g. a field no task's result or params has.
        """
        argv = ["results", "--json", *_filters(state, tasklist)]
        if sort is not None:
            argv.append(f"--sort={sort}")
        if best is not None:
            argv.append(f"--best={best}")
        argv += ["--", self.name]  # after `--`, a name like "--help" is a (bad) name, not an option
        # With --best and no task that has the field as a number, drover prints null and exits 1.
        done = self._drover.run(argv, ok_codes=(0, 1) if best is not None else (0,))
        if done.exit_code != 0 and done.stdout.strip() != "null":
            raise error_of(done)
        data = parse_json(done)
        if data is None:
            return None
        return as_table([data] if isinstance(data, dict) else data, frame)

    def logs(self, task: int, err: bool = False, attempt: Optional[int] = None) -> str:
        """A task's output (`drover logs J TASK`): stdout of its latest attempt, or stderr with err=True."""
        if isinstance(task, bool) or not isinstance(task, int):
            raise TypeError(f"task={task!r} is not a task id (a whole number)")
        argv = ["logs"]
        argv += ["--err"] if err else []
        argv += [f"--attempt={attempt}"] if attempt is not None else []
        argv += ["--", self.name, str(task)]
        return self._drover.run(argv).stdout


def _filters(state: Optional[Union[str, Sequence[str]]], tasklist: Optional[str]) -> List[str]:
    out = []
    if state is not None:
        out.append(f"--state={state if isinstance(state, str) else ','.join(state)}")
    if tasklist is not None:
        out.append(f"--tasklist={tasklist}")
    return out
