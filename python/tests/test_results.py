"""results(): the README's 3 x 4 sweep, whose train.py writes {"loss": ...} to $DROVER_RESULT_FILE, compared
from Python (`drover results J --json`, from the results-params branch: see the shared contract)."""

from __future__ import annotations

import math
import os
import re
import shlex
import sys
import unittest
from pathlib import Path
from typing import Dict, List

import drover

from .support import WorkspaceTest, class_workspace
from .test_pandas import PandasTestCase

PY = shlex.quote(sys.executable)

# The README's train.py: its loss is smallest at --lr 0.01 and grows with the seed; --lr 0.001 --seed 4 leaves
# no result, and --seed 3 --lr 0.1 fails after writing one.
TRAIN = """\
import argparse, json, math, os, sys
p = argparse.ArgumentParser()
p.add_argument("--lr", type=float)
p.add_argument("--seed", type=int)
p.add_argument("--tag")
a = p.parse_args()
if not (a.lr == 0.001 and a.seed == 4):
    with open(os.environ["DROVER_RESULT_FILE"], "w") as f:
        json.dump({"loss": abs(math.log10(a.lr) + 2) + a.seed / 100, "metrics": {"seed": a.seed}}, f)
sys.exit(1 if (a.lr == 0.1 and a.seed == 3) else 0)
"""

# Prints its result as the last JSON line of stdout instead (launch(result="stdout")).
PRINTS = """\
import json, sys
print("starting")
print(json.dumps({"score": float(sys.argv[1]) * 10}))
print("not json")
"""


def expected_loss(params: Dict[str, str]) -> float:
    return abs(math.log10(float(params["--lr"])) + 2) + int(params["--seed"]) / 100


class Results(unittest.TestCase):
    """One sweep, launched once, read by every test."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.cwd = class_workspace(cls)
        (cls.cwd / "train.py").write_text(TRAIN, encoding="utf-8")
        cls.job = drover.sweep(
            f"{PY} train.py", {"--lr": [0.1, 0.01, 0.001], "--seed": [1, 2, 3, 4]}, jobname="lr", tag=True,
            cwd=cls.cwd,
        )
        cls.launched = cls.job.launch(backend="local", max_tasks=4)

    def test_one_row_per_task_with_params_duration_and_the_result_flattened(self) -> None:
        self.assertEqual(self.launched.exit_code, 1)
        rows = self.job.results(frame=False)
        self.assertEqual([r["task"] for r in rows], list(range(1, 13)))
        tasks = {t["task"]: t for t in self.job.tasks()}
        for row in rows:
            self.assertEqual(row["state"], tasks[row["task"]]["state"])
            self.assertEqual(row["tag"], tasks[row["task"]]["tag"])
            self.assertIn(f"--lr {row['--lr']} --seed {row['--seed']} ", tasks[row["task"]]["command"])
            self.assertIsInstance(row["duration_s"], (int, float))
            if (row["--lr"], row["--seed"]) == ("0.001", "4"):
                self.assertNotIn("loss", row)
            else:
                self.assertAlmostEqual(row["loss"], expected_loss(row))
                self.assertEqual(row["metrics.seed"], int(row["--seed"]))
        self.assertEqual(sum(r["state"] == "failed" for r in rows), 1)

    def test_best_is_the_least_loss_and_max_the_greatest(self) -> None:
        losses = {r["task"]: expected_loss(r) for r in self.job.results(frame=False) if "loss" in r}
        [best] = self.job.results(best="loss", frame=False)
        self.assertEqual(best["task"], min(losses, key=lambda t: (losses[t], t)))
        self.assertEqual((best["--lr"], best["--seed"]), ("0.01", "1"))
        [worst] = self.job.results(best="loss:max", frame=False)
        self.assertEqual(worst["task"], max(losses, key=lambda t: (losses[t], -t)))

    def test_sort_and_filters(self) -> None:
        up = [r["task"] for r in self.job.results(sort="loss", frame=False) if "loss" in r]
        rows = {r["task"]: r for r in self.job.results(frame=False)}
        self.assertEqual(up, sorted(up, key=lambda t: (rows[t]["loss"], t)))
        down = [r["task"] for r in self.job.results(sort="loss:desc", frame=False) if "loss" in r]
        self.assertEqual(down, sorted(down, key=lambda t: (-rows[t]["loss"], t)))
        self.assertEqual([r["task"] for r in self.job.results(state="failed", frame=False)],
                         [t for t, r in rows.items() if r["state"] == "failed"])
        self.assertEqual([r["task"] for r in self.job.results(tasklist="2-3", frame=False)], [2, 3])

    def test_tasks_carry_their_params(self) -> None:
        tasks = self.job.tasks()
        self.assertEqual(tasks[0]["params"], {"--lr": "0.1", "--seed": "1"})
        self.assertEqual(tasks[11]["params"], {"--lr": "0.001", "--seed": "4"})
        rows = self.job.results(frame=False)
        self.assertEqual({t["task"]: t["params"] for t in tasks},
                         {r["task"]: {"--lr": r["--lr"], "--seed": r["--seed"]} for r in rows})

    def test_bad_fields_are_drovers_errors(self) -> None:
        for kwargs, named in (({"sort": "loss:sideways"}, "sideways"), ({"best": "acc:max"}, '"acc"'),
                              ({"best": ""}, "--best"), ({"sort": "los\x01s"}, "los")):
            with self.assertRaises(drover.DroverError, msg=str(kwargs)) as caught:
                self.job.results(**kwargs)
            self.assertEqual(caught.exception.exit_code, 2, kwargs)
            self.assertIn(named, caught.exception.message, kwargs)


class BadNames(WorkspaceTest):
    def test_names_that_look_like_options_are_refused_by_name(self) -> None:
        for name in ("--help", "-x", "a\x01b", ""):
            with self.assertRaises(drover.DroverError, msg=repr(name)) as caught:
                drover.Job(name, cwd=self.cwd).results()
            self.assertEqual(caught.exception.exit_code, 2, (name, caught.exception.message))


class ResultsFromStdout(WorkspaceTest):
    def test_the_last_json_object_line_of_stdout(self) -> None:
        self.write("prints.py", PRINTS)
        job = drover.sweep(f"{PY} prints.py", pos_args=[["1", "3", "2"]], jobname="p", cwd=self.cwd)
        self.assertEqual(job.launch(result="stdout").exit_code, 0)
        rows = job.results(frame=False)
        self.assertEqual([(r["pos1"], r["score"]) for r in rows], [("1", 10.0), ("3", 30.0), ("2", 20.0)])
        [best] = job.results(best="score:max", frame=False)
        self.assertEqual(best["task"], 2)


class BestOfNone(WorkspaceTest):
    def test_best_is_none_when_no_task_has_the_field_as_a_number(self) -> None:
        self.write("t.sh", 'echo \'{"acc": "high"}\' > "$DROVER_RESULT_FILE"\n')
        job = drover.sweep("sh t.sh", pos_args=[["a", "b"]], jobname="n", cwd=self.cwd)
        self.assertEqual(job.launch().exit_code, 0)
        self.assertEqual([r["acc"] for r in job.results(frame=False)], ["high", "high"])
        for best in ("acc", "acc:max", "acc:min"):
            self.assertIsNone(job.results(best=best, frame=False), best)
            self.assertIsNone(job.results(best=best), best)
        # A field no result has at all is a bad value, as drover says (exit code 2, naming the fields there).
        with self.assertRaises(drover.DroverError) as caught:
            job.results(best="loss")
        self.assertEqual(caught.exception.exit_code, 2)
        self.assertIn("acc", caught.exception.message)


class ResultsAsDataFrame(WorkspaceTest, PandasTestCase):
    def setUp(self) -> None:
        WorkspaceTest.setUp(self)
        PandasTestCase.setUp(self)

    def test_job_results_is_a_dataframe_when_pandas_is_there(self) -> None:
        self.use_fake()
        self.write("prints.py", PRINTS)
        job = drover.sweep(f"{PY} prints.py", pos_args=[["1", "2"]], jobname="p", cwd=self.cwd)
        job.launch(result="stdout")
        frame = job.results()
        self.assertEqual(type(frame).__name__, "DataFrame")
        self.assertEqual(frame.columns, ["task", "state", "tag", "pos1", "duration_s", "score"])
        self.assertEqual([r["score"] for r in frame.data], [10.0, 20.0])


if __name__ == "__main__":
    unittest.main()


README = Path(__file__).resolve().parents[2] / "README.md"


def readme_blocks() -> List[str]:
    """The Python blocks of the README's "Compare your results" section: train.py, then the client's use."""
    readme = README
    section = readme.read_text(encoding="utf-8").split("## Compare your results", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


@unittest.skipUnless(README.exists(), "drover's README is not beside python/ (an sdist, not the repository)")
class ReadmeWalkthrough(unittest.TestCase):
    """The README's walkthrough as written (but with this Python for `python`): its best task is task 2."""

    def test_the_readmes_sweep_names_the_best_task_with_its_params(self) -> None:
        train, client = readme_blocks()
        cwd = class_workspace(type(self))
        (cwd / "train.py").write_text(train, encoding="utf-8")
        code = client.replace('"python train.py"', repr(f"{PY} train.py"))
        self.assertNotEqual(code, client, "the README's sweep runs 'python train.py'")
        here = os.getcwd()
        os.chdir(cwd)
        try:
            names: Dict[str, object] = {}
            exec(compile(code, "README.md", "exec"), names)  # the README's own lines
        finally:
            os.chdir(here)
        job = names["job"]
        self.assertIsInstance(job, drover.Job)
        rows = job.results(frame=False)  # type: ignore[attr-defined]
        self.assertEqual([r["state"] for r in rows], ["succeeded"] * 12)
        [best] = job.results(best="loss", frame=False)  # type: ignore[attr-defined]
        self.assertEqual(best, min(rows, key=lambda r: (r["loss"], r["task"])))
        self.assertEqual((best["task"], best["--lr"], best["--seed"]), (2, "0.01", "1"))
        self.assertEqual(best["tag"], "lr_02__lr_0.01__seed_1")
