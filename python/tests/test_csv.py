"""`drover list J --csv` (the list-export branch) read with Python's csv module gives list --json's tasks."""

from __future__ import annotations

import csv
import io
import re
import socket
import time
import unittest

import drover

from .support import WorkspaceTest

# Values a CSV writer must quote: commas, both quotes, a newline, a leading '=' and '-', wide characters.
TRICKY = [
    "plain",
    "a,b",
    'say "hi"',
    "it's",
    "two\nlines",
    "tab\there",
    "=1+2",
    "-x",
    "é 漢字 🚀",
    "trailing space ",
]


def undo_inert(cell: str) -> str:
    """A cell's value before drover made it inert: one ' dropped before 's and = + - @ tab or CR."""
    return cell[1:] if re.match(r"'+[=+\-@\t\r]", cell) else cell


def same(test: unittest.TestCase, text: str, value: object, what: str) -> None:
    """A CSV cell says what list --json says: null is an empty cell, numbers are numbers."""
    if value is None:
        test.assertEqual(text, "", what)
    elif isinstance(value, bool):
        test.assertIn(text.lower(), ("true", "false"), what)
        test.assertEqual(text.lower() == "true", value, what)
    elif isinstance(value, (int, float)):
        test.assertEqual(float(text), float(value), what)
    else:
        test.assertEqual(text, value, what)


class ListCsv(WorkspaceTest):
    def test_list_csv_round_trips_through_pythons_csv_module(self) -> None:
        job = drover.sweep("echo", pos_args=[TRICKY], jobname="csv", tag=True, cwd=self.cwd)
        job.launch(tasklist="1-3")
        done = self.cli("list", "--jobname", "csv", "--csv")
        self.assertEqual(done.returncode, 0, done.stderr)
        reader = csv.DictReader(io.StringIO(done.stdout, newline=""))
        rows = list(reader)
        tasks = job.tasks()
        self.assertEqual(len(rows), len(TRICKY))
        header = reader.fieldnames or []
        for name in ("task", "command", "tag", "state"):
            self.assertIn(name, header)
        # The columns whose text says what the JSON says (CSV writes times as dates, list --json as numbers).
        for row, task in zip(rows, tasks):
            for name in ("task", "command", "tag", "state", "exit_code", "attempts", "launch"):
                if name in header:
                    same(self, row[name], task[name], f"task {task['task']}, column {name}")
        expected = [f"echo {v} --tag {r['tag']}" for v, r in zip(TRICKY, rows)]
        self.assertEqual([r["command"] for r in rows], expected)
        # A cell a spreadsheet would run as a formula starts with ' (docs/cli.md); -x is an option name, data.
        self.assertEqual(rows[TRICKY.index("=1+2")]["pos1"], "'=1+2")
        self.assertEqual(rows[TRICKY.index("-x")]["pos1"], "-x")
        self.assertEqual([undo_inert(r["pos1"]) for r in rows], TRICKY)
        self.assertEqual([r["state"] for r in rows][:4], ["succeeded"] * 3 + ["pending"])


class Timings(WorkspaceTest):
    def test_tasks_carry_their_latest_attempts_times_and_host(self) -> None:
        job = drover.sweep("echo", pos_args=[["a", "b"]], jobname="t", cwd=self.cwd)
        before = time.time()
        job.launch(tasklist="1")
        ran, never = job.tasks()
        self.assertLessEqual(before - 1, ran["started_at"])
        self.assertLessEqual(ran["started_at"], ran["ended_at"])
        self.assertAlmostEqual(ran["duration_s"], ran["ended_at"] - ran["started_at"], places=2)
        self.assertEqual(ran["host"], socket.gethostname())
        self.assertEqual([never[k] for k in ("started_at", "ended_at", "duration_s", "host")], [None] * 4)


if __name__ == "__main__":
    unittest.main()
