"""The client against the real drover CLI: sweep, tasks, launch, status, logs, rerun, wait and errors."""

from __future__ import annotations

import json
import os
import shlex
import sys
import unittest

import drover
from drover.cli import Drover

from .support import WorkspaceTest

PY = shlex.quote(sys.executable)

# Fails (exit 3) for the value 'b' until a file named `marker` exists; prints its arguments on both streams.
FLAKY = """\
import os, sys
print("out", *sys.argv[1:])
print("err", *sys.argv[1:], file=sys.stderr)
if "b" in sys.argv[1:] and not os.path.exists("marker"):
    sys.exit(3)
"""


class Sweep(WorkspaceTest):
    def test_a_sweep_makes_the_job_drover_prelaunch_makes(self) -> None:
        job = drover.sweep(
            "python train.py", {"--lr": [0.1, 0.01], "--seed": [1, 2]}, jobname="lr", tag=True, cwd=self.cwd
        )
        self.assertIsInstance(job, drover.Job)
        self.assertEqual(job.name, "lr")
        by_hand = self.cli(
            "prelaunch", "+command", "python train.py", "+jobname", "hand", "+arg", "--lr", "0.1", "0.01",
            "+arg", "--seed", "1", "2", "+tag", "+q",
        )
        self.assertEqual(by_hand.returncode, 0, by_hand.stderr)
        hand = drover.Job("hand", cwd=self.cwd).tasks()
        tasks = job.tasks()
        self.assertEqual([t["task"] for t in tasks], [1, 2, 3, 4])
        self.assertEqual(
            [t["command"] for t in tasks],
            [t["command"].replace("hand_", "lr_") for t in hand],
        )
        self.assertEqual(tasks[0]["command"], "python train.py --lr 0.1 --seed 1 --tag lr_1__lr_0.1__seed_1")
        self.assertEqual(tasks[3]["tag"], "lr_4__lr_0.01__seed_2")
        self.assertTrue(all(t["state"] == "pending" and t["attempts"] == 0 for t in tasks))
        jobfile = json.loads((self.cwd / ".drover" / "jobs" / "lr" / "jobs.json").read_text())
        self.assertEqual([jobfile[k][0] for k in sorted(jobfile, key=int)], [t["command"] for t in tasks])

    def test_positional_values_flags_and_hydra_mode(self) -> None:
        job = drover.sweep("run", {"lr": [1, 2]}, jobname="h", pos_args=[["x"]], flags=["--fast"],
                           arg_mode="hydra", cwd=self.cwd)
        commands = sorted(t["command"] for t in job.tasks())
        expected = ["run x lr=1 --fast", "run x lr=2 --fast", "run x lr=1", "run x lr=2"]
        self.assertEqual(commands, sorted(expected))

    def test_values_go_into_the_command_as_they_are_so_quote_what_the_shell_should_not_read(self) -> None:
        value = "a b; echo $HOME"
        job = drover.sweep(
            f"{PY} -c 'import sys; print(sys.argv[1:])'", pos_args=[[value, shlex.quote(value)]], jobname="q",
            cwd=self.cwd,
        )
        self.assertEqual(job.launch().exit_code, 0)
        self.assertEqual(job.logs(1), f"['a', 'b']\n{os.environ['HOME']}\n")
        self.assertEqual(job.logs(2), "['a b; echo $HOME']\n")

    def test_a_bad_jobname_is_drovers_error_with_exit_code_2_and_nothing_written(self) -> None:
        with self.assertRaises(drover.DroverError) as caught:
            drover.sweep("run", {"--lr": [1]}, jobname="bad name", cwd=self.cwd)
        err = caught.exception
        self.assertIsInstance(err, Exception)
        self.assertEqual(err.exit_code, 2)
        self.assertIn('"bad name"', err.message)
        self.assertRegex(err.message, "letters, digits")
        self.assertFalse(err.message.startswith("drover:"))
        self.assertIn("+jobname=bad name", err.argv)
        self.assertIn(err.message, str(err))
        self.assertEqual(self.files(), [])

    def test_names_that_look_like_options_or_hold_control_characters_are_refused_by_name(self) -> None:
        drover.sweep("echo", pos_args=[["a"]], jobname="ok", cwd=self.cwd)
        for name in ("--help", "-x", "--json", "a\x01b", "", "a/b"):
            for call in (
                lambda j: j.status(),
                lambda j: j.tasks(),
                lambda j: j.logs(1),
                lambda j: j.launch(),
            ):  # results(): in test_results
                with self.assertRaises(drover.DroverError, msg=repr(name)) as caught:
                    call(drover.Job(name, cwd=self.cwd))
                self.assertEqual(caught.exception.exit_code, 2, (name, caught.exception.message))
        with self.assertRaises(drover.DroverError) as caught:
            drover.sweep("echo", pos_args=[["a"]], jobname="--help", cwd=self.cwd)
        self.assertIn('"--help"', caught.exception.message)

    def test_a_job_stays_in_the_folder_it_was_made_in(self) -> None:
        here = os.getcwd()
        os.chdir(self.cwd)
        try:
            job = drover.sweep("echo", pos_args=[["a"]], jobname="here")
        finally:
            os.chdir(here)
        self.assertEqual(job.cwd, str(self.cwd))
        self.assertEqual([t["command"] for t in job.tasks()], ["echo a"])

    def test_a_folder_that_is_missing_or_not_a_folder_is_named(self) -> None:
        missing = self.cwd / "no-such-folder"
        afile = self.write("a-file", "")
        for cwd, says in ((missing, "does not exist"), (afile, "is not a folder")):
            for call in (
                lambda: drover.Job("x", cwd=cwd).status(),
                lambda: drover.sweep("echo", pos_args=[["a"]], jobname="x", cwd=cwd),
            ):
                with self.assertRaises(drover.DroverError) as caught:
                    call()
                message = caught.exception.message
                self.assertTrue(message.startswith(f"cwd={cwd} {says}: "), message)
                self.assertIsNone(caught.exception.exit_code)
        self.assertFalse(missing.exists())

    def test_a_sweep_runs_in_the_folder_its_job_names_home_expanded(self) -> None:
        (self.cwd / "home" / "exp").mkdir(parents=True)
        saved = os.environ.get("HOME")
        os.environ["HOME"] = str(self.cwd / "home")
        try:
            job = drover.sweep("echo", pos_args=[["a"]], jobname="tilde", cwd="~/exp")
        finally:
            if saved is not None:
                os.environ["HOME"] = saved
        self.assertEqual(job.cwd, str(self.cwd / "home" / "exp"))
        self.assertEqual([t["command"] for t in job.tasks()], ["echo a"])

    def test_a_job_that_does_not_exist(self) -> None:
        with self.assertRaises(drover.DroverError) as caught:
            drover.Job("nope", cwd=self.cwd).status()
        self.assertEqual(caught.exception.exit_code, 2)
        self.assertIn("'nope'", caught.exception.message)


class LaunchAndRerun(WorkspaceTest):
    def setUp(self) -> None:
        super().setUp()
        self.write("flaky.py", FLAKY)
        self.job = drover.sweep(f"{PY} flaky.py", pos_args=[["a", "b", "c"]], jobname="f", cwd=self.cwd)

    def test_a_failed_task_is_a_status_not_an_exception_and_rerun_runs_only_it(self) -> None:
        first = self.job.launch(backend="local", max_tasks=4, wait=True)
        self.assertIsInstance(first, drover.Launched)
        self.assertEqual((first.exit_code, first.ok), (1, False))
        self.assertEqual((first.launch, first.backend, first.tasks, first.tasklist), ("1", "local", 3, "1-3"))
        self.assertEqual(first.counts["succeeded"], 2)
        self.assertEqual(first.counts["failed"], 1)

        status = self.job.status()
        self.assertEqual(status["jobname"], "f")
        self.assertEqual(status["counts"]["failed"], 1)
        self.assertEqual(status["counts"]["succeeded"], 2)
        self.assertEqual([(f["task"], f["exit_code"]) for f in status["failed"]], [(2, 3)])
        tasks = self.job.tasks()
        self.assertEqual([(t["task"], t["state"], t["exit_code"]) for t in tasks],
                         [(1, "succeeded", 0), (2, "failed", 3), (3, "succeeded", 0)])
        self.assertEqual([t["task"] for t in self.job.tasks(state="failed")], [2])
        some = self.job.tasks(state=["failed", "succeeded"], tasklist="2-3")
        self.assertEqual([t["task"] for t in some], [2, 3])

        self.assertEqual(self.job.logs(2), "out b\n")
        self.assertEqual(self.job.logs(2, err=True), "err b\n")
        self.assertEqual(self.job.logs(3), "out c\n")

        self.write("marker", "")
        again = self.job.rerun(failed=True)
        self.assertEqual((again.exit_code, again.launch, again.tasklist), (0, "2", "2"))
        self.assertEqual(self.job.status()["counts"]["succeeded"], 3)
        self.assertEqual(self.job.logs(2, attempt=1, err=True), "err b\n")
        retried = [t for t in self.job.tasks() if t["task"] == 2][0]
        self.assertEqual((retried["state"], retried["attempts"], retried["launch"]), ("succeeded", 2, "2"))

        nothing = self.job.rerun(failed=True)
        self.assertIsNone(nothing.launch)
        self.assertEqual((nothing.tasks, nothing.exit_code), (0, 0))
        self.assertIsNone(self.job.rerun(failed=False).launch)

    def test_unfinished_reruns_what_never_ran(self) -> None:
        self.assertEqual(self.job.launch(tasklist="1").exit_code, 0)
        rest = self.job.rerun(failed=False)
        self.assertEqual((rest.tasklist, rest.exit_code), ("2-3", 1))

    def test_a_detached_launch_then_wait(self) -> None:
        started = self.job.launch(wait=False)
        self.assertEqual(started.tasks, 3)
        self.assertIsNone(started.counts)
        for bad in (0, -1, float("nan")):
            with self.assertRaisesRegex(ValueError, "poll="):
                self.job.wait(poll=bad)
        status = self.job.wait(poll=0.1)
        self.assertEqual(status["counts"]["queued"] + status["counts"]["running"], 0)
        self.assertEqual(status["counts"]["succeeded"] + status["counts"]["failed"], 3)

    def test_env_reaches_every_task_as_text_and_drovers_own_names_are_refused(self) -> None:
        job = drover.sweep(f"{PY} -c 'import os; print(os.environ[\"GREETING\"])'", pos_args=[["1", "2"]],
                           jobname="e", cwd=self.cwd)
        self.assertEqual(job.launch(env={"GREETING": "a b; $HOME `x`"}).exit_code, 0)
        self.assertEqual([job.logs(1), job.logs(2)], ["a b; $HOME `x`\n"] * 2)
        with self.assertRaises(drover.DroverError) as caught:
            job.launch(env={"DROVER_TASK_ID": "9"})
        self.assertEqual(caught.exception.exit_code, 2)
        self.assertIn("DROVER_TASK_ID", caught.exception.message)

    def test_signal_warns_each_task_before_its_time_limit(self) -> None:
        # The task saves "its work" on SIGUSR1 and exits 0; drover's limit (6 s) would end it as timeout.
        warned = (
            "import os, signal, sys, time\n"
            "def save(*_):\n"
            "    print('saved', os.environ['DROVER_TIME_LEFT_S'])\n"
            "    sys.exit(0)\n"
            "signal.signal(signal.SIGUSR1, save)\n"
            "time.sleep(30)\n"
        )
        (self.cwd / "warned.py").write_text(warned)
        job = drover.sweep(f"{PY} warned.py", jobname="w", cwd=self.cwd)
        done = job.launch(task_timeout=6, signal="USR1@4")
        self.assertEqual((done.exit_code, done.counts["succeeded"]), (0, 1), done.data)
        self.assertEqual(job.logs(1), "saved 6\n")
        with self.assertRaises(drover.DroverError) as caught:
            job.launch(task_timeout=6, signal="KILL@4")
        self.assertEqual(caught.exception.exit_code, 2)
        self.assertIn("KILL", caught.exception.message)

    def test_a_task_that_checkpoints_is_requeued_and_resumes(self) -> None:
        # drover.on_checkpoint saves on the warning and exits 75; the next attempt resumes (DROVER_RESUME=1).
        ckpt = (
            "import os, time, drover\n"
            "step = int(open('ck').read()) if drover.resuming() else 0\n"
            "print('attempt', os.environ['DROVER_ATTEMPT'], 'from', step, flush=True)\n"
            "drover.on_checkpoint(lambda: open('ck', 'w').write(str(step)))\n"
            "while step < 6:\n"
            "    time.sleep(1)\n"
            "    step += 1\n"
            "print('done', step)\n"
        )
        (self.cwd / "ckpt.py").write_text(ckpt)
        job = drover.sweep(f"{PY} ckpt.py", jobname="ck", cwd=self.cwd)
        done = job.launch(task_timeout=8, signal="USR1@4", requeue=2)
        self.assertEqual((done.exit_code, done.counts["succeeded"]), (0, 1), done.data)
        self.assertEqual(job.status()["requeues"], 1)
        task = job.tasks()[0]
        self.assertEqual((task["attempts"], task["requeues"]), (2, 1))
        self.assertRegex(job.logs(1), r"^attempt 2 from [1-5]\ndone 6\n$")
        with self.assertRaises(drover.DroverError) as caught:
            job.launch(requeue=2)
        self.assertEqual(caught.exception.exit_code, 2)
        self.assertIn("--requeue 2 needs a time limit to requeue at", caught.exception.message)

    def test_checkpoint_helpers_refuse_what_they_cannot_do(self) -> None:
        with self.assertRaisesRegex(ValueError, "cannot be caught"):
            drover.on_checkpoint(lambda: None, signal="KILL")
        with self.assertRaisesRegex(ValueError, "is not a signal"):
            drover.watch_for_checkpoint(signal="USR9")
        with self.assertRaisesRegex(TypeError, "not callable"):
            drover.on_checkpoint("save")  # type: ignore[arg-type]
        self.assertEqual(drover.REQUEUE_EXIT, 75)
        self.assertFalse(drover.checkpoint_requested())

    def test_a_dry_run_runs_and_records_nothing(self) -> None:
        dry = self.job.launch(dry_run=True, tasklist="1,3")
        self.assertIsNone(dry.launch)
        self.assertEqual((dry.tasks, dry.tasklist, dry.data.get("dry_run")), (2, "1,3", True))
        self.assertEqual(self.job.status()["launches"], [])
        self.assertTrue(all(t["state"] == "pending" for t in self.job.tasks()))

    def test_bad_launch_values_are_drovers_errors(self) -> None:
        for kwargs, named in (
            ({"max_tasks": 0}, "--max-tasks '0'"),
            ({"mem": "lots"}, "lots"),
            ({"duration": "-1"}, "-1"),
            ({"tasklist": "1-99"}, "4-99"),
            ({"backend": "cloud"}, "cloud"),
        ):
            with self.assertRaises(drover.DroverError, msg=str(kwargs)) as caught:
                self.job.launch(**kwargs)
            self.assertEqual(caught.exception.exit_code, 2, kwargs)
            self.assertIn(named, caught.exception.message, kwargs)
        self.assertEqual(self.job.status()["launches"], [])

    def test_logs_of_a_task_that_never_ran_or_does_not_exist(self) -> None:
        for task, named in ((1, "no attempt yet"), (9, "task 9 is not in job 'f'")):
            with self.assertRaises(drover.DroverError) as caught:
                self.job.logs(task)
            self.assertIn(named, caught.exception.message)
            self.assertEqual(caught.exception.exit_code, 2)
        with self.assertRaises(TypeError):
            self.job.logs("1")  # type: ignore[arg-type]


class FindingDrover(WorkspaceTest):
    def test_drover_bin_and_an_explicit_program(self) -> None:
        program = drover.find_drover()
        self.assertEqual(drover.find_drover(program), program)
        done = Drover(cwd=self.cwd, drover=program).run(["--version"])
        self.assertRegex(done.stdout, r"\d+\.\d+\.\d+")

    def test_a_program_that_is_not_there(self) -> None:
        missing = str(self.cwd / "no-such-drover")
        with self.assertRaises(drover.DroverError) as caught:
            drover.Job("x", cwd=self.cwd, drover=missing).status()
        self.assertIsNone(caught.exception.exit_code)
        self.assertIn("no-such-drover", caught.exception.message)

    def test_a_drover_bin_that_does_not_exist(self) -> None:
        saved = os.environ.get("DROVER_BIN")
        os.environ["DROVER_BIN"] = str(self.cwd / "gone" / "drover.cjs")
        try:
            with self.assertRaisesRegex(drover.DroverError, "DROVER_BIN .*gone/drover.cjs does not exist"):
                drover.find_drover()
        finally:
            if saved is not None:
                os.environ["DROVER_BIN"] = saved

    def test_a_drover_that_crashes_says_why(self) -> None:
        crash = self.write(
            "crash.sh",
            "#!/bin/sh\necho 'at line 3' >&2\necho 'Error: Cannot find module x' >&2\n"
            "echo '  at Module._load' >&2\nexit 1\n",
        )
        crash.chmod(0o755)
        with self.assertRaises(drover.DroverError) as caught:
            drover.Job("x", cwd=self.cwd, drover=str(crash)).status()
        err = caught.exception
        self.assertEqual((err.message, err.exit_code), ("Error: Cannot find module x", 1))

    def test_not_on_path_and_no_drover_bin(self) -> None:
        saved = {k: os.environ.get(k) for k in ("PATH", "DROVER_BIN")}
        os.environ["PATH"] = str(self.cwd)
        os.environ.pop("DROVER_BIN", None)
        try:
            with self.assertRaisesRegex(drover.DroverError, "DROVER_BIN"):
                drover.find_drover()
        finally:
            for k, v in saved.items():
                if v is not None:
                    os.environ[k] = v


if __name__ == "__main__":
    unittest.main()
