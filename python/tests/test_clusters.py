"""launch(backend="slurm" | "gridengine", wait=True) on the real test clusters (scripts/test-cluster/): the
client submits, polls status until nothing is queued or running, and reads status, logs and results.

Skipped with a notice when a cluster does not answer, unless DROVER_TEST_SLURM=1 / DROVER_TEST_GRIDENGINE=1
ask for it (CI), which makes a missing cluster a failure, as in the TypeScript cluster tests.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import unittest
from typing import Optional

import drover

from .support import WorkspaceTest

PY = shlex.quote(sys.executable)

TRAIN = """\
import json, os, sys
lr, seed = float(sys.argv[2]), int(sys.argv[4])
print("trained", lr, seed)
if "DROVER_RESULT_FILE" in os.environ:  # (test_results checks that it is there)
    with open(os.environ["DROVER_RESULT_FILE"], "w") as f:
        json.dump({"loss": abs(lr - 0.01) + seed / 1000}, f)
"""


def missing(argv: list, answer: str) -> Optional[str]:
    """Why a cluster does not answer (None when it does)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{argv[0]} cannot be run ({err})"
    if done.returncode != 0 or answer not in done.stdout:
        return f"{' '.join(argv)} does not answer: {(done.stderr or done.stdout).strip()[:200]}"
    return None


class ClusterCase(WorkspaceTest):
    backend = ""
    why_missing: Optional[str] = None
    required = False

    def setUp(self) -> None:
        if self.why_missing:
            if self.required:
                self.fail(f"the {self.backend} test cluster is required here, but {self.why_missing}")
            self.skipTest(f"no {self.backend}: {self.why_missing} (scripts/test-cluster/ brings one up)")
        super().setUp()
        self.write("train.py", TRAIN)
        grid = {"--lr": [0.1, 0.01], "--seed": [1, 2]}
        self.job = drover.sweep(f"{PY} train.py", grid, jobname="c", cwd=self.cwd)
        self.addCleanup(self.cancel)

    def cancel(self) -> None:
        """Stop what this test's launches left in the queue (by its own job: nobody else's)."""
        argv = drover.find_drover() + ["cancel", "c", "--yes"]
        subprocess.run(argv, cwd=self.cwd, capture_output=True, check=False, timeout=120)

    def test_launch_waits_until_every_task_ended(self) -> None:
        run = self.job.launch(backend=self.backend, wait=True, poll=0.5)
        self.assertEqual((run.backend, run.tasks, run.tasklist), (self.backend, 4, "1-4"))
        status = self.job.status()
        self.assertEqual(status["counts"]["succeeded"], 4, status)
        self.assertEqual(status["counts"]["queued"] + status["counts"]["running"], 0)
        self.assertEqual(self.job.logs(2), "trained 0.01 1\n")

    def test_results_best_names_the_right_task(self) -> None:
        self.job.launch(backend=self.backend, wait=True, poll=0.5)
        [best] = self.job.results(best="loss", frame=False)
        self.assertEqual((best["task"], best["--lr"], best["--seed"]), (2, "0.01", "1"))
        self.assertAlmostEqual(best["loss"], 0.001)


class OnSlurm(ClusterCase):
    backend = "slurm"
    required = os.environ.get("DROVER_TEST_SLURM") == "1"
    why_missing = missing(["sinfo", "-h", "-o", "%T"], "idle") and missing(["sinfo", "-h", "-o", "%T"], "mix")


class OnGridEngine(ClusterCase):
    backend = "gridengine"
    required = os.environ.get("DROVER_TEST_GRIDENGINE") == "1"
    why_missing = missing(["qstat", "-xml"], "<job_info")


del ClusterCase  # only the two backends' classes are tests

if __name__ == "__main__":
    unittest.main()
