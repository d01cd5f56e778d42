"""A job's results as a table: flat rows (params and result fields as columns); a DataFrame with pandas."""

from __future__ import annotations

import importlib
from typing import Any, Dict, List, Mapping, Optional

#: The columns every row of `drover results --json` has besides its params and result.
BASE = ("task", "state", "tag", "duration_s")


def flatten(value: Any, prefix: str = "") -> Dict[str, Any]:
    """An object's leaves keyed by their dotted path: {"metrics": {"acc": 1}} -> {"metrics.acc": 1}."""
    if isinstance(value, Mapping) and (value or not prefix):
        out: Dict[str, Any] = {}
        for key, inner in value.items():
            out.update(flatten(inner, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: value}


def flat_row(row: Mapping[str, Any]) -> Dict[str, Any]:
    """One row of `results --json` made flat: task, state, tag, each param, duration_s, each result field.

    A param key or result field that would take the name of a column before it is kept as ``params.KEY`` or
    ``result.FIELD``, so nothing is overwritten.
    """
    out: Dict[str, Any] = {k: row.get(k) for k in ("task", "state", "tag")}
    for key, value in (row.get("params") or {}).items():
        out[key if key not in out and key not in BASE else f"params.{key}"] = value
    out["duration_s"] = row.get("duration_s")
    result = row.get("result")
    if isinstance(result, Mapping):
        for key, value in flatten(result).items():
            out[key if key not in out else f"result.{key}"] = value
    return out


def columns_of(rows: List[Dict[str, Any]]) -> List[str]:
    """Every key of the rows, in the order they first appear."""
    seen: Dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def as_table(raw: List[Mapping[str, Any]], frame: Optional[bool] = None) -> Any:
    """The rows flattened: a pandas DataFrame (one row per task, indexed 0..n-1) when pandas is importable and
    `frame` is not False, else a list of dicts; `frame=True` requires pandas."""
    rows = [flat_row(r) for r in raw]
    if frame is False:
        return rows
    try:
        pandas = importlib.import_module("pandas")
    except ImportError:
        if frame:
            raise
        return rows
    return pandas.DataFrame(rows, columns=columns_of(rows))
