import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runDrover } from '../helpers/drover.js';
import { tempWorkspace, writeScript } from '../helpers/workspace.js';

// Under both layouts: `--logs files` gives each attempt two files of its own; in segments (the default) a slot
// that frees up takes the next task, so two of the three tasks may share a slot's files (under load, often), and
// what keeps them apart is that their byte ranges of each file never overlap.
for (const logs of ['files', 'segments'] as const) {
  test(`each task gets DROVER_TASK_ID, DROVER_JOBNAME, DROVER_ATTEMPT and its own stdout and stderr logs (--logs ${logs})`, async (t) => {
    const cwd = tempWorkspace(t);
    writeScript(
      cwd,
      'env.sh',
      'echo "out $1 id=$DROVER_TASK_ID job=$DROVER_JOBNAME attempt=$DROVER_ATTEMPT"\necho "err $1 id=$DROVER_TASK_ID" >&2\n',
    );
    const pre = await runDrover(
      ['prelaunch', '+command', 'sh env.sh', '+jobname', 'Env', '+pos-arg', 'a', 'b', 'c'],
      { cwd },
    );
    assert.equal(pre.code, 0, pre.stderr);
    const launch = await runDrover(['launch', '--jobname', 'Env', '--max-tasks', '3', '--logs', logs, '-q'], {
      cwd,
    });
    assert.equal(launch.code, 0, launch.stderr);

    const places: { path: string; from: number; to: number }[] = [];
    for (const [id, arg] of [
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ] as const) {
      const out = await runDrover(['logs', 'Env', String(id)], { cwd });
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, `out ${arg} id=${id} job=Env attempt=1\n`);
      const err = await runDrover(['logs', 'Env', String(id), '--err'], { cwd });
      assert.equal(err.code, 0, err.stderr);
      assert.equal(err.stdout, `err ${arg} id=${id}\n`);
      for (const extra of [[], ['--err']]) {
        const p = await runDrover(['logs', 'Env', String(id), '--path', ...extra], { cwd });
        assert.equal(p.code, 0, p.stderr);
        const range = /bytes from (\d+) to (\d+)/.exec(p.stderr);
        assert.equal(range !== null, logs === 'segments', `a byte range exactly in segments: ${p.stderr}`);
        places.push({ path: p.stdout.trim(), from: Number(range?.[1] ?? 0), to: Number(range?.[2] ?? 0) });
      }
    }
    if (logs === 'files') {
      assert.equal(new Set(places.map((p) => p.path)).size, 6, 'six distinct log files');
      return;
    }
    for (const [i, a] of places.entries()) {
      assert.ok(a.to > a.from, `a slice of one line: ${JSON.stringify(a)}`);
      for (const b of places.slice(i + 1)) {
        const overlap = a.path === b.path && a.from < b.to && b.from < a.to;
        assert.ok(!overlap, `two slices overlap: ${JSON.stringify(a)} and ${JSON.stringify(b)}`);
      }
    }
  });
}

test('logs of a task that has not run, or is not in the job, exit 2 with one line', async (t) => {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(
    ['prelaunch', '+command', 'true', '+jobname', 'L', '+pos-arg', '1', '2', '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  for (const task of ['1', '3', 'x']) {
    const r = await runDrover(['logs', 'L', task], { cwd });
    assert.equal(r.code, 2, `logs L ${task}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
