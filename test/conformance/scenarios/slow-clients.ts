import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { counts } from '../../helpers/contract.js';
import { createPoolIn, startPoolServer } from '../../helpers/pool-server.js';
import { SlowCrowd, type SlowEnd } from '../../helpers/slow-client.js';
import { warmFetch } from '../../helpers/warm-fetch.js';
import { waitFor } from '../../helpers/workspace.js';
import type { BackendUnderTest, Site } from '../backend.js';
import { droverJson, list, settled } from '../drive.js';
import { type Scenario, workerDuration } from '../scenario.js';

/**
 * A hostile local user against a running pool (issue 36 §2): slow clients that announce a body and send one byte
 * of it hold no worker back. First 50 slow logins with no token, each replaced as soon as the server cuts it,
 * while the pool runs 200 short tasks: every task succeeds in one attempt, no worker is lost, each slow login is
 * cut within the public body deadline, and a user's request with a body answers within a second throughout.
 * Then slow bodies sent with a user token, more than the user routes read at once, while 200 more tasks run:
 * the workers do not wait behind them either. Pools of local workers, and pools whose workers are a
 * scheduler's array job.
 */

/** The public body deadline of docs/dashboard.md, and what a loaded machine may add to it. */
const PUBLIC_DEADLINE_MS = 5_000;
const MARGIN_MS = 2_500;
/** Tasks per phase (200 × 0.1 s on the pool's 2 slots: the attack goes on for 10 s and more). */
const TASKS = 200;

/**
 * The site's pool: `p` for a pool backend; else one made on the site's scheduler, its workers an array job whose
 * time limit outlasts the scenario (workerDuration).
 */
async function poolOf(b: BackendUnderTest, site: Site): Promise<string> {
  if (b.pool) return 'p';
  const kind = b.scheduler!.kind;
  await startPoolServer(site);
  await createPoolIn(
    site,
    'sp',
    ['--backend', kind, '--workers', '2', '--cpus', '1', '--duration', workerDuration(b)],
    b.scheduler!.fake ? 60_000 : 150_000,
  );
  return 'sp';
}

/** Launch TASKS tasks of `sleep 0.1` on the pool as `job`. */
async function launchSleeps(site: Site, pool: string, job: string): Promise<void> {
  await droverJson(site, [
    'launch',
    '--pool',
    pool,
    '--num-jobs',
    String(TASKS),
    '--command',
    'sleep 0.1',
    '--jobname',
    job,
    '--json',
  ]);
}

/** Every task of `job` succeeded in its first attempt, and the pool lost no worker. */
async function noneLost(b: BackendUnderTest, site: Site, pool: string, job: string): Promise<void> {
  const s = await settled(b, site, job, 120_000);
  assert.deepEqual(s.counts, counts({ succeeded: TASKS }), `job ${job}: ${JSON.stringify(s.counts)}`);
  const again = (await list(site, job)).filter((t) => t.attempts !== 1);
  assert.deepEqual(again, [], `tasks of ${job} ran more than once (a worker was taken for lost)`);
  const p = await droverJson<{ workers: { id: string; state: string; reason: string | null }[] }>(site, [
    'pool',
    'status',
    pool,
    '--all',
    '--json',
  ]);
  const lost = p.workers.filter((w) => w.state === 'lost');
  assert.deepEqual(lost, [], 'no worker of the pool was lost');
}

/** Each end of a slow client is a 408 or a closed connection, never an answer to its unfinished body. */
function allCut(ends: SlowEnd[], what: string): void {
  const answered = ends.filter((e) => e.status !== 408 && e.status !== 0);
  assert.deepEqual(answered, [], `${what}: ended otherwise than by the body deadline`);
}

export const slowClients: Scenario = {
  name: 'slow clients, with no token or with a user token, hold no worker back: every task succeeds, none lost',
  notFor: (b) => (b.pool || b.scheduler ? undefined : `${b.name} has no pool`),
  alone: "a user's request answers within a second",
  timeoutMs: (b) => (b.scheduler && !b.scheduler.fake ? 400_000 : 240_000),
  async run(b, site, t) {
    const pool = await poolOf(b, site);
    const dir = path.join(site.cwd, '.drover', 'server');
    const { url } = JSON.parse(fs.readFileSync(path.join(dir, 'server.json'), 'utf8')) as { url: string };
    const token = fs.readFileSync(path.join(dir, 'token'), 'utf8').trim();

    // The user's request below, once untimed: the test's first fetch loads its HTTP client (warmFetch).
    const scale = {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"workers": 1}',
    };
    assert.equal(await warmFetch(`${url}/v1/pools/none/scale`, scale), 404);

    // Phase 1: 50 slow logins with no token at all, for as long as the pool works.
    const logins = new SlowCrowd(
      url,
      () => ({
        method: 'POST',
        path: '/v1/ui/login',
        headers: { 'content-type': 'application/json' },
        body: `{${' '.repeat(98)}}`,
        first: 1,
      }),
      50,
    );
    let slowest = 0;
    let probes = 0;
    let probing = true;
    const failed: string[] = [];
    // A user's request with a body (a scale of a pool that is not there: 404), again and again.
    const probe = (async () => {
      while (probing) {
        const t0 = performance.now();
        try {
          const res = await fetch(`${url}/v1/pools/none/scale`, {
            ...scale,
            signal: AbortSignal.timeout(10_000),
          });
          await res.text();
          if (res.status !== 404) failed.push(`answered ${res.status}`);
        } catch (err) {
          failed.push(String(err));
        }
        slowest = Math.max(slowest, performance.now() - t0);
        probes++;
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    try {
      await launchSleeps(site, pool, 'SLOW1');
      await noneLost(b, site, pool, 'SLOW1');
    } finally {
      probing = false;
      logins.stop();
      await probe;
    }
    assert.deepEqual(failed, [], "a user's request failed under 50 slow logins");
    assert.ok(probes >= 10, `${probes} probes`);
    assert.ok(slowest < 1000, `a user's request took ${Math.round(slowest)} ms under 50 slow logins`);
    assert.ok(logins.ends.length >= 50, `only ${logins.ends.length} slow logins were cut`);
    allCut(logins.ends, 'slow logins');
    const longest = Math.max(...logins.ends.map((e) => e.ms));
    t.diagnostic(
      `50 slow logins: ${logins.ends.length} cut, the longest held ${Math.round(longest)} ms; ` +
        `${probes} user requests, the slowest ${Math.round(slowest)} ms`,
    );
    assert.ok(
      longest < PUBLIC_DEADLINE_MS + MARGIN_MS,
      `a slow login was held ${Math.round(longest)} ms (deadline ${PUBLIC_DEADLINE_MS} ms)`,
    );

    // Phase 2: slow bodies of a token holder, more than the user routes read at once, while the pool works.
    await launchSleeps(site, pool, 'SLOW2');
    const users = new SlowCrowd(
      url,
      () => ({
        method: 'POST',
        path: '/v1/pools/none/scale',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: `{"workers": 1${' '.repeat(85)}}`,
        first: 1,
        trickleMs: 1000,
      }),
      8,
    );
    try {
      await noneLost(b, site, pool, 'SLOW2');
      // The user's deadline cuts them too (it is longer than the public one).
      await waitFor('2 slow user bodies cut', () => users.ends.length >= 2, 30_000, 200);
    } finally {
      users.stop();
    }
    allCut(users.ends, 'slow user bodies');
  },
};
