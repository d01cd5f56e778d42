import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { RunSettings } from '../../src/runner/group.js';
import { singleEnv, writeSingleRunner } from '../../src/runner/single.js';

/** A launch folder with a task table for the single-task runner, and a way to run one group of it. */
function setup(tasks: [number, string][], extra: Partial<RunSettings> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-single-'));
  const settings: RunSettings = {
    v: 1,
    job: 'j',
    launch: 7,
    retries: 0,
    retryDelay: 0,
    killGrace: 1,
    logDir: path.join(dir, 'logs'),
    recordsDir: path.join(dir, 'records'),
    cancelDir: path.join(dir, 'cancel'),
    cwd: dir,
    ...extra,
  };
  const { table, script } = writeSingleRunner(
    dir,
    new Map(tasks.map(([id, command]) => [id, { id, command, attempt: 1 }])),
  );
  const env = { ...process.env, ...singleEnv(settings) };
  const records = (key: number) => {
    const file = fs.readdirSync(settings.recordsDir).find((f) => f.startsWith(`g${key}.`))!;
    return fs
      .readFileSync(path.join(settings.recordsDir, file), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  return { dir, settings, table, script, env, records };
}

test('runs its task with the DROVER_* environment and writes the runner’s records and logs', (t) => {
  const s = setup([[3, 'echo "a\tb" $DROVER_TASK_ID $DROVER_ATTEMPT $DROVER_JOBNAME $DROVER_LAUNCH']]);
  t.after(() => fs.rmSync(s.dir, { recursive: true, force: true }));
  const r = spawnSync('perl', [s.script, s.table, '3'], { env: s.env });
  assert.equal(r.status, 0);
  assert.equal(fs.readFileSync(path.join(s.settings.logDir, '3.1.out'), 'utf8'), 'a\tb 3 1 j 7\n');
  const recs = s.records(3);
  assert.deepEqual(
    recs.map((x) => x.type),
    ['runner', 'start', 'end', 'runner-end'],
  );
  assert.equal(recs[2]!.state, 'succeeded');
  assert.equal(recs[2]!.exit_code, 0);
});

test('retries a failing task, numbering attempts, and records the exit code', (t) => {
  const s = setup([[1, 'exit 3']], { retries: 2 });
  t.after(() => fs.rmSync(s.dir, { recursive: true, force: true }));
  assert.equal(spawnSync('perl', [s.script, s.table, '1'], { env: s.env }).status, 1);
  const ends = s.records(1).filter((x) => x.type === 'end');
  assert.deepEqual(
    ends.map((e) => [e.attempt, e.state, e.exit_code, e.retry ?? false]),
    [
      [1, 'failed', 3, true],
      [2, 'failed', 3, true],
      [3, 'failed', 3, false],
    ],
  );
});

test('a task killed by a signal ends killed, even when quoted for a shell', (t) => {
  const s = setup([[1, "sh -c 'kill -9 $$'"]]);
  t.after(() => fs.rmSync(s.dir, { recursive: true, force: true }));
  spawnSync('perl', [s.script, s.table, '1'], { env: s.env });
  const end = s.records(1).find((x) => x.type === 'end')!;
  assert.equal(end.state, 'killed');
  assert.equal(end.signal, 'SIGKILL');
});

test('the time limit ends an attempt as timeout', (t) => {
  const s = setup([[1, 'sleep 30']], { taskTimeout: 1 });
  t.after(() => fs.rmSync(s.dir, { recursive: true, force: true }));
  spawnSync('perl', [s.script, s.table, '1'], { env: s.env });
  const end = s.records(1).find((x) => x.type === 'end')!;
  assert.equal(end.state, 'timeout');
});

test('SIGTERM stops the task: killed for a scheduler stop, cancelled when drover cancel asked', async (t) => {
  const s = setup([
    [1, 'sleep 30'],
    [2, 'sleep 30'],
  ]);
  t.after(() => fs.rmSync(s.dir, { recursive: true, force: true }));
  fs.mkdirSync(s.settings.cancelDir, { recursive: true });
  fs.writeFileSync(path.join(s.settings.cancelDir, '1-1.json'), JSON.stringify({ tasks: [2], at: 0 }));
  for (const key of [1, 2]) {
    const p = spawn('perl', [s.script, s.table, String(key)], { env: s.env });
    // Wait for the start record, then stop the runner as a scheduler would.
    for (let i = 0; i < 200; i++) {
      const started =
        fs.existsSync(s.settings.recordsDir) &&
        fs.readdirSync(s.settings.recordsDir).some((f) => f.startsWith(`g${key}.`)) &&
        s.records(key).some((x) => x.type === 'start');
      if (started) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    p.kill('SIGTERM');
    await new Promise((r) => p.on('exit', r));
  }
  assert.equal(s.records(1).find((x) => x.type === 'end')!.state, 'killed');
  assert.equal(s.records(2).find((x) => x.type === 'end')!.state, 'cancelled');
});

test('a fractional or zero kill grace still ends in SIGKILL (Perl’s alarm(0.5) would be no alarm at all)', (t) => {
  for (const killGrace of [0.5, 0]) {
    const s = setup([[1, 'trap "" TERM; sleep 30']], { taskTimeout: 0.5, killGrace });
    t.after(() => fs.rmSync(s.dir, { recursive: true, force: true }));
    // Hang guard: without the SIGKILL the task sleeps its 30 s.
    const r = spawnSync('perl', [s.script, s.table, '1'], { env: s.env, timeout: 15_000 });
    assert.equal(r.signal, null, `the runner was stopped by the hang guard (kill grace ${killGrace})`);
    const end = s.records(1).find((x) => x.type === 'end')!;
    assert.equal(end.state, 'timeout');
    assert.equal(end.signal, 'SIGKILL');
    assert.match(String(end.reason), /time limit of 0\.5 s/);
  }
});
