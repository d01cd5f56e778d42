import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { ApiClient } from '../../src/protocol/client.js';
import type { StartRecord } from '../../src/protocol/records.js';
import { Reporter } from '../../src/worker/reporter.js';
import { waitFor } from '../helpers/workspace.js';

/**
 * A FAKE controller: a real HTTP server that answers every report with `status` and `body`, and counts them. It
 * gives answers a real controller gives only on a bad day (503 for minutes) or never (a refusal naming nothing the
 * worker sent), to see how the worker's reporter takes them.
 */
async function fakeController(
  t: { after(fn: () => void | Promise<void>): void },
  status: number,
  body: unknown,
): Promise<{ url: string; reports: () => number }> {
  let reports = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.endsWith('/report')) reports++;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reports: () => reports };
}

const start = (task: number): StartRecord => ({
  type: 'start',
  task,
  attempt: 1,
  at: 1,
  pid: 1,
  slot: 0,
  gpus: null,
  host: 'h',
  out: 'o',
  err: 'e',
});

/**
 * A reporter with one record to send to `url`, for `ms`; how many reports reached the controller by then, and what
 * it logged once `settle` is done.
 */
async function reportFor(
  url: string,
  reports: () => number,
  ms: number,
  settle: (log: string[]) => Promise<unknown> = async () => {},
): Promise<{ n: number; log: string[] }> {
  const api = new ApiClient(url, 'token', { keepAlive: true });
  const log: string[] = [];
  const reporter = new Reporter(
    api,
    () => 'w1',
    (m) => log.push(m),
  );
  reporter.outbox.holding.set('1:1', { launch: 1, task: 1, attempt: 1 });
  reporter.add(1, start(1));
  await new Promise((r) => setTimeout(r, ms));
  const n = reports();
  await settle(log);
  api.close();
  return { n, log };
}

test('a failing report is sent again after a growing backoff, not at a fixed pace', async (t) => {
  const c = await fakeController(t, 503, { error: { code: 'starting', message: 'starting' } });
  // Backoff 0.25 s, doubling (±20%): at most 5 reports in 4 s (a fixed 0.5 s pace sends 8).
  const { n } = await reportFor(c.url, c.reports, 4000);
  assert.ok(n >= 3 && n <= 5, `${n} reports in 4 s`);
});

test('a refusal that names nothing it sent drops nothing and backs off: no resend loop', async (t) => {
  const c = await fakeController(t, 403, {
    error: { code: 'not-yours', message: 'not yours', refused: [{ launch: 9, task: 9, attempt: 1 }] },
  });
  const { n, log } = await reportFor(c.url, c.reports, 2000, (log) =>
    // A report may be on its way back when the window ends (counted by the controller, not yet taken by the
    // reporter): compare once the reporter has taken every answer, before its next report (backoff ≥ 0.5 s).
    waitFor('one log line per refusal', () => log.length === c.reports(), 5000, 10),
  );
  assert.ok(n <= 4, `${n} reports in 2 s`);
  assert.ok(log.length >= n, `${log.length} log lines for ${n} refusals`);
});
