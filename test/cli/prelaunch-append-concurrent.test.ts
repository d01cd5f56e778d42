import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { list } from '../helpers/contract.js';
import { runDrover, startDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

test('eight concurrent prelaunch +append runs leave every task exactly once, ids 1..N contiguous', async (t) => {
  const cwd = tempWorkspace(t);
  const first = await runDrover(
    ['prelaunch', '+command', 'echo base', '+jobname', 'J', '+pos-arg', 'a', 'b', '+q'],
    {
      cwd,
    },
  );
  assert.equal(first.code, 0, first.stderr);

  const runs = Array.from({ length: 8 }, (_, i) =>
    startDrover(
      ['prelaunch', '+command', `echo run${i}`, '+jobname', 'J', '+pos-arg', 'x', 'y', 'z', '+append', '+q'],
      { cwd },
    ),
  );
  const results = await Promise.all(runs.map((r) => r.result));
  for (const r of results) assert.equal(r.code, 0, r.stderr);

  const jobfile = JSON.parse(
    fs.readFileSync(path.join(cwd, '.drover', 'jobs', 'J', 'jobs.json'), 'utf8'),
  ) as Record<string, [string, string]>;
  const ids = Object.keys(jobfile).map(Number);
  assert.deepEqual(
    ids,
    Array.from({ length: 2 + 8 * 3 }, (_, i) => i + 1),
  );
  const expected = [
    'echo base a',
    'echo base b',
    ...Array.from({ length: 8 }, (_, i) => ['x', 'y', 'z'].map((v) => `echo run${i} ${v}`)).flat(),
  ];
  const commands = Object.values(jobfile).map(([cmd]) => cmd);
  assert.deepEqual([...commands].sort(), [...expected].sort());
  // The first prelaunch keeps ids 1-2, and each run's tasks stay together in their order.
  assert.deepEqual(commands.slice(0, 2), ['echo base a', 'echo base b']);
  for (let i = 0; i < 8; i++) {
    const at = commands.indexOf(`echo run${i} x`);
    assert.deepEqual(commands.slice(at, at + 3), [`echo run${i} x`, `echo run${i} y`, `echo run${i} z`]);
  }
  // The ledger agrees with the jobfile.
  const tasks = await list('J', { cwd });
  assert.deepEqual(
    tasks.map((x) => [x.task, x.command, x.state]),
    ids.map((id) => [id, jobfile[String(id)]![0], 'pending']),
  );
});
