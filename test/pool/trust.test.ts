import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { list } from '../helpers/contract.js';
import { runDrover } from '../helpers/drover.js';
import {
  api,
  dumpLedger,
  endRecord,
  FakeWorker,
  poolToken,
  registration,
  startRecord,
} from './fake-worker.js';
import { startServer, type TestServer } from './helpers.js';
import { twoPools } from './two-pools.js';

/** The attempts row of a task. */
function attemptRow(cwd: string, job: string, task: number) {
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true });
  try {
    return db
      .prepare(
        `SELECT host, stdout_path, stderr_path, state, stdout_off, stdout_end, log_seq FROM attempts
         WHERE task_id = ? AND job_id = (SELECT id FROM jobs WHERE name = ?)`,
      )
      .get(task, job) as
      | {
          host: string;
          stdout_path: string;
          stderr_path: string;
          state: string;
          stdout_off: number | null;
          stdout_end: number | null;
          log_seq: number | null;
        }
      | undefined;
  } finally {
    db.close();
  }
}

test('a worker may report only the attempts it was given, and never a direct launch; log paths are the controller’s', {
  timeout: 120_000,
}, async (t) => {
  const { cwd, server, directLaunch, bLaunch, honest, given, evil } = await twoPools(t);
  const g = given[0]!;
  const before = dumpLedger(cwd);
  // A host is shown in tables: one with control characters (a newline would forge a row) is refused.
  for (const host of ['a\nb', 'x\u0000', 'tab\there', '\u001b[2J']) {
    const r = await api(
      server.url,
      'POST',
      '/workers/register',
      poolToken(cwd, 'b'),
      registration('b', { host }),
    );
    assert.equal(r.status, 400, `host ${JSON.stringify(host)}: ${JSON.stringify(r.body)}`);
  }
  assert.equal(dumpLedger(cwd), before);
  // Where the attempt's output is in the worker's slot segments (the pool launch keeps segments, the default).
  const span = (slot: number) => ({
    start: { slot, out_off: 5, err_off: 7, seq: 0 },
    end: { out_end: 9, err_end: 7 },
  });
  const report = (launch: number, task: number, attempt: number, out = '/etc/passwd', where = span(0)) => ({
    batches: [
      {
        seq: 1,
        launch,
        records: [
          startRecord(task, attempt, { out, host: 'attacker', ...where.start }),
          endRecord(task, attempt, where.end),
        ],
      },
    ],
  });
  // Another pool's worker reports a task of pool b's launch; then one of a direct launch.
  for (const [w, body] of [
    [evil, report(bLaunch, g.task, g.attempt)],
    [evil, report(directLaunch, 1, 1)],
    [evil, report(directLaunch, 1, 2)],
    // The honest worker, beyond what it was given: another attempt, a task it does not hold, a direct launch.
    [honest, report(bLaunch, g.task, g.attempt + 1)],
    [honest, report(bLaunch, 99, 1)],
    [honest, report(directLaunch, 1, 1)],
  ] as const) {
    const a = await w.call('/report', body);
    assert.equal(a.status, 403, JSON.stringify(a.body));
    assert.equal(a.body.error?.code, 'not-yours');
    assert.ok((a.body.error?.refused?.length ?? 0) > 0);
    assert.equal(dumpLedger(cwd), before, 'a refused report changes nothing');
  }
  // An end of an attempt that never started, a start twice, a skip of a started task: refused too.
  const e = await honest.call('/report', {
    batches: [{ seq: 1, launch: bLaunch, records: [endRecord(g.task, g.attempt)] }],
  });
  assert.equal(e.status, 403);
  assert.equal(dumpLedger(cwd), before);
  // A batch with no record names a launch too: one that is not open is refused (it was a 500).
  for (const launch of [directLaunch, bLaunch + 1, 999]) {
    const a = await honest.call('/report', { batches: [{ seq: 1, launch, records: [] }] });
    assert.equal(a.status, 403, JSON.stringify(a.body));
    assert.equal(dumpLedger(cwd), before);
  }
  // Tasks handed to a worker that has not started them are queued, as `list` says, not running.
  const st = JSON.parse((await runDrover(['pool', 'status', 'b', '--json'], { cwd })).stdout) as {
    running: number;
    queued: number;
  };
  assert.deepEqual([st.running, st.queued], [0, given.length]);

  // Its own task: taken, with the log paths the controller decides and the host the worker registered.
  const ok = await honest.call('/report', report(bLaunch, g.task, g.attempt));
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  const row = attemptRow(cwd, 'B', g.task)!;
  assert.equal(row.state, 'succeeded');
  assert.equal(row.host, 'fakehost');
  // Its slot's segment under the launch's log folder, named by the worker's id; the range it said.
  assert.equal(
    row.stdout_path,
    path.join(cwd, '.drover', 'logs', 'B', String(bLaunch), `${honest.id}.0.out`),
  );
  assert.deepEqual([row.stdout_off, row.stdout_end, row.log_seq], [5, 9, 0]);
  const logs = await runDrover(['logs', 'B', String(g.task), '--path'], { cwd });
  assert.equal(logs.stdout.trim(), row.stdout_path);
  // A slot the worker does not have names no segment: the attempt is recorded without a log.
  const g2 = given[1]!;
  const off = await honest.call('/report', {
    batches: [
      {
        seq: 2,
        launch: bLaunch,
        records: report(bLaunch, g2.task, g2.attempt, 'x', span(4)).batches[0]!.records,
      },
    ],
  });
  assert.equal(off.status, 200, JSON.stringify(off.body));
  assert.deepEqual(
    [attemptRow(cwd, 'B', g2.task)!.stdout_path, attemptRow(cwd, 'B', g2.task)!.stdout_off],
    ['', null],
  );
  assert.ok(!(await runDrover(['logs', 'B', String(g.task)], { cwd })).stdout.includes('root:'));
  // The direct launch's task is as it ran.
  assert.deepEqual(
    (await list('D', { cwd })).map((x) => x.state),
    ['succeeded'],
  );
  // A replay of the applied report is answered and applies nothing again; its end cannot come twice.
  const replay = await honest.call('/report', report(bLaunch, g.task, g.attempt));
  assert.equal(replay.status, 200);
  const again = await honest.call('/report', {
    batches: [{ seq: 3, launch: bLaunch, records: [endRecord(g.task, g.attempt, { state: 'failed' })] }],
  });
  assert.equal(again.status, 403);
  assert.equal(attemptRow(cwd, 'B', g.task)!.state, 'succeeded');
});

test('a worker’s id is the controller’s and bound to its secret: no one else may register, poll or report as it', {
  timeout: 120_000,
}, async (t) => {
  const ctx = await twoPools(t);
  const { cwd, honest, evil, bLaunch, given } = ctx;
  const bToken = poolToken(cwd, 'b');
  const pToken = poolToken(cwd, 'p');
  assert.notEqual(honest.id, evil.id);
  assert.match(honest.id, /^fakehost-4242-[0-9a-f]{8}$/);
  const before = dumpLedger(cwd);
  const hijacks = [
    // Registering under b's live worker id, with either token, without or with a wrong secret.
    api(ctx.server.url, 'POST', '/workers/register', pToken, registration('p', { id: honest.id, slots: 64 })),
    api(
      ctx.server.url,
      'POST',
      '/workers/register',
      pToken,
      registration('p', { id: honest.id, secret: 'x' }),
    ),
    api(
      ctx.server.url,
      'POST',
      '/workers/register',
      bToken,
      registration('b', { id: honest.id, secret: 'x' }),
    ),
    api(
      ctx.server.url,
      'POST',
      '/workers/register',
      pToken,
      registration('p', { id: honest.id, secret: honest.secret }),
    ),
    // Speaking for it without its secret, with a wrong one, or with p's token.
    honest.call('/poll', { wait: 0 }, null),
    honest.call('/heartbeat', {}, 'not-the-secret'),
    honest.call('/leave', { reason: 'evil' }, evil.secret),
    new FakeWorker(ctx.server.url, pToken, honest.id, honest.secret).call('/heartbeat', {}),
    new FakeWorker(ctx.server.url, bToken, honest.id, 'x').call('/report', {
      batches: [{ seq: 1, launch: bLaunch, records: [startRecord(given[0]!.task, given[0]!.attempt)] }],
    }),
  ];
  for (const a of await Promise.all(hijacks)) {
    assert.ok(a.status === 400 || a.status === 403, `${a.status} ${JSON.stringify(a.body)}`);
  }
  assert.equal(dumpLedger(cwd), before, 'refused identity claims change nothing');
  const unknown = await new FakeWorker(ctx.server.url, bToken, 'nobody-1-00000000', 'x').call('/poll', {
    wait: 0,
  });
  assert.equal(unknown.status, 409);
  // The honest worker still holds its tasks and its row.
  const st = JSON.parse((await runDrover(['pool', 'status', 'b', '--json'], { cwd })).stdout) as {
    workers: { id: string; host: string; tasks: string[] }[];
  };
  const row = st.workers.find((w) => w.id === honest.id)!;
  assert.equal(row.host, 'fakehost');
  assert.equal(row.tasks.length, 4);

  // It registers again with its secret (as after a lost answer), and after a controller restart on another
  // port: same id, no new secret, its tasks still its own.
  const holding = given.map((x) => ({ launch: x.launch, task: x.task }));
  const again = await api(
    ctx.server.url,
    'POST',
    '/workers/register',
    bToken,
    registration('b', { id: honest.id, secret: honest.secret, holding }),
  );
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.id, honest.id);
  assert.equal(again.body.secret, undefined);
  ctx.server.proc.child.kill('SIGKILL');
  await ctx.server.proc.result;
  const next: TestServer = await startServer(cwd, ['--lost-after', '120']);
  ctx.server = next;
  const back = await api(
    next.url,
    'POST',
    '/workers/register',
    bToken,
    registration('b', { id: honest.id, secret: honest.secret, holding }),
  );
  assert.equal(back.status, 200, JSON.stringify(back.body));
  assert.equal(back.body.id, honest.id);
  const moved = new FakeWorker(next.url, bToken, honest.id, honest.secret);
  const g = given[0]!;
  const rep = await moved.call('/report', {
    batches: [
      { seq: 1, launch: bLaunch, records: [startRecord(g.task, g.attempt), endRecord(g.task, g.attempt)] },
    ],
  });
  assert.equal(rep.status, 200, JSON.stringify(rep.body));
  const stolen = await api(
    next.url,
    'POST',
    '/workers/register',
    pToken,
    registration('p', { id: honest.id, secret: 'guess' }),
  );
  assert.equal(stolen.status, 403);
});

test('every record field is checked: a bad one is a 400 naming it, never a 500', {
  timeout: 120_000,
}, async (t) => {
  const { cwd, honest, bLaunch, given } = await twoPools(t);
  const g = given[0]!;
  const before = dumpLedger(cwd);
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { type: 'start', attempt: 1, at: 1, pid: 1, slot: 0, gpus: null, host: 'h', out: 'o', err: 'e' },
      /'batches\[0\]\.records\[0\]\.task' is missing/,
    ],
    [
      startRecord(g.task, g.attempt, { host: { a: 1 } }),
      /'batches\[0\]\.records\[0\]\.host' must be a string/,
    ],
    [
      startRecord(g.task, g.attempt, { gpus: [] }),
      /'batches\[0\]\.records\[0\]\.gpus' must be a string or null/,
    ],
    [startRecord(g.task, g.attempt, { pid: -1 }), /'batches\[0\]\.records\[0\]\.pid' must be at least 0/],
    [startRecord(g.task, g.attempt, { sneaky: true }), /'batches\[0\]\.records\[0\]\.sneaky' is not a field/],
    [endRecord(g.task, g.attempt, { state: 'lost' }), /'batches\[0\]\.records\[0\]\.state' must be one of/],
    [
      endRecord(g.task, g.attempt, { exit_code: '0' }),
      /'batches\[0\]\.records\[0\]\.exit_code' must be an integer or null/,
    ],
    [endRecord(g.task, g.attempt, { retry: true }), /'batches\[0\]\.records\[0\]\.retry' is not a field/],
    [
      { type: 'runner-end', at: 1, reason: 'done' },
      /'batches\[0\]\.records\[0\]\.type' must be one of the record types/,
    ],
    [
      { type: 'skip', task: g.task, at: 1, state: 'succeeded' },
      /'batches\[0\]\.records\[0\]\.state' must be "cancelled"/,
    ],
  ];
  for (const [rec, message] of cases) {
    const a = await honest.call('/report', { batches: [{ seq: 1, launch: bLaunch, records: [rec] }] });
    assert.equal(a.status, 400, `${JSON.stringify(rec)}: ${a.status} ${JSON.stringify(a.body)}`);
    assert.match(a.body.error!.message, message);
  }
  const noBatches = await honest.call('/report', { batches: 'x' });
  assert.equal(noBatches.status, 400);
  assert.match(noBatches.body.error!.message, /'batches' must be an array/);
  assert.equal(dumpLedger(cwd), before);
});

test('a report is at most 1 MiB, and one worker has one report in flight at a time', {
  timeout: 120_000,
}, async (t) => {
  const { cwd, honest, bLaunch, given } = await twoPools(t);
  const g = given[0]!;
  const before = dumpLedger(cwd);
  // 2 MiB of records: refused before it is parsed, and the worker reads the answer (the body is drained).
  const huge = {
    batches: [
      {
        seq: 1,
        launch: bLaunch,
        records: Array.from({ length: 3000 }, () =>
          endRecord(g.task, g.attempt, { reason: 'x'.repeat(700) }),
        ),
      },
    ],
  };
  const big = await honest.call('/report', huge);
  assert.equal(big.status, 413, JSON.stringify(big.body).slice(0, 200));
  assert.equal(big.body.error?.code, 'too-large');
  assert.equal(dumpLedger(cwd), before);

  // A report whose body is still coming holds the worker's turn: a second one meanwhile is 409 busy.
  const http = await import('node:http');
  const body = JSON.stringify({
    batches: [{ seq: 1, launch: bLaunch, records: [startRecord(g.task, g.attempt)] }],
  });
  const first = new Promise<number>((resolve, reject) => {
    const req = http.request(`${honest.url}/v1/workers/${honest.id}/report`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${honest.token}`,
        'drover-worker-secret': honest.secret,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.write(body.slice(0, 10));
    setTimeout(async () => {
      const second = await honest.call('/report', { batches: [] });
      assert.equal(second.status, 409);
      assert.equal(second.body.error?.code, 'busy');
      req.end(body.slice(10));
    }, 300);
  });
  assert.equal(await first, 200);
  assert.equal(
    (await honest.call('/report', { batches: [] })).status,
    200,
    'its turn is back after the answer',
  );
});
