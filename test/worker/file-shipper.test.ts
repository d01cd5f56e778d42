import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { HttpError } from '../../src/controller/http-error.js';
import { writeChunk } from '../../src/controller/worker-files.js';
import { type ApiClient, ApiError } from '../../src/protocol/client.js';
import type { AttemptRecord } from '../../src/protocol/records.js';
import { FileShipper } from '../../src/worker/file-shipper.js';
import { ShippedRecords } from '../../src/worker/shipped-records.js';

/**
 * The worker's side of --no-shared-fs in memory: its shipper and the order of its records, against a fake API
 * (named so: no HTTP) that writes chunks with the controller's own writeChunk into a folder of its own, and that
 * can fail a call before or after applying it (a cut link, a lost answer).
 */

class FakeApi {
  bytesSent = 0;
  calls = 0;
  constructor(
    readonly dir: string,
    private readonly failEvery = 0,
  ) {}

  async call<T>(method: string, route: string, body?: unknown): Promise<T> {
    assert.equal(method, 'PUT');
    const m = /^\/workers\/w1\/files\/(\d+)\/([^?]+)\?offset=(\d+)$/.exec(route);
    assert.ok(m, route);
    const bytes = body as Buffer;
    this.calls++;
    this.bytesSent += bytes.length;
    const cut = this.failEvery > 0 && this.calls % this.failEvery === 0;
    if (cut && this.calls % 2 === 0) throw new ApiError(0, 'unreachable', 'cut before it arrived');
    let offset: number;
    try {
      offset = writeChunk(path.join(this.dir, m[1]!, decodeURIComponent(m[2]!)), Number(m[3]), bytes);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      throw new ApiError(err.status, err.code, err.message, {
        ...(err.offset !== undefined ? { offset: err.offset } : {}),
      });
    }
    await new Promise((r) => setTimeout(r, 1));
    if (cut) throw new ApiError(0, 'unreachable', 'cut before the answer came');
    return { offset } as T;
  }
}

function workspace(t: { after(fn: () => void): void }): { local: string; remote: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-shipper-test-'));
  // The shipper's timers do not hold a worker's process open: this test's wait does.
  const keep = setInterval(() => {}, 1000);
  t.after(() => {
    clearInterval(keep);
    fs.rmSync(root, { recursive: true, force: true });
  });
  const local = path.join(root, 'local');
  fs.mkdirSync(local);
  return { local, remote: path.join(root, 'remote') };
}

/** A slot's segments: append `text` as attempt `seq`'s output, with its index entry; its start and end records. */
function runInSegments(
  local: string,
  task: number,
  seq: number,
  text: string,
): [AttemptRecord, AttemptRecord] {
  const out = path.join(local, 'w1.0.out');
  const err = path.join(local, 'w1.0.err');
  const size = (f: string) => fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0;
  const [outOff, errOff] = [size(out), size(err)];
  fs.appendFileSync(out, text);
  fs.appendFileSync(err, '');
  const entry = `${String(size(out)).padStart(15, '0')} ${String(size(err)).padStart(15, '0')}\n`;
  fs.appendFileSync(path.join(local, 'w1.0.idx'), entry);
  const common = { task, attempt: 1, at: 1 };
  return [
    {
      type: 'start',
      ...common,
      pid: 1,
      slot: 0,
      gpus: null,
      host: 'h',
      out,
      err,
      out_off: outOff,
      err_off: errOff,
      seq,
    },
    {
      type: 'end',
      ...common,
      state: 'succeeded',
      exit_code: 0,
      signal: null,
      out_end: size(out),
      err_end: size(err),
    },
  ];
}

/** Records passed on until `n` came; each end checked against the controller's copy when it comes. */
function collector(remote: string, local: string, n: number) {
  const got: AttemptRecord[] = [];
  /** Ends passed on before the controller had their bytes. */
  const early: number[] = [];
  let done!: () => void;
  const all = new Promise<void>((r) => {
    done = r;
  });
  const forward = (_launch: number, r: AttemptRecord) => {
    if (r.type === 'end') {
      const file = path.join(remote, '7', 'w1.0.out');
      const copy = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0);
      const mine = fs.readFileSync(path.join(local, 'w1.0.out')).subarray(0, copy.length);
      if (copy.length < r.out_end! || !copy.equals(mine)) early.push(r.task);
    }
    got.push(r);
    if (got.length === n) done();
  };
  return { got, early, all, forward };
}

test('a later task of a launch resumes its segments from the controller’s offset, never resending', {
  timeout: 60_000,
}, async (t) => {
  const { local, remote } = workspace(t);
  const api = new FakeApi(remote);
  const shipper = new FileShipper(
    api as unknown as ApiClient,
    () => 'w1',
    () => {},
  );
  t.after(() => shipper.close());
  const c = collector(remote, local, 4);
  const records = new ShippedRecords(shipper, c.forward);
  const first = runInSegments(local, 1, 0, 'a'.repeat(300_000));
  for (const r of first) records.add(7, r);
  await new Promise<void>((r) => {
    const wait = () => (c.got.length === 2 ? r() : setTimeout(wait, 5));
    wait();
  });
  // The launch has no attempt in flight: its segments are forgotten, and tailed again for its next task.
  const second = runInSegments(local, 2, 1, 'b'.repeat(1000));
  for (const r of second) records.add(7, r);
  await c.all;
  assert.deepEqual(c.early, [], 'ends passed on before their bytes');
  assert.deepEqual(
    c.got.map((r) => [r.type, (r as { task: number }).task]),
    [
      ['start', 1],
      ['end', 1],
      ['start', 2],
      ['end', 2],
    ],
  );
  for (const f of ['w1.0.out', 'w1.0.err', 'w1.0.idx'])
    assert.ok(fs.readFileSync(path.join(remote, '7', f)).equals(fs.readFileSync(path.join(local, f))), f);
  // Every byte once: 301,000 of output and 2 index entries.
  assert.equal(api.bytesSent, 301_000 + 64);
});

test('calls cut before they arrive or before their answer: every byte once, each end after its bytes', {
  timeout: 60_000,
}, async (t) => {
  const { local, remote } = workspace(t);
  const api = new FakeApi(remote, 3);
  const shipper = new FileShipper(
    api as unknown as ApiClient,
    () => 'w1',
    () => {},
  );
  t.after(() => shipper.close());
  const c = collector(remote, local, 12);
  const records = new ShippedRecords(shipper, c.forward);
  for (let task = 1; task <= 6; task++) {
    const [start, end] = runInSegments(local, task, task - 1, `${task}`.repeat(100_000 * task));
    records.add(7, start);
    records.add(7, end);
  }
  await c.all;
  assert.deepEqual(c.early, [], 'ends passed on before their bytes');
  assert.deepEqual(
    c.got.filter((r) => r.type === 'end').map((r) => (r as { task: number }).task),
    [1, 2, 3, 4, 5, 6],
  );
  for (const f of ['w1.0.out', 'w1.0.err', 'w1.0.idx'])
    assert.ok(fs.readFileSync(path.join(remote, '7', f)).equals(fs.readFileSync(path.join(local, f))), f);
  assert.ok(api.calls > 12, `${api.calls} calls, a third of them cut`);
});
