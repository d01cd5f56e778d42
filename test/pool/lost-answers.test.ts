import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { newWorkerSecret } from '../../src/protocol/worker-secret.js';
import { runDrover, startDrover } from '../helpers/drover.js';
import { FakeProxy } from './fake-proxy.js';
import {
  api,
  dumpLedger,
  endRecord,
  FakeWorker,
  poolToken,
  registration,
  startRecord,
} from './fake-worker.js';
import { attempts, poolWorkspace } from './helpers.js';
import { idlePool, launchOn, twoPools } from './two-pools.js';

/**
 * What a link cut at the wrong moment loses between a worker and the controller, and must not: the answer to
 * its first registration (it sends it again and must be the same worker, not a second one that nobody runs and
 * that is handed tasks), and a long poll left parked on a closed connection (what would answer it must wait for
 * the next poll). Spoken by hand over HTTP against a real controller, the cut made where it hurts.
 */

test('a first registration sent again, its answer lost, is the same worker: one row, its tasks handed to it', {
  timeout: 120_000,
}, async (t) => {
  const ctx = await twoPools(t);
  const { cwd } = ctx;
  const bToken = poolToken(cwd, 'b');
  const first = registration('b', { host: 'again', pid: 77, secret: newWorkerSecret() });
  const a = await api(ctx.server.url, 'POST', '/workers/register', bToken, first);
  assert.equal(a.status, 200, JSON.stringify(a.body));
  assert.equal(a.body.secret, undefined, 'a worker that chose its secret is given none');
  // Its answer is lost: the worker never learns its id. Tasks come meanwhile, and go to it.
  const launch = await launchOn(cwd, 'b', 'R', 2);
  const again = await api(ctx.server.url, 'POST', '/workers/register', bToken, first);
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.id, a.body.id, 'the same worker, not a second one nobody runs');
  const st = JSON.parse((await runDrover(['pool', 'status', 'b', '--json'], { cwd })).stdout) as {
    workers: { id: string; host: string }[];
  };
  assert.deepEqual(
    st.workers.filter((w) => w.host === 'again').map((w) => w.id),
    [a.body.id],
  );
  // What was handed to it before it learned its id is handed to it again, under the same attempt.
  const w = new FakeWorker(ctx.server.url, bToken, a.body.id as string, first.secret as string);
  const given = await w.take(2);
  assert.deepEqual(
    given.map((g) => [g.launch, g.task, g.attempt]).sort((x, y) => x[1]! - y[1]!),
    [
      [launch, 1, 1],
      [launch, 2, 1],
    ],
  );
  const rep = await w.call('/report', {
    batches: [
      {
        seq: 1,
        launch,
        records: given.flatMap((g) => [startRecord(g.task, g.attempt), endRecord(g.task, g.attempt)]),
      },
    ],
  });
  assert.equal(rep.status, 200, JSON.stringify(rep.body));
  assert.deepEqual(
    attempts(cwd, 'R').map((r) => [r.task_id, r.attempt, r.state]),
    [
      [1, 1, 'succeeded'],
      [2, 1, 'succeeded'],
    ],
  );

  // A secret too short to be one is refused, naming its length; nothing is written.
  const before = dumpLedger(cwd);
  const weak = await api(
    ctx.server.url,
    'POST',
    '/workers/register',
    bToken,
    registration('b', { secret: 'x'.repeat(31) }),
  );
  assert.equal(weak.status, 400);
  assert.match(weak.body.error!.message, /31 characters: choose at least 32 random ones/);
  assert.equal(dumpLedger(cwd), before);
  // The same secret from another host is another worker; with another pool's token, another pool's worker.
  const elsewhere = await api(ctx.server.url, 'POST', '/workers/register', bToken, {
    ...first,
    host: 'other',
  });
  assert.equal(elsewhere.status, 200);
  assert.notEqual(elsewhere.body.id, a.body.id);
  const otherPool = await api(ctx.server.url, 'POST', '/workers/register', poolToken(cwd, 'p'), {
    ...first,
    pool: 'p',
  });
  assert.equal(otherPool.status, 200);
  assert.notEqual(otherPool.body.id, a.body.id);
});

/** Write a poll of worker `w` on a connection of its own and keep it open (it parks: nothing waits for w). */
function parkPoll(url: string, w: FakeWorker): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ wait: 60 });
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), hostname, () => {
      sock.write(
        [
          `POST /v1/workers/${w.id}/poll HTTP/1.1`,
          `host: ${hostname}:${port}`,
          `authorization: Bearer ${w.token}`,
          `drover-worker-secret: ${w.secret}`,
          'content-type: application/json',
          `content-length: ${body.length}`,
          '',
          body,
        ].join('\r\n'),
      );
      resolve(sock);
    });
    sock.on('error', reject);
  });
}

test('a poll whose connection closed is answered no more: the task and its settings go with the next poll', {
  timeout: 120_000,
}, async (t) => {
  const ctx = await twoPools(t);
  const { cwd } = ctx;
  const bToken = poolToken(cwd, 'b');
  // b's honest worker holds 4 tasks in its 4 slots: b's next task is this one's.
  const w = await FakeWorker.register(ctx.server.url, bToken, 'b', { host: 'cut' });
  const sock = await parkPoll(ctx.server.url, w);
  // A heartbeat answered: the poll written before it is read and parked.
  assert.equal((await w.call('/heartbeat', {})).status, 200);
  const closed = new Promise((resolve) => sock.once('close', resolve));
  sock.destroy();
  await closed;
  // Another answered: the server has seen the poll's connection close.
  assert.equal((await w.call('/heartbeat', {})).status, 200);
  const launch = await launchOn(cwd, 'b', 'P', 1);
  const a = await w.call('/poll', { wait: 10 });
  assert.equal(a.status, 200, JSON.stringify(a.body));
  const tasks = a.body.tasks as { launch: number; task: number; attempt: number; settings?: unknown }[];
  assert.deepEqual(
    tasks.map((x) => [x.launch, x.task, x.attempt]),
    [[launch, 1, 1]],
    'the task went to the closed poll',
  );
  assert.ok(tasks[0]!.settings !== undefined, 'its launch settings come with it');
});

test('a real worker whose first registration’s answer is cut registers again as itself: nothing is lost', {
  timeout: 120_000,
}, async (t) => {
  // Lost after 3 s: a second worker made by the registration sent again would lose the tasks handed to the first.
  const { cwd, server } = await poolWorkspace(t, ['--lost-after', '3']);
  await idlePool(cwd, 'p');
  const proxy = new FakeProxy({ host: '127.0.0.1', port: server.port }, 0, 0);
  proxy.cutting = false;
  proxy.cutAnswers = 1;
  const url = await proxy.listen();
  t.after(() => proxy.close());
  fs.writeFileSync(path.join(cwd, 'wtoken'), `${poolToken(cwd, 'p')}\n`, { mode: 0o600 });
  const worker = startDrover(
    ['worker', '--server', url, '--token-file', 'wtoken', '--pool', 'p', '--slots', '2'],
    { cwd },
  );
  t.after(async () => {
    worker.child.kill('SIGTERM');
    await worker.result;
  });
  const l = await runDrover(
    ['launch', '--pool', 'p', '--num-jobs', '4', '--command', 'sleep 1', '--jobname', 'W', '--follow'],
    { cwd },
  );
  assert.equal(l.code, 0, l.stderr);
  assert.equal(proxy.cuts, 1, 'the first answer was cut');
  assert.deepEqual(
    attempts(cwd, 'W').map((r) => [r.task_id, r.attempt, r.state]),
    [1, 2, 3, 4].map((n) => [n, 1, 'succeeded']),
  );
  // Two workers ever registered: the pool's own (in its setup) and this one, once.
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT id, state, reason FROM pool_workers ORDER BY registered_at').all();
    assert.equal(rows.length, 2, JSON.stringify(rows));
  } finally {
    db.close();
  }
});
