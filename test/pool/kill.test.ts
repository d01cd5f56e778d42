import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { counts, list, status, statusWhen } from '../helpers/contract.js';
import { runDrover } from '../helpers/drover.js';
import { attempts, createPool, poolWorkspace, startServer } from './helpers.js';

/** Prelaunch `n` tasks that sleep, then mark their run in runs/<task> (a task stopped mid-way marks nothing). */
async function sleepers(cwd: string, job: string, n: number, seconds: string): Promise<void> {
  fs.mkdirSync(path.join(cwd, 'runs'), { recursive: true });
  fs.writeFileSync(
    path.join(cwd, 'mark.sh'),
    `sleep ${seconds}\necho "$DROVER_ATTEMPT $DROVER_WORKER" >> "runs/$DROVER_TASK_ID"\n`,
  );
  const values = Array.from({ length: n }, (_, i) => String(i + 1));
  const pre = await runDrover(
    ['prelaunch', '+command', 'sh mark.sh', '+jobname', job, '+pos-arg', ...values, '+q'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
}

/**
 * Each task ran to its end exactly once (one line in its runs file), unless `excused(task, lines)` accepts
 * its lines (lines are `ATTEMPT WORKER`).
 */
function ranOnce(cwd: string, n: number, excused = (_task: number, _lines: string[]) => false): void {
  for (let task = 1; task <= n; task++) {
    const f = path.join(cwd, 'runs', String(task));
    assert.ok(fs.existsSync(f), `task ${task} never ran to its end`);
    const lines = fs.readFileSync(f, 'utf8').trim().split('\n');
    if (excused(task, lines)) continue;
    assert.equal(lines.length, 1, `task ${task} ran to its end ${lines.length} times`);
  }
}

test('SIGKILL of one worker mid-run: its running task shows a lost attempt and succeeds elsewhere; no other task runs twice', async (t) => {
  const { cwd } = await poolWorkspace(t);
  const n = 120;
  await sleepers(cwd, 'K', n, '0.3');
  await createPool(cwd, 'p', ['--workers', '4', '--cpus', '1']);
  const r = await runDrover(
    ['launch', '--pool', 'p', '--jobname', 'K', '--retries', '2', '--retry-delay', '0'],
    { cwd },
  );
  assert.equal(r.code, 0, r.stderr);
  await statusWhen('K', { cwd }, '20 tasks done', (s) => s.counts.succeeded >= 20);
  const ps = await runDrover(['pool', 'status', 'p', '--json'], { cwd });
  const victim = (
    JSON.parse(ps.stdout) as { workers: { id: string; pid: number; tasks: string[] }[] }
  ).workers.find((w) => w.tasks.length > 0)!;
  process.kill(victim.pid, 'SIGKILL');

  await statusWhen('K', { cwd }, 'the launch to end', (s) => s.counts.succeeded === n, 90_000);
  const s = await status('K', { cwd });
  assert.deepEqual(s.counts, counts({ succeeded: n }));
  const rows = attempts(cwd, 'K');
  const lost = rows.filter((a) => a.state === 'lost');
  assert.ok(lost.length >= 1, 'the killed worker had a running attempt: it must be lost');
  assert.ok(
    lost.length <= 2,
    `only the killed worker's running attempt is lost (1 slot), got ${lost.length}`,
  );
  for (const a of lost) {
    const later = rows.filter((b) => b.task_id === a.task_id && b.attempt > a.attempt);
    assert.deepEqual(
      later.map((b) => b.state),
      ['succeeded'],
    );
  }
  for (let task = 1; task <= n; task++) {
    assert.equal(rows.filter((a) => a.task_id === task && a.state === 'succeeded').length, 1, `task ${task}`);
  }
  // A task of the victim's that ended just before the kill, its report not yet sent, ran to its end and was
  // still run again: that run is the lost attempt's, on the victim. Every other task ran to its end once.
  const lostTasks = new Set(lost.map((a) => a.task_id));
  ranOnce(cwd, n, (task, lines) => {
    if (!lostTasks.has(task) || lines.length !== 2) return false;
    const first = lost.find((a) => a.task_id === task)!;
    assert.equal(lines[0], `${first.attempt} ${victim.id}`, `task ${task}'s first run is its lost attempt's`);
    return true;
  });
  const listed = await list('K', { cwd });
  for (const a of lost) assert.equal(listed[a.task_id - 1]!.attempts, a.attempt + 1);
  // The killed worker's pool goes on with 3 workers; the dead one is shown lost.
  const after = JSON.parse((await runDrover(['pool', 'status', 'p', '--json', '--all'], { cwd })).stdout) as {
    workers: { pid: number; state: string }[];
  };
  assert.equal(after.workers.find((w) => w.pid === victim.pid)!.state, 'lost');
});

test('SIGKILL of the server mid-run, then a restart: the launch completes, nothing lost, nothing run twice', async (t) => {
  const ctx = await poolWorkspace(t);
  const { cwd } = ctx;
  const n = 200;
  await sleepers(cwd, 'S', n, '0.1');
  await createPool(cwd, 'p', ['--workers', '2', '--cpus', '2']);
  const r = await runDrover(['launch', '--pool', 'p', '--jobname', 'S'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  await statusWhen('S', { cwd }, '30 tasks done', (s) => s.counts.succeeded >= 30);
  ctx.server.proc.child.kill('SIGKILL');
  await ctx.server.proc.result;
  // The workers go on with what they hold and keep its records until a controller takes them.
  await new Promise((res) => setTimeout(res, 1000));
  ctx.server = await startServer(cwd, ['--lost-after', '5'], ctx.server.port);
  await statusWhen('S', { cwd }, 'the launch to end', (s) => s.counts.succeeded === n, 120_000);
  const s = await status('S', { cwd });
  assert.deepEqual(s.counts, counts({ succeeded: n }));
  const rows = attempts(cwd, 'S');
  assert.equal(rows.length, n, 'one attempt per task: nothing lost, nothing rerun');
  assert.ok(rows.every((a) => a.state === 'succeeded' && a.attempt === 1));
  ranOnce(cwd, n);
});

test('SIGKILL of the server, then a restart on another port: workers come back under their own ids, nothing lost', async (t) => {
  const ctx = await poolWorkspace(t);
  const { cwd } = ctx;
  const n = 120;
  await sleepers(cwd, 'N', n, '0.1');
  await createPool(cwd, 'p', ['--workers', '2', '--cpus', '2']);
  const ids = async () =>
    (
      JSON.parse((await runDrover(['pool', 'status', 'p', '--json'], { cwd })).stdout) as {
        workers: { id: string; state: string }[];
      }
    ).workers
      .filter((w) => w.state === 'ready')
      .map((w) => w.id)
      .sort();
  const before = await ids();
  assert.equal(before.length, 2);
  const r = await runDrover(['launch', '--pool', 'p', '--jobname', 'N'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  await statusWhen('N', { cwd }, '20 tasks done', (s) => s.counts.succeeded >= 20);
  const oldPort = ctx.server.port;
  ctx.server.proc.child.kill('SIGKILL');
  await ctx.server.proc.result;
  await new Promise((res) => setTimeout(res, 1000));
  // Keep the old port busy so the new controller cannot get it: the workers must find the new one.
  const net = await import('node:net');
  const blocker = net.createServer((sock) => sock.destroy());
  await new Promise<void>((res, rej) => {
    blocker.once('error', rej);
    blocker.listen(oldPort, '127.0.0.1', () => res());
  }).catch(() => {});
  t.after(() => blocker.close());
  ctx.server = await startServer(cwd, ['--lost-after', '5']);
  assert.notEqual(ctx.server.port, oldPort);
  await statusWhen('N', { cwd }, 'the launch to end', (s) => s.counts.succeeded === n, 120_000);
  const rows = attempts(cwd, 'N');
  assert.equal(rows.length, n, 'one attempt per task: nothing lost, nothing rerun');
  assert.ok(rows.every((a) => a.state === 'succeeded' && a.attempt === 1));
  ranOnce(cwd, n);
  assert.deepEqual(await ids(), before, 'the same workers, under the ids the controller gave them');
});
