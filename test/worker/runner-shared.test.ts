import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { AttemptRecord } from '../../src/protocol/records.js';
import type { GroupFile } from '../../src/runner/group.js';
import { chooseExecutor, Runner } from '../../src/runner/runner.js';
import { planSlots } from '../../src/runner/slots.js';

function group(dir: string, launch: number): GroupFile {
  return {
    v: 1,
    job: `J${launch}`,
    launch,
    retries: 0,
    retryDelay: 0,
    killGrace: 1,
    logDir: path.join(dir, `logs${launch}`),
    recordsDir: path.join(dir, `records${launch}`),
    cancelDir: path.join(dir, 'none'),
    cwd: dir,
    group: 'w',
    tasks: [],
  };
}

test('keep-open runners sharing one executor take tasks as they come, with per-task env, and report every record', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-shared-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const slots = planSlots({ cpusAvailable: 2, maxTasks: 2 });
  const executor = chooseExecutor(slots, process.env, dir, undefined);
  const seen: [number, AttemptRecord][] = [];
  const runners = [1, 2].map(
    (l) =>
      new Runner(group(dir, l), { onRecord: (r) => seen.push([l, r]) }, process.env, {
        executor,
        slots,
        keepOpen: true,
        lookahead: Number.POSITIVE_INFINITY,
      }),
  );
  const done = runners.map((r) => r.run());
  runners[0]!.add([
    { id: 1, command: 'echo "$DROVER_JOBNAME $DROVER_LAUNCH $RANK"', attempt: 1, env: { RANK: '0' } },
  ]);
  runners[1]!.add([{ id: 1, command: 'echo "$DROVER_JOBNAME $DROVER_LAUNCH"', attempt: 3 }]);
  await new Promise((r) => setTimeout(r, 300));
  runners[0]!.add([{ id: 2, command: 'exit 3', attempt: 1 }]);
  for (const r of runners) r.close();
  const [a, b] = await Promise.all(done);
  executor.close();
  assert.deepEqual(a, { succeeded: 1, failed: 1 });
  assert.deepEqual(b, { succeeded: 1 });
  assert.equal(fs.readFileSync(path.join(dir, 'logs1', '1.1.out'), 'utf8'), 'J1 1 0\n');
  assert.equal(fs.readFileSync(path.join(dir, 'logs2', '1.3.out'), 'utf8'), 'J2 2\n');
  const ends = seen
    .filter(([, r]) => r.type === 'end')
    .map(([l, r]) => [l, (r as { task: number }).task, (r as { state: string }).state]);
  assert.deepEqual(
    ends.sort(),
    [
      [1, 1, 'succeeded'],
      [1, 2, 'failed'],
      [2, 1, 'succeeded'],
    ].sort(),
  );
  assert.ok(seen.some(([, r]) => r.type === 'runner-end'));
});
