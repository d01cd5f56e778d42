import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runDrover } from '../helpers/drover.js';
import { snapshot } from '../helpers/workspace.js';
import { type Answer, endRecord, type FakeWorker, poolToken, startRecord } from './fake-worker.js';
import { twoPools } from './two-pools.js';

/**
 * `PUT /v1/workers/:id/files/:launch/:name?offset=N` (workers with --no-shared-fs), spoken by hand by fake
 * workers against a real controller: chunks are idempotent by offset and a gap is refused with the offset to
 * send from; a worker writes only its own files of launches it runs tasks of; hostile offsets, names, launches
 * and bodies are a 4xx with a clear message and change nothing.
 */

/** Send a chunk as worker `w` (its secret unless `headers` say otherwise). */
async function put(
  w: FakeWorker,
  launch: number | string,
  name: string,
  offset: string | number,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${w.url}/v1/workers/${w.id}/files/${launch}/${name}?offset=${offset}`, {
    method: 'PUT',
    headers: {
      authorization: `Bearer ${w.token}`,
      'drover-worker-secret': w.secret,
      'content-type': 'application/octet-stream',
      ...headers,
    },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Answer['body']) : {} };
}

test('a worker’s file chunks: bytes the controller has change nothing, a gap is refused with the offset', {
  timeout: 120_000,
}, async (t) => {
  const { cwd, bLaunch, honest, given } = await twoPools(t);
  const dir = path.join(cwd, '.drover', 'logs', 'B', String(bLaunch));
  const seg = `${honest.id}.0.out`;
  const read = () => fs.readFileSync(path.join(dir, seg), 'utf8');
  const offsets: unknown[] = [];
  for (const [offset, body] of [
    [0, 'hello '],
    [0, 'hello '],
    [0, 'hello world\n'],
    [6, 'world\nmore'],
    [3, 'lo'],
  ] as const) {
    const a = await put(honest, bLaunch, seg, offset, body);
    assert.equal(a.status, 200, JSON.stringify(a.body));
    offsets.push(a.body.offset);
  }
  assert.deepEqual(offsets, [6, 6, 12, 16, 16]);
  assert.equal(read(), 'hello world\nmore');
  const gap = await put(honest, bLaunch, seg, 20, 'xyz');
  assert.equal(gap.status, 409);
  assert.equal(gap.body.error?.code, 'gap');
  assert.equal(gap.body.error?.offset, 16);
  assert.match(gap.body.error?.message ?? '', /send from 16/);
  assert.equal(read(), 'hello world\nmore');
  // An empty file is made (an attempt that printed nothing has its file), and a result of its own attempt.
  const empty = await put(honest, bLaunch, `${honest.id}.1.err`, 0, '');
  assert.deepEqual([empty.status, empty.body.offset], [200, 0]);
  assert.equal(fs.statSync(path.join(dir, `${honest.id}.1.err`)).size, 0);
  const g = given[0]!;
  const result = `${g.task}.${g.attempt}.result.json`;
  assert.equal((await put(honest, bLaunch, result, 0, '{"loss": 0.5}\n')).status, 200);
  assert.equal(fs.readFileSync(path.join(dir, result), 'utf8'), '{"loss": 0.5}\n');
  // Once its end is reported, the attempt is not the worker's to write any more.
  const rep = await honest.call('/report', {
    batches: [
      { seq: 1, launch: bLaunch, records: [startRecord(g.task, g.attempt), endRecord(g.task, g.attempt)] },
    ],
  });
  assert.equal(rep.status, 200, JSON.stringify(rep.body));
  const late = await put(honest, bLaunch, result, 14, 'more');
  assert.equal(late.status, 403, JSON.stringify(late.body));
  assert.equal(late.body.error?.code, 'not-yours');
});

test('hostile chunks — offsets, names, launches, bodies, credentials — are a 4xx in words and change nothing', {
  timeout: 120_000,
}, async (t) => {
  const { cwd, server, bLaunch, directLaunch, honest, given, evil } = await twoPools(t);
  const dir = path.join(cwd, '.drover', 'logs', 'B', String(bLaunch));
  const seg = `${honest.id}.0.out`;
  assert.equal((await put(honest, bLaunch, seg, 0, 'mine\n')).status, 200);
  // A symlink where a worker's file goes (left by anyone on the controller's host): never written through.
  const outside = path.join(cwd, 'outside.txt');
  fs.writeFileSync(outside, 'keep\n');
  fs.symlinkSync(outside, path.join(dir, `${honest.id}.2.out`));
  const before = snapshot(cwd).filter((f) => !f.startsWith('.drover/server/'));
  const g = given[0]!;
  const cases: [string, Promise<Answer>, number, RegExp][] = [];
  const tryIt = (what: string, a: Promise<Answer>, status: number, words: RegExp) =>
    cases.push([what, a, status, words]);
  for (const offset of ['-1', '1e3', '1.5', '', 'abc', '0x10', '99999999999999999999', String(2 ** 40 + 1)]) {
    tryIt(
      `offset '${offset}'`,
      put(honest, bLaunch, seg, offset, 'x'),
      400,
      /'offset' must be a whole number/,
    );
  }
  const names = [
    '..%2F..%2Fescape.0.out',
    `${honest.id}%2F..%2F..%2Fx.0.out`,
    '.htaccess',
    `${evil.id}.0.out`,
    'someone-else.0.out',
    `${honest.id}.4.out`,
    `${honest.id}.0.sh`,
    `${honest.id}.00.out`,
    `${g.task}.${g.attempt}.out`,
    `0.1.result.json`,
  ];
  for (const name of names) tryIt(`name ${name}`, put(honest, bLaunch, name, 0, 'x'), 400, /not|no segment/);
  tryIt(
    'an attempt it does not hold',
    put(honest, bLaunch, `${g.task}.${g.attempt + 1}.result.json`, 0, 'x'),
    403,
    /does not hold/,
  );
  tryIt(
    'another pool’s launch',
    put(evil, bLaunch, `${evil.id}.0.out`, 0, 'x'),
    403,
    /holds no task of launch/,
  );
  tryIt('a direct launch', put(honest, directLaunch, seg, 0, 'x'), 404, /no open pool launch/);
  for (const launch of ['999999', 'abc', '0', '-1', '1e2']) {
    tryIt(`launch ${launch}`, put(honest, launch, seg, 0, 'x'), 404, /no open pool launch/);
  }
  tryIt('no secret', put(honest, bLaunch, seg, 5, 'x', { 'drover-worker-secret': '' }), 403, /secret/);
  tryIt(
    'another worker’s secret',
    put(honest, bLaunch, seg, 5, 'x', { 'drover-worker-secret': evil.secret }),
    403,
    /secret/,
  );
  tryIt(
    'a user token',
    put(honest, bLaunch, seg, 5, 'x', { authorization: `Bearer ${server.token}` }),
    403,
    /user token/,
  );
  tryIt('no token', put(honest, bLaunch, seg, 5, 'x', { authorization: '' }), 401, /token/);
  tryIt(
    'another pool’s token',
    put(honest, bLaunch, seg, 5, 'x', { authorization: `Bearer ${poolToken(cwd, 'p')}` }),
    403,
    /pool 'p'/,
  );
  tryIt(
    'a body of 256 KiB and one byte',
    put(honest, bLaunch, seg, 5, Buffer.alloc((256 << 10) + 1, 65)),
    413,
    /too large/,
  );
  tryIt(
    'JSON',
    put(honest, bLaunch, seg, 5, '{"a": 1}', { 'content-type': 'application/json' }),
    415,
    /raw bytes/,
  );
  tryIt('through a symlink', put(honest, bLaunch, `${honest.id}.2.out`, 0, 'x'), 409, /not a regular file/);
  for (const [what, answer, status, words] of cases) {
    const a = await answer;
    assert.equal(a.status, status, `${what}: ${JSON.stringify(a.body)}`);
    assert.match(a.body.error?.message ?? '', words, what);
  }
  assert.deepEqual(
    snapshot(cwd).filter((f) => !f.startsWith('.drover/server/')),
    before,
  );
  assert.equal(fs.readFileSync(outside, 'utf8'), 'keep\n');
  // The honest worker goes on where it was.
  assert.equal((await put(honest, bLaunch, seg, 5, 'more\n')).body.offset, 10);
  const r = await runDrover(['pool', 'status', 'b', '--json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
});
