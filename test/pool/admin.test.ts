import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { counts, status, statusWhen } from '../helpers/contract.js';
import { runDrover, startDrover } from '../helpers/drover.js';
import { tempWorkspace, waitFor, writeScript } from '../helpers/workspace.js';
import { api, FakeWorker, poolToken } from './fake-worker.js';
import { createPool, poolWorkspace, startServer } from './helpers.js';

interface Status {
  workers: { id: string; pid: number; state: string; reason: string | null }[];
  workers_gone: number;
  gone_reasons: string[];
}

async function poolStatus(cwd: string, name: string, all = false): Promise<Status> {
  const r = await runDrover(['pool', 'status', name, '--json', ...(all ? ['--all'] : [])], { cwd });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Status;
}

test('scaling counts live workers: after one of 2 was lost, scale --workers 2 starts one', {
  timeout: 120_000,
}, async (t) => {
  const { cwd } = await poolWorkspace(t);
  await createPool(cwd, 'p', ['--workers', '2', '--cpus', '1']);
  const [victim] = (await poolStatus(cwd, 'p')).workers;
  process.kill(victim!.pid, 'SIGKILL');
  await waitFor(
    'the killed worker to be lost',
    async () => (await poolStatus(cwd, 'p')).workers.length === 1,
  );
  assert.equal((await poolStatus(cwd, 'p', true)).workers.find((w) => w.id === victim!.id)?.state, 'lost');
  const r = await runDrover(['pool', 'scale', 'p', '--workers', '2'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  await waitFor(
    '2 workers ready again',
    async () => (await poolStatus(cwd, 'p')).workers.filter((w) => w.state === 'ready').length === 2,
  );
  // Scaling to what it has starts nothing more.
  assert.equal((await runDrover(['pool', 'scale', 'p', '--workers', '2'], { cwd })).code, 0);
  await new Promise((res) => setTimeout(res, 1500));
  assert.equal((await poolStatus(cwd, 'p')).workers.length, 2);
});

test('pool status shows live workers; --all the gone ones with why; a failed setup and an idle pool are said', {
  timeout: 120_000,
}, async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  const made = await runDrover(['pool', 'create', 's', '--workers', '1', '--setup', 'exit 3'], { cwd });
  assert.equal(made.code, 0, made.stderr);
  await waitFor('the worker to leave', async () => (await poolStatus(cwd, 's')).workers_gone === 1);
  const s = await poolStatus(cwd, 's');
  assert.deepEqual(s.workers, []);
  assert.deepEqual(s.gone_reasons, ['setup exited 3']);
  assert.equal((await poolStatus(cwd, 's', true)).workers[0]?.reason, 'setup exited 3');
  const text = await runDrover(['pool', 'status', 's'], { cwd });
  assert.match(
    text.stdout,
    /1 worker\(s\) lost or left \(drover pool status s --all\); latest: setup exited 3/,
  );
  // A launch onto it is taken, and says nothing will run.
  const l = await runDrover(['launch', '--pool', 's', '--num-jobs', '2', '--command', 'true'], { cwd });
  assert.equal(l.code, 0, l.stderr);
  assert.match(l.stderr, /pool s has no live worker: the tasks wait until one registers/);

  // Many workers come and go (as 3,000 fake registrations did): the default view lists only the live ones.
  const token = poolToken(cwd, 's');
  for (let i = 0; i < 30; i++) {
    const w = await FakeWorker.register(server.url, token, 's');
    assert.equal((await w.call('/leave', { reason: 'done' })).status, 200);
  }
  const after = await poolStatus(cwd, 's');
  assert.equal(after.workers.length, 0);
  assert.equal(after.workers_gone, 31);
  assert.equal((await poolStatus(cwd, 's', true)).workers.length, 31);
});

test('read commands create nothing; out-of-range and missing inputs are refused in words', {
  timeout: 120_000,
}, async (t) => {
  const empty = tempWorkspace(t);
  for (const args of [
    ['pool', 'status'],
    ['pool', 'status', 'p'],
    ['server', 'token', 'list'],
  ]) {
    const r = await runDrover(args, { cwd: empty });
    assert.ok(r.code === 0 || r.code === 2, `${args.join(' ')}: ${r.code} ${r.stderr}`);
    assert.ok(!fs.existsSync(path.join(empty, '.drover')), `${args.join(' ')} created .drover/`);
  }
  const { cwd, server } = await poolWorkspace(t);
  await createPool(cwd, 'p', ['--workers', '1']);
  const many = await runDrover(['launch', '--pool', 'p', '--num-jobs', '10000001', '--command', 'true'], {
    cwd,
  });
  assert.equal(many.code, 2);
  assert.match(many.stderr, /--num-jobs '10000001' is out of range: give a whole number from 1 to 10000000/);
  assert.equal(many.stderr.trim().split('\n').length, 1);
  // The API says it in words too.
  const raw = await api(server.url, 'POST', '/launches', server.token, {
    pool: 'p',
    cwd,
    command: 'true',
    num_jobs: 10_000_001,
  });
  assert.equal(raw.status, 400);
  assert.equal(raw.body.error?.message, "bad request: 'num_jobs' must be at most 10000000");

  fs.writeFileSync(path.join(cwd, 'keys.json'), '{"secret-key-abc": ["x", "y"]}');
  fs.writeFileSync(path.join(cwd, 'text.txt'), 'root:x:0:0:secret-line\n');
  const pre = await runDrover(['prelaunch', '+command', 'true', '+jobname', 'J', '+pos-arg', '1', '+q'], {
    cwd,
  });
  assert.equal(pre.code, 0, pre.stderr);
  const missing = await runDrover(
    ['launch', '--pool', 'p', '--jobname', 'J', '--jobfile', '/nonexist/x.json'],
    {
      cwd,
    },
  );
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, /\/nonexist\/x\.json does not exist/);
  for (const file of ['keys.json', 'text.txt']) {
    const a = await api(server.url, 'POST', '/launches', server.token, {
      pool: 'p',
      cwd,
      jobname: 'J',
      jobfile: path.join(cwd, file),
    });
    assert.ok(a.status >= 400 && a.status < 500, `${a.status}`);
    const text = JSON.stringify(a.body);
    assert.ok(!text.includes('secret'), `the answer echoes the file: ${text}`);
    assert.match(a.body.error!.message, /is not a jobfile/);
  }
  assert.deepEqual((await status('J', { cwd })).counts, counts({ pending: 1 }));
});

test('--follow rides out a controller restart on another port', { timeout: 180_000 }, async (t) => {
  const ctx = await poolWorkspace(t);
  const { cwd } = ctx;
  await createPool(cwd, 'p', ['--workers', '2', '--cpus', '1']);
  // The tasks wait for a gate file: they run until the server is back, however slow the machine (waiting to see
  // one-second tasks running raced them to their end under load).
  writeScript(cwd, 'gate.sh', 'while [ ! -e go ]; do sleep 0.1; done\n');
  const pre = await runDrover(
    ['prelaunch', '+command', 'sh gate.sh', '+jobname', 'F', '+pos-arg', '1', '2', '3', '4', '5', '6', '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const f = startDrover(['launch', '--pool', 'p', '--jobname', 'F', '--follow'], { cwd });
  await statusWhen('F', { cwd }, 'tasks running', (s) => s.counts.running > 0);
  ctx.server.proc.child.kill('SIGKILL');
  await ctx.server.proc.result;
  await new Promise((r) => setTimeout(r, 1500));
  ctx.server = await startServer(cwd);
  fs.writeFileSync(path.join(cwd, 'go'), '');
  const r = await f.result;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /lost the server .*: reconnecting/);
  assert.match(r.stderr, /the server is back/);
  assert.deepEqual((await status('F', { cwd })).counts, counts({ succeeded: 6 }));
});
