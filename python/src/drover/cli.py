"""Finding the drover CLI and running it: argv lists only, never a shell string."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from .errors import DroverError

#: What names the CLI: a path or name of the program, or the argv words that start it.
DroverBin = Union[str, "os.PathLike[str]", Sequence[str]]

_SCRIPT_SUFFIXES = (".cjs", ".mjs", ".js")


@dataclass(frozen=True)
class Completed:
    """How one drover command ended: its exit code and what it printed."""

    argv: List[str]
    exit_code: int
    stdout: str
    stderr: str


def find_drover(drover: Optional[DroverBin] = None) -> List[str]:
    """The argv words that start drover: `drover` given, else $DROVER_BIN, else `drover` on PATH."""
    if drover is not None and not isinstance(drover, (str, os.PathLike)):
        words = [str(w) for w in drover]
        if not words:
            raise DroverError("drover= is an empty list: give the program, e.g. ['drover']")
        return words
    chosen = os.fspath(drover) if drover is not None else os.environ.get("DROVER_BIN") or None
    if chosen is None:
        found = shutil.which("drover")
        if found is None:
            raise DroverError(
                "drover is not on PATH: install it (npm link in drover's checkout), set DROVER_BIN, "
                "or pass drover='/path/to/bin/drover.cjs'"
            )
        return [found]
    if chosen.strip() == "":
        raise DroverError("DROVER_BIN is empty: set it to drover's path, e.g. /path/to/bin/drover.cjs")
    if os.sep in chosen or (os.altsep and os.altsep in chosen):
        chosen = os.path.abspath(chosen)  # drover runs in the job's folder, not here
    path = Path(chosen)
    if os.sep in chosen and not path.exists():
        where = "DROVER_BIN" if drover is None else "drover="
        raise DroverError(f"{where} {chosen} does not exist: give the path of drover's bin/drover.cjs")
    if path.suffix in _SCRIPT_SUFFIXES and not os.access(path, os.X_OK):
        node = shutil.which("node")
        if node is None:
            raise DroverError(f"{chosen} needs node, which is not on PATH: install Node.js 20 or newer")
        return [node, chosen]
    return [chosen]


@dataclass
class Drover:
    """One way to run drover: which program, in which folder, with which extra environment.

    Attributes:
        cwd: the folder drover works in (its `.drover/` is there); None: the current folder.
        drover: the program (see find_drover); None: $DROVER_BIN or `drover` on PATH.
        env: variables added to (or, with None as value, removed from) drover's environment.
    """

    cwd: Optional[Union[str, "os.PathLike[str]"]] = None
    drover: Optional[DroverBin] = None
    env: Dict[str, Optional[str]] = field(default_factory=dict)

    def run(self, args: Sequence[str], ok_codes: Sequence[int] = (0,)) -> Completed:
        """Run `drover ARGS`; raise DroverError unless it exits with one of `ok_codes`."""
        argv = find_drover(self.drover) + [str(a) for a in args]
        env = dict(os.environ)
        for key, value in self.env.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        try:
            proc = subprocess.run(
                argv,
                cwd=None if self.cwd is None else os.fspath(self.cwd),
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
            )
        except OSError as err:
            raise self.not_run(err, argv) from err
        done = Completed(
            argv,
            proc.returncode,
            proc.stdout.decode("utf-8", errors="replace"),
            proc.stderr.decode("utf-8", errors="replace"),
        )
        if done.exit_code not in ok_codes:
            raise error_of(done)
        return done

    def not_run(self, err: OSError, argv: List[str]) -> DroverError:
        """Why drover could not be started: its folder (`cwd`) when that is what failed, else the program."""
        cwd = None if self.cwd is None else os.fspath(self.cwd)
        if cwd is not None and not os.path.exists(cwd):
            message = f"cwd={cwd} does not exist: create the folder, or give one that exists"
        elif cwd is not None and not os.path.isdir(cwd):
            message = f"cwd={cwd} is not a folder: give the folder drover works in"
        elif cwd is not None and err.filename == cwd:
            message = f"cannot work in cwd={cwd}: {err.strerror or err}"
        else:
            message = f"cannot run {argv[0]}: {err.strerror or err}"
        return DroverError(message, None, argv)

    def json(self, args: Sequence[str]) -> Any:
        """Run `drover ARGS` (which print JSON) and return the parsed output."""
        return parse_json(self.run(args))


def error_of(done: Completed) -> DroverError:
    """The DroverError for a command that failed: its last stderr line is drover's message."""
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    own = [line[len("drover: ") :] for line in lines if line.startswith("drover: ")]
    # A crash has no line of drover's own: its first "...Error: ..." line says why (Node's "Error: ...").
    crash = [line for line in lines if "Error" in line.split(":", 1)[0]]
    if own:
        message = own[-1]
    elif crash:
        message = crash[0]
    else:
        message = lines[-1] if lines else f"drover exited {done.exit_code} with no message"
    return DroverError(message, done.exit_code, done.argv, done.stderr)


def parse_json(done: Completed) -> Any:
    """The JSON a command printed; a DroverError if it printed something else."""
    try:
        return json.loads(done.stdout)
    except ValueError as err:
        raise DroverError(
            f"drover printed no JSON ({err}): {done.stdout[:200]!r}", done.exit_code, done.argv, done.stderr
        ) from err

