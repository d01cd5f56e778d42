"""The command lines the client builds, and the values it refuses before running anything (no drover run)."""

from __future__ import annotations

import re
import unittest

from drover.launch import launch_args
from drover.results import flat_row, flatten
from drover.server import parse_tasklist
from drover.sweep import prelaunch_args


class PrelaunchArgs(unittest.TestCase):
    def test_the_briefs_sweep(self) -> None:
        grid = {"--lr": [0.1, 0.01], "--seed": [1, 2]}
        argv = prelaunch_args("python train.py", grid, jobname="lr", tag=True)
        self.assertEqual(
            argv,
            ["prelaunch", "+command=python train.py", "+jobname=lr"]
            + ["+arg", "--lr", "0.1", "0.01", "+arg", "--seed", "1", "2", "+tag", "+q"],
        )

    def test_every_option(self) -> None:
        argv = prelaunch_args(
            "run",
            {"lr": 0.5},
            jobname="h",
            pos_args=[["a", "b"], "c"],
            flags=["--fast"],
            tag="--name",
            tag_args=["lr"],
            tag_number=False,
            arg_mode="hydra",
            jobfile="jobs/{jobname}.json",
            append=True,
        )
        self.assertEqual(
            argv,
            ["prelaunch", "+command=run", "+jobname=h", "+arg-mode=hydra", "+arg", "lr", "0.5"]
            + ["+pos-arg", "a", "b", "+pos-arg", "c", "+flag=--fast", "+tag=--name", "+tag-args", "lr"]
            + ["+no-tag-number", "+jobfile=jobs/{jobname}.json", "+append", "+q"],
        )

    def test_a_single_value_is_one_value_not_its_characters(self) -> None:
        argv = prelaunch_args("run", {"--name": "abc"}, jobname="j")
        self.assertEqual(argv[3:6], ["+arg", "--name", "abc"])

    def test_single_value_options_may_start_with_plus(self) -> None:
        argv = prelaunch_args("+x", jobname="j", flags=["+f"])
        self.assertIn("+command=+x", argv)
        self.assertIn("+flag=+f", argv)

    def test_values_the_grammar_cannot_carry_are_refused(self) -> None:
        for args, what in (
            ({"--lr": ["+1"]}, "'+1'"),
            ({"+arg": [1]}, "'+arg'"),
        ):
            with self.assertRaisesRegex(ValueError, re.escape(what)):
                prelaunch_args("run", args, jobname="j")
        with self.assertRaisesRegex(ValueError, "'\\+q'"):
            prelaunch_args("run", jobname="j", pos_args=[["+q"]])
        with self.assertRaisesRegex(TypeError, "None"):
            prelaunch_args("run", {"--lr": [None]}, jobname="j")  # type: ignore[list-item]
        with self.assertRaisesRegex(TypeError, "dict"):
            prelaunch_args("run", {"--lr": [{"a": 1}]}, jobname="j")  # type: ignore[list-item]
        with self.assertRaisesRegex(TypeError, "string"):
            prelaunch_args("run", jobname="j", flags="--fast")
        with self.assertRaisesRegex(TypeError, "list of value lists"):
            prelaunch_args("run", jobname="j", pos_args="ab")
        with self.assertRaisesRegex(ValueError, "arg_mode 'yaml'"):
            prelaunch_args("run", jobname="j", arg_mode="yaml")
        with self.assertRaisesRegex(TypeError, "jobname 3"):
            prelaunch_args("run", jobname=3)  # type: ignore[arg-type]


class LaunchArgs(unittest.TestCase):
    def test_the_briefs_launch(self) -> None:
        self.assertEqual(
            launch_args("lr", backend="local", max_tasks=4),
            ["launch", "--jobname=lr", "--json", "-q", "--backend=local", "--max-tasks", "4"],
        )

    def test_values_that_look_like_options_stay_values(self) -> None:
        argv = launch_args("lr", tasklist="-1", mem="4G", result="stdout", scheduler_args=["-V"])
        self.assertIn("--tasklist=-1", argv)
        self.assertEqual(argv[-2:], ["--", "-V"])
        self.assertIn("--result=stdout", argv)

    def test_signal(self) -> None:
        argv = launch_args("lr", task_timeout="1h", signal="USR1@5m")
        self.assertIn("--task-timeout=1h", argv)
        self.assertIn("--signal=USR1@5m", argv)
        self.assertNotIn("--signal", " ".join(launch_args("lr")))

    def test_requeue(self) -> None:
        argv = launch_args("lr", task_timeout="1h", signal="USR1@5m", requeue=3, requeue_exit=9)
        self.assertEqual(argv[argv.index("--requeue") + 1], "3")
        self.assertEqual(argv[argv.index("--requeue-exit") + 1], "9")
        self.assertNotIn("--requeue", launch_args("lr"))
        for bad in ("3", 2.5, True):
            with self.assertRaisesRegex(TypeError, "requeue="):
                launch_args("lr", requeue=bad)  # type: ignore[arg-type]

    def test_env(self) -> None:
        argv = launch_args("lr", env={"A": "x y; $B", "N": 1})
        self.assertEqual(argv[-2:], ["--env=A=x y; $B", "--env=N=1"])
        for env, error in (({"A=B": "1"}, ValueError), ({1: "x"}, ValueError), ({"A": None}, TypeError),
                           ({"A": True}, TypeError), (["A=1"], TypeError)):
            with self.assertRaises(error, msg=repr(env)):
                launch_args("lr", env=env)  # type: ignore[arg-type]

    def test_bad_values_are_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "give one"):
            launch_args("lr", failed=True, unfinished=True)
        with self.assertRaisesRegex(ValueError, "result='json'"):
            launch_args("lr", result="json")
        with self.assertRaisesRegex(TypeError, "max_tasks=2.5"):
            launch_args("lr", max_tasks=2.5)  # type: ignore[arg-type]
        with self.assertRaisesRegex(TypeError, "max_tasks=True"):
            launch_args("lr", max_tasks=True)
        with self.assertRaisesRegex(TypeError, "scheduler_args is a string"):
            launch_args("lr", scheduler_args="--exclusive")


class Flattening(unittest.TestCase):
    def test_nested_fields_get_dotted_names(self) -> None:
        self.assertEqual(
            flatten({"loss": 1, "metrics": {"acc": 0.5, "f1": {"macro": 2}}, "empty": {}, "list": [1, 2]}),
            {"loss": 1, "metrics.acc": 0.5, "metrics.f1.macro": 2, "empty": {}, "list": [1, 2]},
        )

    def test_a_row_is_task_state_tag_params_duration_results_in_that_order(self) -> None:
        row = {"task": 3, "state": "succeeded", "tag": "t", "params": {"--lr": "0.1"}, "duration_s": 1.5,
               "result": {"loss": 0.3}}
        flat = flat_row(row)
        self.assertEqual(list(flat), ["task", "state", "tag", "--lr", "duration_s", "loss"])
        self.assertEqual(flat["--lr"], "0.1")

    def test_names_that_collide_are_kept_apart(self) -> None:
        row = {"task": 1, "state": "failed", "tag": "", "params": {"task": "p", "loss": "q"},
               "duration_s": None, "result": {"task": 9, "loss": 2, "state": "r"}}
        self.assertEqual(
            flat_row(row),
            {"task": 1, "state": "failed", "tag": "", "params.task": "p", "loss": "q", "duration_s": None,
             "result.task": 9, "result.loss": 2, "result.state": "r"},
        )

    def test_no_result(self) -> None:
        row = {"task": 1, "state": "pending", "tag": "", "params": {}, "duration_s": None, "result": None}
        self.assertEqual(list(flat_row(row)), ["task", "state", "tag", "duration_s"])


class Tasklists(unittest.TestCase):
    def test_the_grammar(self) -> None:
        self.assertEqual(parse_tasklist("1-3,5,8-20:4"), {1, 2, 3, 5, 8, 12, 16, 20})

    def test_bad_tasklists(self) -> None:
        for bad in ("", "a", "0", "3-1", "1-5:0", "1-"):
            with self.assertRaises(ValueError, msg=bad):
                parse_tasklist(bad)


if __name__ == "__main__":
    unittest.main()
