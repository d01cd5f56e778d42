"""Making a job from a sweep: the `drover prelaunch` command line for a Python description of it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable, List, Mapping, Optional, Sequence, Union

from .cli import Drover, DroverBin

if TYPE_CHECKING:
    from .job import Job

#: One sweep value: strings are passed as they are, numbers as `str(value)`.
Value = Union[str, int, float]
#: The values of one option: a list of values, or one value.
Values = Union[Value, Sequence[Value]]

ARG_MODES = ("argparse", "hydra")


def _values(what: str, values: Values) -> List[str]:
    """The words of an option's values; a value drover's `+` grammar cannot carry is refused."""
    items: Iterable[object] = [values] if isinstance(values, (str, int, float)) else values
    out = []
    for v in items:
        if not isinstance(v, (str, int, float)):
            raise TypeError(f"{what}: value {v!r} is a {type(v).__name__}: give strings or numbers")
        out.append(_word(what, str(v)))
    return out


def _word(what: str, word: str) -> str:
    if word.startswith("+"):
        raise ValueError(
            f"{what}: {word!r} starts with '+', which drover prelaunch reads as one of its options: "
            "drop the '+' (a number's sign is not needed)"
        )
    return word


def prelaunch_args(
    command: str,
    args: Optional[Mapping[str, Values]] = None,
    *,
    jobname: str,
    pos_args: Sequence[Values] = (),
    flags: Sequence[str] = (),
    tag: Union[bool, str] = False,
    tag_args: Optional[Sequence[str]] = None,
    tag_number: bool = True,
    arg_mode: str = "argparse",
    jobfile: Optional[Union[str, "os.PathLike[str]"]] = None,
    append: bool = False,
) -> List[str]:
    """The argv of `drover prelaunch` (without the program) for a sweep; see sweep() for the parameters."""
    if not isinstance(command, str):
        raise TypeError(f"command {command!r} is a {type(command).__name__}: give the command as a string")
    if not isinstance(jobname, str):
        raise TypeError(f"jobname {jobname!r} is a {type(jobname).__name__}: give a string")
    if arg_mode not in ARG_MODES:
        raise ValueError(f"arg_mode {arg_mode!r} is not a mode: use 'argparse' or 'hydra'")
    # Single-value options are written NAME=VALUE, so a value that starts with '+' is still a value.
    argv = ["prelaunch", f"+command={command}", f"+jobname={jobname}"]
    if arg_mode != "argparse":
        argv.append(f"+arg-mode={arg_mode}")
    for name, values in (args or {}).items():
        if not isinstance(name, str):
            raise TypeError(f"args: the option name {name!r} is not a string")
        argv += ["+arg", _word("args", name), *_values(f"args[{name!r}]", values)]
    if isinstance(pos_args, (str, int, float)):
        raise TypeError("pos_args is a list of value lists, one per positional argument: e.g. [['a', 'b']]")
    for i, values in enumerate(pos_args):
        argv += ["+pos-arg", *_values(f"pos_args[{i}]", values)]
    if isinstance(flags, str):
        raise TypeError(f"flags={flags!r} is a string: give a list of flags, e.g. [{flags!r}]")
    for flag in flags:
        argv.append(f"+flag={flag}")
    if tag is True:
        argv.append("+tag")
    elif isinstance(tag, str):
        argv.append(f"+tag={tag}")
    if tag_args is not None:
        if isinstance(tag_args, str):
            raise TypeError(f"tag_args={tag_args!r} is a string: give a list of names, e.g. [{tag_args!r}]")
        argv += ["+tag-args", *[_word("tag_args", str(n)) for n in tag_args]]
    if not tag_number:
        argv.append("+no-tag-number")
    if jobfile is not None:
        argv.append(f"+jobfile={os.fspath(jobfile)}")
    if append:
        argv.append("+append")
    argv.append("+q")
    return argv


def sweep(
    command: str,
    args: Optional[Mapping[str, Values]] = None,
    *,
    jobname: str,
    pos_args: Sequence[Values] = (),
    flags: Sequence[str] = (),
    tag: Union[bool, str] = False,
    tag_args: Optional[Sequence[str]] = None,
    tag_number: bool = True,
    arg_mode: str = "argparse",
    jobfile: Optional[Union[str, "os.PathLike[str]"]] = None,
    append: bool = False,
    cwd: Optional[Union[str, "os.PathLike[str]"]] = None,
    drover: Optional[DroverBin] = None,
) -> "Job":
    """Make a job from a sweep (`drover prelaunch`) and return it.

    Args:
        command: the base command of every task, e.g. ``"python train.py"``.
        args: each option and its values (``{"--lr": [0.1, 0.01]}``); several make a grid, the first varying
            fastest, as in onager. In ``arg_mode="hydra"`` the names are hydra keys (``{"lr": [...]}``).
        jobname: the job's name (letters, digits, ``_ - . +``).
        pos_args: positional arguments, each a list of its values.
        flags: flags, each on and off (``["--fast"]``).
        tag: True passes each task a tag as ``--tag``; a string names the option instead.
        tag_args: only these option names go into the tag.
        tag_number: False leaves the task number out of tags.
        arg_mode: ``"argparse"`` (``--lr 0.1``) or ``"hydra"`` (``lr=0.1``).
        jobfile: write the jobfile here instead of ``.drover/jobs/<jobname>/jobs.json``.
        append: add the tasks to the job's existing jobfile.
        cwd: the folder drover works in (default: the current one).
        drover: the drover program (default: $DROVER_BIN, else `drover` on PATH).

    Raises:
        DroverError: drover refused the sweep (exit code 2 and its message), e.g. a bad jobname.
        TypeError, ValueError: a value drover's grammar cannot carry (not a string or number, or a '+' first).

    Example:
        >>> grid = {"--lr": [0.1, 0.01], "--seed": [1, 2]}
        >>> job = drover.sweep("python train.py", grid, jobname="lr", tag=True)
    """
    from .job import Job

    argv = prelaunch_args(
        command,
        args,
        jobname=jobname,
        pos_args=pos_args,
        flags=flags,
        tag=tag,
        tag_args=tag_args,
        tag_number=tag_number,
        arg_mode=arg_mode,
        jobfile=jobfile,
        append=append,
    )
    # The job's folder as Job resolves it (`~` expanded, made absolute), so the sweep runs where the job is.
    job = Job(jobname, cwd=cwd, drover=drover, jobfile=jobfile)
    Drover(cwd=job.cwd, drover=drover).run(argv)
    return job
