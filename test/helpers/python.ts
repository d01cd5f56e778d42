import { spawnSync } from 'node:child_process';

/**
 * The interpreter `python3` on PATH runs, by its own path, for commands that tests start once per task. A version
 * manager's shim stands first on PATH on some machines (pyenv's is a bash script that runs `pyenv exec`): here it
 * costs 0.37 s a start against 0.03–0.07 s for the interpreter itself, and under a loaded test run ~6× that —
 * enough to push a 12-task Python sweep past its 30 s settle bound. The tasks still run the same interpreter.
 * `python3` itself when it cannot be asked (no python3: the tests that need it skip).
 */
export const PYTHON3: string = (() => {
  const r = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
  const exe = r.status === 0 ? r.stdout.trim() : '';
  return exe && /^[\w./+-]+$/.test(exe) ? exe : 'python3';
})();
