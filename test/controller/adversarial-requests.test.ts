import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { api, dumpLedger, endRecord, poolToken, registration, startRecord } from '../pool/fake-worker.js';
import { twoPools } from '../pool/two-pools.js';

/**
 * The API under attack, by property: random and hostile requests with user, worker and bad tokens — forged
 * launches, tasks, attempts, worker ids and pools, wrong types, huge fields — each get a 4xx and leave the ledger
 * exactly as it was (every row of every table), as docs/concepts.md invariant 3 asks. None of them is something the token
 * may do: the honest worker's own reports, polls and leaves are left out (they change what they may). Slow
 * clients, whose answers are timed, are adversarial.test.ts's (it runs alone).
 */

/** A request: its route and what is sent. */
interface Req {
  what: string;
  method: string;
  route: string;
  token: string | undefined;
  body: unknown;
  headers: Record<string, string>;
  /** For a bad field: its name must be in the 400's message. */
  names?: string;
}

/** Values that are wrong for each record field, whatever the record. */
const BAD: Record<string, unknown[]> = {
  task: [0, -1, 1.5, '1', null, {}, [], 2e9],
  attempt: [0, -1, '1', null, 1.5],
  at: [-1, 1e12, '1', null, {}],
  pid: [-1, 2 ** 31, '1', null],
  slot: [-2, '0', null, 1.5],
  gpus: [[], {}, 1, 'x'.repeat(5000)],
  host: [{}, [], 1, null, 'x'.repeat(300)],
  out: [1, null, {}, 'x'.repeat(5000)],
  err: [[], false],
  state: ['lost', 'error', 'running', 'x', 1, null],
  exit_code: ['0', 1.5, {}, 2 ** 40],
  signal: [1, {}, 'x'.repeat(40)],
  reason: [1, null, 'x'.repeat(1001)],
};
const START_FIELDS = ['task', 'attempt', 'at', 'pid', 'slot', 'gpus', 'host', 'out', 'err'];
const END_FIELDS = ['task', 'attempt', 'at', 'state', 'exit_code', 'signal', 'reason'];

test('hostile requests get a 4xx and leave the ledger byte for byte as it was', {
  timeout: 600_000,
}, async (t) => {
  const ctx = await twoPools(t, 3600);
  const { cwd, server, honest, evil, given, bLaunch, directLaunch } = ctx;
  const url = server.url;
  const tokens = { user: server.token, p: poolToken(cwd, 'p'), b: poolToken(cwd, 'b') };
  // The honest worker has started one of its tasks; the others are held, not started.
  const [run, ...held] = given;
  const started = await honest.call('/report', {
    batches: [{ seq: 1, launch: bLaunch, records: [startRecord(run!.task, run!.attempt)] }],
  });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const seq = 2;
  const before = dumpLedger(cwd);
  const own = { 'drover-worker-secret': honest.secret };
  const asHonest = (route: string, body: unknown, what: string, names?: string): Req => ({
    what,
    method: 'POST',
    route: `/workers/${honest.id}${route}`,
    token: tokens.b,
    body,
    headers: own,
    ...(names !== undefined ? { names } : {}),
  });
  const report = (records: unknown[], launch = bLaunch) => ({ batches: [{ seq: seq, launch, records }] });

  const text = fc.string({ maxLength: 40 });
  const anyTask = fc.oneof(
    fc.constantFrom(...given.map((g) => g.task)),
    fc.integer({ min: 1, max: 1_000_000_000 }),
  );
  const attempt = fc.integer({ min: 1, max: 1_000_000_000 });

  // A record that is certainly not the honest worker's to write, and where it hides.
  const forged = fc.oneof(
    // Another launch: pool p's none, the direct launch, one that does not exist.
    fc
      .tuple(fc.constantFrom(directLaunch, bLaunch + 1, 999_999), anyTask, attempt)
      .map(([l, task, a]) => ({ launch: l, records: [startRecord(task, a), endRecord(task, a)] })),
    // Another launch, with no record at all (this was a 500).
    fc.constantFrom(directLaunch, bLaunch + 1, 999_999).map((l) => ({ launch: l, records: [] as unknown[] })),
    // Its launch, a task it does not hold.
    fc
      .tuple(fc.integer({ min: 5, max: 1_000_000 }), attempt)
      .map(([task, a]) => ({ launch: bLaunch, records: [startRecord(task, a), endRecord(task, a)] })),
    // A task it holds, another attempt.
    fc
      .tuple(fc.constantFrom(...given), fc.integer({ min: 1, max: 50 }))
      .filter(([g, a]) => a !== g.attempt)
      .map(([g, a]) => ({ launch: bLaunch, records: [startRecord(g.task, a)] })),
    // Its started task: started again, or skipped; its unstarted ones: ended without a start.
    fc.constant({ launch: bLaunch, records: [startRecord(run!.task, run!.attempt)] }),
    fc.constant({ launch: bLaunch, records: [{ type: 'skip', task: run!.task, at: 1, state: 'cancelled' }] }),
    // (not held[0]: a legit record below starts that one)
    fc
      .constantFrom(...held.slice(1))
      .map((g) => ({ launch: bLaunch, records: [endRecord(g.task, g.attempt, { state: 'failed' })] })),
    // An end twice.
    fc.constant({
      launch: bLaunch,
      records: [endRecord(run!.task, run!.attempt), endRecord(run!.task, run!.attempt, { state: 'failed' })],
    }),
  );
  // Records it may write, to go with a forged one: the whole report must still be refused.
  const legit = fc.constantFrom(
    [] as unknown[],
    [endRecord(run!.task, run!.attempt)],
    [startRecord(held[0]!.task, held[0]!.attempt)],
  );

  const forgedReports = fc.tuple(legit, forged, fc.boolean()).map(([ok, bad, first]): Req => {
    const batches =
      bad.launch === bLaunch
        ? [{ seq, launch: bLaunch, records: first ? [...bad.records, ...ok] : [...ok, ...bad.records] }]
        : [
            { seq, launch: bLaunch, records: ok },
            { seq: seq + 1, launch: bad.launch, records: bad.records },
          ];
    return asHonest('/report', { batches }, 'a forged report');
  });

  const badFields = fc
    .tuple(fc.constantFrom('start', 'end'), fc.nat(), fc.nat(), fc.constantFrom('bad', 'missing', 'extra'))
    .map(([type, i, j, how]): Req => {
      const fields = type === 'start' ? START_FIELDS : END_FIELDS;
      const field = fields[i % fields.length]!;
      const g = given[0]!;
      const rec: Record<string, unknown> =
        type === 'start' ? startRecord(g.task, g.attempt) : endRecord(g.task, g.attempt);
      let names = field;
      if (how === 'bad') rec[field] = BAD[field]![j % BAD[field]!.length];
      else if (how === 'missing' && field !== 'reason') delete rec[field];
      else {
        names = 'sneaky';
        rec.sneaky = 1;
      }
      return asHonest('/report', report([rec]), `a ${type} record with ${how} ${names}`, names);
    });

  const badTypes = fc
    .tuple(fc.constantFrom('runner', 'runner-end', 'x', 1, null), fc.constantFrom(...given))
    .map(([type, g]) =>
      asHonest('/report', report([{ ...startRecord(g.task, g.attempt), type }]), 'a bad type', 'type'),
    );

  // Bodies of no route's shape: not objects, or not JSON at all.
  const junkBodies = fc
    .tuple(
      fc.constantFrom('/report', '/poll', '/heartbeat', '/leave'),
      fc.oneof(
        fc.jsonValue().filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)),
        fc.constantFrom('{"batches": [', 'nan', '{"a":1}}', ''),
      ),
    )
    .map(([route, body]) => asHonest(route, typeof body === 'string' ? body : JSON.stringify(body), 'junk'));

  // Shapes that are wrong for their route.
  const wrongShapes = fc.constantFrom(
    asHonest('/poll', { wait: -1 }, 'poll wait -1'),
    asHonest('/poll', { wait: 121 }, 'poll wait 121'),
    asHonest('/poll', { wait: '1' }, 'poll wait "1"'),
    asHonest('/heartbeat', { stop: 'drain' }, 'heartbeat with a field'),
    asHonest('/leave', { reason: 5 }, 'leave reason 5'),
    asHonest('/leave', { reason: 'x'.repeat(1001) }, 'leave reason too long'),
    asHonest('/report', { batches: [{ seq: 0, launch: bLaunch, records: [] }] }, 'seq 0'),
    asHonest('/report', { batches: [{ seq: 1.5, launch: bLaunch, records: [] }] }, 'seq 1.5'),
    asHonest('/report', { batches: [{ seq: 9, launch: '1', records: [] }] }, 'launch "1"'),
    asHonest('/report', { batches: [], extra: 1 }, 'report with an extra field'),
  );

  // Speaking for a worker one is not: another's id, an unknown one, without or with a wrong secret.
  const identities = fc
    .tuple(
      fc.constantFrom('/report', '/poll', '/heartbeat', '/leave'),
      fc.constantFrom(honest.id, evil.id, 'nobody-1-00000000'),
      fc.constantFrom(tokens.p, tokens.b),
      fc.oneof(fc.constant(null), text, fc.constantFrom(evil.secret, honest.secret)),
    )
    .filter(
      ([, id, token, secret]) =>
        !(id === honest.id && token === tokens.b && secret === honest.secret) &&
        !(id === evil.id && token === tokens.p && secret === evil.secret),
    )
    .map(([route, id, token, secret]): Req => {
      const body =
        route === '/poll'
          ? { wait: 0 }
          : route === '/heartbeat'
            ? {}
            : route === '/leave'
              ? { reason: 'hijacked' }
              : report([startRecord(held[0]!.task, held[0]!.attempt)]);
      return {
        what: `${route} as ${id}`,
        method: 'POST',
        route: `/workers/${id}${route}`,
        token,
        body,
        headers: secret === null ? {} : { 'drover-worker-secret': secret },
      };
    });

  // Registering as someone else, for another pool, or with a bad shape.
  const registrations = fc
    .oneof(
      fc
        .tuple(fc.constantFrom(honest.id, evil.id, 'nobody-1-00000000'), fc.option(text, { nil: undefined }))
        .map(([id, secret]) => registration('b', { id, ...(secret !== undefined ? { secret } : {}) })),
      fc.constant(registration('p', { id: honest.id, secret: honest.secret })),
      fc.constant(registration('p')), // b's token for pool p
      fc.constant(registration('nope')),
      fc.constantFrom(
        registration('b', { host: { a: 1 } }),
        registration('b', { pid: 0 }),
        registration('b', { slots: 0 }),
        registration('b', { resources: { cpus: 'x', gpus: 0, mem_mb: 0 } }),
        registration('b', { holding: [{ launch: 1 }] }),
        registration('b', { element: '../../etc' }),
        registration('b', { id: '../x', secret: 's' }),
        registration('b', { host: 'x'.repeat(300) }),
      ),
    )
    .map(
      (body): Req => ({
        what: `register ${JSON.stringify(body).slice(0, 80)}`,
        method: 'POST',
        route: '/workers/register',
        token: tokens.b,
        body,
        headers: {},
      }),
    );

  // User routes with worker tokens; any route with no token or a made-up one.
  const userRoutes: [string, string, unknown][] = [
    ['POST', '/launches', { pool: 'b', cwd, command: 'true' }],
    ['POST', '/pools', { name: 'z', backend: 'local', workers: 1, cpus: 1 }],
    ['POST', '/pools/b/scale', { workers: 5 }],
    ['DELETE', '/pools/b?force=1', undefined],
    ['POST', '/jobs/B/cancel', {}],
    ['GET', '/jobs/B/status', undefined],
    ['GET', '/pools/b', undefined],
  ];
  const wrongTokens = fc
    .tuple(
      fc.constantFrom(...userRoutes),
      fc.oneof(
        fc.constantFrom(tokens.p, tokens.b, undefined),
        text.map((s) => `drv_000000000000_${s}x`),
      ),
    )
    .map(
      ([[method, route, body], token]): Req => ({
        what: `${method} ${route}`,
        method,
        route,
        token,
        body,
        headers: {},
      }),
    );
  const badTokensOnWorkerRoutes = fc
    .tuple(
      fc.constantFrom('/register', `/${honest.id}/report`),
      fc.constantFrom(undefined, 'garbage', tokens.user),
    )
    .map(
      ([route, token]): Req => ({
        what: `worker route ${route} with token ${token?.slice(0, 8)}`,
        method: 'POST',
        route: `/workers${route}`,
        token,
        body: route === '/register' ? registration('b') : report([]),
        headers: own,
      }),
    );

  // Huge: over the 1 MiB limit, or a field over its own limit.
  const huge = fc.constantFrom(
    asHonest(
      '/report',
      report([endRecord(run!.task, run!.attempt, { reason: 'x'.repeat(1_200_000) })]),
      'huge body',
    ),
    asHonest('/report', JSON.stringify(report([])).padEnd(1_100_000, ' '), 'huge padding'),
    {
      what: 'huge registration',
      method: 'POST',
      route: '/workers/register',
      token: tokens.b,
      body: registration('b', {
        holding: Array.from({ length: 60_000 }, (_, i) => ({ launch: bLaunch, task: i + 1 })),
      }),
      headers: {},
    } as Req,
  );

  const arb = fc.oneof(
    { arbitrary: forgedReports, weight: 6 },
    { arbitrary: badFields, weight: 6 },
    { arbitrary: badTypes, weight: 1 },
    { arbitrary: junkBodies, weight: 2 },
    { arbitrary: wrongShapes, weight: 2 },
    { arbitrary: identities, weight: 4 },
    { arbitrary: registrations, weight: 3 },
    { arbitrary: wrongTokens, weight: 2 },
    { arbitrary: badTokensOnWorkerRoutes, weight: 1 },
    { arbitrary: huge, weight: 1 },
  );
  await fc.assert(
    fc.asyncProperty(arb, async (r) => {
      const a = await api(url, r.method, r.route, r.token, r.body, r.headers);
      assert.ok(
        a.status >= 400 && a.status < 500,
        `${r.what}: ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`,
      );
      assert.ok(a.body.error?.message, `${r.what}: no error message`);
      if (r.names !== undefined && a.status === 400) {
        assert.ok(a.body.error!.message.includes(r.names), `${r.what}: ${a.body.error!.message}`);
      }
      if (r.names !== undefined) assert.equal(a.status, 400, `${r.what}: ${JSON.stringify(a.body)}`);
      assert.equal(dumpLedger(cwd), before, `${r.what} changed the ledger`);
    }),
    { numRuns: 400 },
  );
  // The server is still sound: the honest worker's own records are taken.
  const done = await honest.call('/report', report([endRecord(run!.task, run!.attempt)]));
  assert.equal(done.status, 200, JSON.stringify(done.body));
  assert.notEqual(dumpLedger(cwd), before);
});
