"""Job(server=URL, token=...) reads tasks and status from a real `drover server` in the test folder."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
import unittest

import drover

from .support import class_workspace

PY = shlex.quote(sys.executable)


class FromTheServer(unittest.TestCase):
    """One server for the class: started here, stopped by its pid (SIGTERM, then SIGKILL) afterwards."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.cwd = class_workspace(cls)
        fails_on_b = f"{PY} -c 'import sys; sys.exit(sys.argv[1] == \"b\")'"
        cls.local = drover.sweep(fails_on_b, pos_args=[["a", "b", "c"]], jobname="s", cwd=cls.cwd)
        cls.local.launch()
        cls.server = subprocess.Popen(
            drover.find_drover() + ["server", "start", "--port", "0"],
            cwd=cls.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        cls.addClassCleanup(cls.stop)
        info = cls.cwd / ".drover" / "server" / "server.json"
        token = cls.cwd / ".drover" / "server" / "token"
        deadline = time.monotonic() + 120  # a guard against a hang, not a measure
        while not (info.exists() and token.exists()):
            if time.monotonic() > deadline:
                raise RuntimeError("drover server wrote no server.json in 120 s")
            if cls.server.poll() is not None:
                stderr = cls.server.stderr.read().decode() if cls.server.stderr else ""
                raise RuntimeError(f"drover server exited: {stderr}")
            time.sleep(0.05)
        cls.url = json.loads(info.read_text())["url"]
        cls.token = token.read_text().strip()

    @classmethod
    def stop(cls) -> None:
        cls.server.terminate()
        try:
            cls.server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            cls.server.kill()
            cls.server.wait()
        if cls.server.stderr:
            cls.server.stderr.close()

    def job(self, name: str = "s", token: str = "") -> drover.Job:
        return drover.Job(name, cwd=self.cwd, server=self.url, token=token or self.token)

    def test_tasks_and_status_are_the_clis(self) -> None:
        self.assertEqual(self.job().tasks(), self.local.tasks())
        self.assertEqual(self.job().status()["counts"], self.local.status()["counts"])
        self.assertEqual([t["state"] for t in self.job().tasks()], ["succeeded", "failed", "succeeded"])

    def test_filters(self) -> None:
        self.assertEqual([t["task"] for t in self.job().tasks(state="failed")], [2])
        self.assertEqual([t["task"] for t in self.job().tasks(state=["succeeded"], tasklist="2-3")], [3])

    def test_a_bad_token_and_an_unknown_job_are_errors_with_the_servers_message(self) -> None:
        with self.assertRaises(drover.DroverError) as caught:
            self.job(token="drv_x_y").tasks()
        self.assertIn("401", caught.exception.message)
        self.assertIn("token", caught.exception.message)
        self.assertIsNone(caught.exception.exit_code)
        with self.assertRaises(drover.DroverError) as caught:
            self.job("nope").tasks()
        self.assertIn("no job named 'nope'", caught.exception.message)

    def test_a_server_that_is_not_there(self) -> None:
        with self.assertRaisesRegex(drover.DroverError, "cannot reach drover server"):
            drover.Job("s", server="http://127.0.0.1:1", token="t").tasks()


if __name__ == "__main__":
    unittest.main()
