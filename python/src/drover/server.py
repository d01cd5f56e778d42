"""Reading a job from a running `drover server` (its HTTP API) instead of the folder's ledger."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, List, Optional, Sequence, Set, Union

from .errors import DroverError


def parse_tasklist(text: str) -> Set[int]:
    """The ids of a tasklist (``1-3,5,8-20:4``), for filtering what the server sent."""
    ids: Set[int] = set()
    for block in text.split(","):
        span, _, step_text = block.strip().partition(":")
        first_text, dash, last_text = span.partition("-")
        try:
            first = int(first_text)
            last = int(last_text) if dash else first
            step = int(step_text) if step_text else 1
        except ValueError:
            what = "is not N, FIRST-LAST or FIRST-LAST:STEP"
            raise ValueError(f"tasklist {text!r}: {block!r} {what}") from None
        if first < 1 or last < first or step < 1:
            raise ValueError(f"tasklist {text!r}: {block!r} is not a range of task ids from 1")
        ids.update(range(first, last + 1, step))
    return ids


def get(server: str, token: Optional[str], path: str) -> Any:
    """GET a route of the server's API (``/v1/...``) with the token; its JSON, or a DroverError."""
    url = server.rstrip("/") + path
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read().decode("utf-8"))
    except urllib.error.HTTPError as err:
        try:
            message = json.loads(err.read().decode("utf-8"))["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = err.reason
        raise DroverError(f"{url}: {err.code} {message}", None, ["GET", url]) from err
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise DroverError(f"cannot reach drover server {server}: {reason}", None, ["GET", url]) from err


def _job_path(jobname: str, what: str) -> str:
    return f"/v1/jobs/{urllib.parse.quote(jobname, safe='')}/{what}"


def server_status(server: str, token: Optional[str], jobname: str) -> Any:
    """A job's status from the server's `GET /v1/jobs/:name/status` (as `drover status J --json`)."""
    return get(server, token, _job_path(jobname, "status"))


def server_tasks(
    server: str,
    token: Optional[str],
    jobname: str,
    state: Optional[Union[str, Sequence[str]]] = None,
    tasklist: Optional[str] = None,
) -> List[Any]:
    """A job's tasks from the server's `GET /v1/jobs/:name/tasks`, filtered as `list --state/--tasklist`."""
    rows = get(server, token, _job_path(jobname, "tasks"))
    if state is not None:
        states = set(state.split(",") if isinstance(state, str) else state)
        rows = [r for r in rows if r.get("state") in states]
    if tasklist is not None:
        ids = parse_tasklist(tasklist)
        rows = [r for r in rows if r.get("task") in ids]
    return rows
