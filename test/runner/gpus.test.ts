import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { counts, status } from '../helpers/contract.js';
import { lines, runDrover } from '../helpers/drover.js';
import { ledgerDump, snapshot, tempWorkspace, writeScript } from '../helpers/workspace.js';

// Writes its CUDA_VISIBLE_DEVICES, then waits (up to ~30 s, else exit 9) until its partner (1-2, 3-4) has
// written too, so partners certainly run at the same time.
const SCRIPT = `echo "$CUDA_VISIBLE_DEVICES" > "gpus.$DROVER_TASK_ID"
if [ $((DROVER_TASK_ID % 2)) -eq 1 ]; then partner=$((DROVER_TASK_ID + 1)); else partner=$((DROVER_TASK_ID - 1)); fi
i=0
while [ ! -f "gpus.$partner" ]; do i=$((i + 1)); [ $i -gt 600 ] && exit 9; sleep 0.05; done
`;

test('--gpus 2 with CUDA_VISIBLE_DEVICES=0,1,2,3: tasks running together get disjoint pairs', async (t) => {
  const cwd = tempWorkspace(t);
  writeScript(cwd, 'gpus.sh', SCRIPT);
  const pre = await runDrover(
    ['prelaunch', '+command', 'sh gpus.sh', '+jobname', 'G', '+pos-arg', '1', '2', '3', '4'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const r = await runDrover(['launch', '--jobname', 'G', '--gpus', '2', '--max-tasks', '4', '-q'], {
    cwd,
    env: { CUDA_VISIBLE_DEVICES: '0,1,2,3' },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual((await status('G', { cwd })).counts, counts({ succeeded: 4 }));
  const gpus = (id: number) =>
    fs
      .readFileSync(path.join(cwd, `gpus.${id}`), 'utf8')
      .trim()
      .split(',');
  for (const [a, b] of [
    [1, 2],
    [3, 4],
  ] as const) {
    const ga = gpus(a);
    const gb = gpus(b);
    assert.equal(ga.length, 2, `task ${a} got ${ga}`);
    assert.equal(gb.length, 2, `task ${b} got ${gb}`);
    assert.deepEqual([...ga, ...gb].sort(), ['0', '1', '2', '3'], `tasks ${a} and ${b}: ${ga} / ${gb}`);
  }
});

test('--gpus 2 with only one visible GPU exits 2 with one line and records no launch', async (t) => {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(
    ['prelaunch', '+command', 'true', '+jobname', 'G', '+pos-arg', '1', '2', '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const files = snapshot(cwd);
  const ledger = ledgerDump(cwd);
  const r = await runDrover(['launch', '--jobname', 'G', '--gpus', '2', '-q'], {
    cwd,
    env: { CUDA_VISIBLE_DEVICES: '0' },
  });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(lines(r.stderr).length, 1, r.stderr);
  assert.match(r.stderr, /--gpus/);
  assert.deepEqual(snapshot(cwd), files, 'no files written');
  assert.deepEqual(ledgerDump(cwd), ledger, 'ledger unchanged');
  assert.deepEqual((await status('G', { cwd })).counts, counts({ pending: 2 }));
});
