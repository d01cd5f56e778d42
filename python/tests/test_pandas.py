"""results() as a pandas DataFrame when pandas is importable, as a list of dicts when it is not.

pandas is not installed on the test machines: a FAKE stand-in (tests/fake_pandas) shows how the client calls
it, and a finder that refuses `import pandas` shows the path without it, whatever the machine has.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import unittest
from pathlib import Path
from typing import Any, Dict, List

from drover.results import as_table

FAKE_DIR = str(Path(__file__).resolve().parent / "fake_pandas")

RAW: List[Dict[str, Any]] = [
    {"task": 1, "state": "succeeded", "tag": "a", "params": {"--lr": "0.1"}, "duration_s": 1.0,
     "result": {"loss": 0.5, "metrics": {"acc": 0.9}}},
    {"task": 2, "state": "failed", "tag": "b", "params": {"--lr": "0.01"}, "duration_s": 0.5, "result": None},
    {"task": 3, "state": "succeeded", "tag": "c", "params": {"--lr": "0.001"}, "duration_s": 2.0,
     "result": {"loss": 0.25, "extra": "x"}},
]

COLUMNS = ["task", "state", "tag", "--lr", "duration_s", "loss", "metrics.acc", "extra"]


class NoPandas(importlib.abc.MetaPathFinder):
    """Makes `import pandas` fail, as on a machine without it."""

    def find_spec(self, name, path=None, target=None):  # noqa: ANN001 - the finder protocol
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError(f"No module named {name!r} (refused by the test)")
        return None


class PandasTestCase(unittest.TestCase):
    def setUp(self) -> None:
        self.saved = {k: v for k, v in sys.modules.items() if k == "pandas" or k.startswith("pandas.")}
        for k in self.saved:
            del sys.modules[k]
        self.addCleanup(self.restore)

    def restore(self) -> None:
        for k in [k for k in sys.modules if k == "pandas" or k.startswith("pandas.")]:
            del sys.modules[k]
        sys.modules.update(self.saved)
        while FAKE_DIR in sys.path:
            sys.path.remove(FAKE_DIR)
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, NoPandas)]

    def use_fake(self) -> None:
        sys.path.insert(0, FAKE_DIR)

    def refuse_pandas(self) -> None:
        sys.meta_path.insert(0, NoPandas())


class WithFakePandas(PandasTestCase):
    def test_a_dataframe_of_flat_rows_with_every_column_in_order(self) -> None:
        self.use_fake()
        frame = as_table(RAW)
        self.assertTrue(getattr(sys.modules["pandas"], "FAKE", False), "the FAKE stand-in was imported")
        self.assertEqual(type(frame).__name__, "DataFrame")
        self.assertEqual(frame.columns, COLUMNS)
        self.assertEqual(frame.data[0], {"task": 1, "state": "succeeded", "tag": "a", "--lr": "0.1",
                                         "duration_s": 1.0, "loss": 0.5, "metrics.acc": 0.9})
        self.assertEqual(frame.data[1]["task"], 2)
        self.assertNotIn("loss", frame.data[1])

    def test_frame_false_is_the_list_even_with_pandas(self) -> None:
        self.use_fake()
        rows = as_table(RAW, frame=False)
        self.assertIsInstance(rows, list)
        self.assertEqual(rows[2]["extra"], "x")

    def test_no_rows_is_an_empty_frame(self) -> None:
        self.use_fake()
        frame = as_table([])
        self.assertEqual((frame.data, frame.columns), ([], []))


class WithoutPandas(PandasTestCase):
    def test_a_list_of_flat_dicts(self) -> None:
        self.refuse_pandas()
        self.use_fake()  # even with something named pandas further down the path
        rows = as_table(RAW)
        self.assertIsInstance(rows, list)
        self.assertEqual([list(r) for r in rows][0], ["task", "state", "tag", "--lr", "duration_s", "loss",
                                                      "metrics.acc"])
        failed = {"task": 2, "state": "failed", "tag": "b", "--lr": "0.01", "duration_s": 0.5}
        self.assertEqual(rows[1], failed)
        self.assertEqual(rows[2]["loss"], 0.25)

    def test_frame_true_needs_pandas(self) -> None:
        self.refuse_pandas()
        with self.assertRaises(ImportError):
            as_table(RAW, frame=True)


@unittest.skipUnless(importlib.util.find_spec("pandas") is not None, "no pandas here (the FAKE stands in)")
class WithRealPandas(unittest.TestCase):
    def test_a_real_dataframe(self) -> None:
        frame = as_table(RAW)
        self.assertEqual(list(frame.columns), COLUMNS)
        self.assertEqual(frame["loss"].min(), 0.25)
        self.assertEqual(int(frame.loc[frame["loss"].idxmin(), "task"]), 3)


if __name__ == "__main__":
    unittest.main()
