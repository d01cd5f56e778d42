import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { AttemptRecord } from '../../src/protocol/records.js';
import type { GroupFile } from '../../src/runner/group.js';
import { chooseStarter, Runner } from '../../src/runner/runner.js';
import { planSlots } from '../../src/runner/slots.js';
import { pidIn } from '../helpers/workspace.js';

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

test('keep-open runners sharing one starter take tasks as they come, with per-task env, and report every record', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-shared-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const slots = planSlots({ cpusAvailable: 2, maxTasks: 2 });
  const starter = chooseStarter(slots, process.env, dir, undefined);
  const seen: [number, AttemptRecord][] = [];
  const runners = [1, 2].map(
    (l) =>
      new Runner(group(dir, l), { onRecord: (r) => seen.push([l, r]) }, process.env, {
        starter,
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
  starter.close();
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

test('abandon stops exactly the named attempts, running or queued, and reports nothing of them', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-shared-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const slots = planSlots({ cpusAvailable: 1, maxTasks: 1 });
  const starter = chooseStarter(slots, process.env, dir, undefined);
  const seen: AttemptRecord[] = [];
  const runner = new Runner(group(dir, 1), { onRecord: (r) => seen.push(r) }, process.env, {
    starter,
    slots,
    keepOpen: true,
    lookahead: Number.POSITIVE_INFINITY,
  });
  const done = runner.run();
  runner.add([
    { id: 1, command: 'echo $$ > first.pid; exec sleep 60', attempt: 1 },
    { id: 2, command: 'touch two-ran', attempt: 1 },
    { id: 1, command: 'echo second', attempt: 2 },
  ]);
  const pidFile = path.join(dir, 'first.pid');
  // Running: its start reported (the runner heard from the starter) and its pid written (its shell runs).
  const running = () => pidIn(pidFile) !== undefined && seen.some((r) => r.type === 'start' && r.task === 1);
  for (let i = 0; i < 100 && !running(); i++) await new Promise((r) => setTimeout(r, 50));
  const pid = pidIn(pidFile);
  assert.ok(pid !== undefined, 'the first attempt runs and wrote its pid');
  runner.abandon([
    { task: 1, attempt: 1 },
    { task: 2, attempt: 1 },
  ]);
  runner.close();
  const summary = await done;
  starter.close();
  assert.throws(() => process.kill(pid, 0), 'the abandoned attempt’s process is gone');
  assert.equal(fs.existsSync(path.join(dir, 'two-ran')), false, 'the abandoned queued attempt never ran');
  // Another attempt of the same task is not touched: it runs, and only it is reported after the abandon.
  assert.equal(fs.readFileSync(path.join(dir, 'logs1', '1.2.out'), 'utf8'), 'second\n');
  const reported = seen
    .filter((r) => r.type === 'start' || r.type === 'end' || r.type === 'skip')
    .map((r) => [r.type, r.task, 'attempt' in r ? r.attempt : 0]);
  assert.deepEqual(reported, [
    ['start', 1, 1],
    ['start', 1, 2],
    ['end', 1, 2],
  ]);
  assert.deepEqual(summary, { succeeded: 1 });
  // The runner's own record file says what became of them.
  const file = fs.readFileSync(runner.recordsFile, 'utf8');
  assert.match(file, /"type":"end","task":1,"attempt":1,"at":[\d.]+,"state":"cancelled"/);
  assert.match(file, /"type":"skip","task":2/);
});
