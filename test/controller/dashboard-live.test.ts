import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { LiveHub, MAX_STREAMS } from '../../src/controller/dashboard/live.js';
import { makeJob, tempLedger } from '../helpers/ledger.js';
import { waitFor } from '../helpers/workspace.js';

/** A real HTTP server whose every request is a live stream of one job's hub (closed after the test). */
async function liveServer(t: { after(fn: () => void): void }, tasks: number) {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'j', tasks);
  const hub = new LiveHub(ledger, (err) => {
    throw err;
  });
  const server = http.createServer((_req, res) => hub.add(res, job.id));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    hub.close();
    server.close();
  });
  return { ledger, job, hub, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

/**
 * The dashboard's live stream over a real HTTP connection: a change of the job's record reaches the page within
 * a second, and once the last page is gone the hub has no timer left — an idle dashboard costs nothing.
 */
test('live hub: ready, then a change within a second; no timer once the last stream closes', {
  timeout: 30_000,
}, async (t) => {
  const { ledger, job, hub, url } = await liveServer(t, 3);
  assert.equal(hub.ticking, false, 'no timer before any page');
  let text = '';
  const req = http.get(url);
  const res = await new Promise<http.IncomingMessage>((r) => req.once('response', r));
  assert.match(res.headers['content-type'] ?? '', /^text\/event-stream/);
  res.setEncoding('utf8').on('data', (d: string) => {
    text += d;
  });
  await waitFor('the ready event', () => text.includes('event: ready'), 5000, 20);
  assert.equal(hub.size, 1);
  assert.equal(hub.ticking, true);
  assert.ok(!text.includes('event: change'), 'no change before one happens');
  const changed = Date.now();
  ledger.write(() =>
    ledger.stmt("UPDATE tasks SET state = 'failed' WHERE job_id = ? AND id = 2").run(job.id),
  );
  await waitFor('the change event', () => text.includes('event: change'), 5000, 20);
  assert.ok(Date.now() - changed < 1000, `the change arrived in ${Date.now() - changed} ms`);
  req.destroy();
  await waitFor('the hub to let go', () => hub.size === 0 && !hub.ticking, 5000, 20);
});

test('live hub: streams past the limit get a 429, and the hub lets go of every one it took', {
  timeout: 60_000,
}, async (t) => {
  const { hub, url } = await liveServer(t, 1);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const open = () =>
    new Promise<{ req: http.ClientRequest; status: number }>((resolve) => {
      const req = http.get(url, { agent });
      req.once('response', (res) => {
        res.resume();
        resolve({ req, status: res.statusCode ?? 0 });
      });
    });
  const streams = [];
  for (let i = 0; i < MAX_STREAMS; i++) streams.push(await open());
  assert.ok(streams.every((s) => s.status === 200));
  const over = await open();
  assert.equal(over.status, 429);
  assert.equal(hub.size, MAX_STREAMS);
  for (const s of [...streams, over]) s.req.destroy();
  await waitFor('the hub to let go', () => hub.size === 0 && !hub.ticking, 10_000, 20);
});
