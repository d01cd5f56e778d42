import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { BODY_BUDGETS } from '../../src/controller/body-budgets.js';
import { DRAIN_MS } from '../../src/controller/body-limits.js';
import { slowClient } from '../helpers/slow-client.js';
import { api, dumpLedger, poolToken } from '../pool/fake-worker.js';
import { twoPools } from '../pool/two-pools.js';
import { slowRun } from './slow-requests.js';

/**
 * Slow clients against the API (slow-requests.ts): each is refused before its body is read or cut at its
 * budget's deadline, while the honest worker's heartbeats and logins answer at once. It runs alone
 * (scripts/test.mjs): the answers are timed. Hostile requests, by property, are adversarial-requests.test.ts's.
 */

/** What a loaded machine may add to a deadline. */
const MARGIN_MS = 2_500;

test('slow clients on every route are refused before their body is read, or cut at their budget deadline', {
  timeout: 600_000,
}, async (t) => {
  const { cwd, server, honest } = await twoPools(t, 3600);
  const world = {
    tokens: { user: server.token, worker: poolToken(cwd, 'b'), otherPool: poolToken(cwd, 'p') },
    worker: { id: honest.id, secret: honest.secret },
  };
  const before = dumpLedger(cwd);
  await fc.assert(
    fc.asyncProperty(slowRun(world), async (cases) => {
      const clients = cases.map((c) => slowClient(server.url, c.req));
      try {
        // While they hang on: the honest worker's heartbeat and a login with a token answer at once.
        for (let i = 0; i < 3; i++) {
          await new Promise((r) => setTimeout(r, 500));
          const t0 = performance.now();
          const beat = await honest.call('/heartbeat', {});
          assert.equal(beat.status, 200, JSON.stringify(beat.body));
          const login = await api(server.url, 'POST', '/ui/login', undefined, { token: server.token });
          assert.equal(login.status, 200, JSON.stringify(login.body));
          const ms = performance.now() - t0;
          assert.ok(
            ms < 1000,
            `a heartbeat and a login took ${Math.round(ms)} ms beside ${cases.length} slow clients`,
          );
        }
        const ends = await Promise.all(clients.map((c) => c.ended));
        cases.forEach((c, i) => {
          const { status, ms } = ends[i]!;
          const said = `${c.what}: ${status} after ${Math.round(ms)} ms`;
          if (c.expect === 'refused') {
            assert.ok(status === 401 || status === 403, said);
            assert.ok(ms < 1000, `${said}: not answered before its body`);
          } else if (c.expect === 'too-large') {
            assert.equal(status, 413, said);
            assert.ok(ms < DRAIN_MS + MARGIN_MS, said);
          } else {
            const deadline = BODY_BUDGETS[c.budget!].deadlineMs;
            assert.ok(status === 408 || status === 0, said);
            assert.ok(
              ms >= deadline - 50 && ms < deadline + MARGIN_MS,
              `${said}: its deadline is ${deadline} ms`,
            );
          }
        });
      } finally {
        for (const c of clients) c.close();
      }
      assert.equal(dumpLedger(cwd), before, 'a slow client changed the ledger');
    }),
    { numRuns: 6 },
  );
});
