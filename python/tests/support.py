"""What the client's tests share: a fresh folder per test, and the drover program under test."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from typing import List

import drover

#: Set by test/python/client.test.ts: it removes the folders itself, after killing what their launches left.
KEEP = os.environ.get("DROVER_TEST_KEEP_WORKSPACES") == "1"


class WorkspaceTest(unittest.TestCase):
    """A test with its own folder (`self.cwd`) to run drover in, removed afterwards."""

    def setUp(self) -> None:
        self.cwd = Path(tempfile.mkdtemp(prefix="drover-py-")).resolve()
        if not KEEP:
            self.addCleanup(shutil.rmtree, self.cwd, ignore_errors=True)

    def write(self, name: str, text: str) -> Path:
        """Write a file into the folder."""
        path = self.cwd / name
        path.write_text(text, encoding="utf-8")
        return path

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        """Run drover directly (not through the client), to compare with what the client says."""
        return subprocess.run(
            drover.find_drover() + list(args), cwd=self.cwd, capture_output=True, text=True, check=False
        )

    def files(self) -> List[str]:
        """Every path under the folder, sorted (what a refused command may not change)."""
        return sorted(str(p.relative_to(self.cwd)) for p in self.cwd.rglob("*"))


def class_workspace(cls: type) -> Path:
    """A folder for a test class's setUpClass, removed after the class (see KEEP)."""
    cwd = Path(tempfile.mkdtemp(prefix="drover-py-")).resolve()
    if not KEEP:
        unittest.addModuleCleanup(shutil.rmtree, cwd, ignore_errors=True)
    return cwd


def has_subcommand(name: str) -> bool:
    """Whether the drover under test has a command (`results` arrives on another branch)."""
    argv = drover.find_drover() + [name, "--help"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    return done.returncode == 0


def python() -> str:
    """The Python running the tests, for task commands (a path without spaces or quotes)."""
    exe = shutil.which("python3") or "python3"
    return exe
