import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import fc from 'fast-check';
import { runDrover } from '../helpers/drover.js';
import { hostileTaskScript, RESULT_FILE_KINDS } from '../helpers/hostile-files.js';
import { warmFetch } from '../helpers/warm-fetch.js';
import { waitFor } from '../helpers/workspace.js';
import { createPool, poolWorkspace } from '../pool/helpers.js';

/**
 * The adversarial suite's file-type generator (issue 36 item 1): pool tasks make their result files of random
 * kinds (a FIFO, /dev/zero, a socket, a directory, a symlink loop, 8 GB sparse, over the size cap) while the
 * same pool runs another job. Every read of them — the dashboard's task table and task pages, the chart,
 * `drover results` — answers within a second while the controller keeps its workers: none is taken for lost,
 * and every task of the other job succeeds.
 */

/** The slowest an answer may be. */
const PROMPT_MS = 1000;
/** How long one run's tasks may take to end, queued behind the steady job's. */
const ENDED_WITHIN_MS = 120_000;
/** The pause between two rounds of reads. */
const ROUND_PAUSE_MS = 100;

interface Timed {
  what: string;
  ms: number;
  status: number;
}

async function timedGet(url: string, token: string, what: string): Promise<Timed> {
  const t0 = performance.now();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(30_000),
  });
  await res.arrayBuffer();
  return { what, ms: performance.now() - t0, status: res.status };
}

test('result files of random kinds on a live pool: every reader answers within a second, no worker lost', {
  timeout: 300_000,
}, async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  fs.writeFileSync(path.join(cwd, 'task.sh'), hostileTaskScript());
  await createPool(cwd, 'p', ['--workers', '2', '--cpus', '1']);
  // The other job: 12 tasks of a second each, all through the runs below.
  const steady = await runDrover(
    ['launch', '--pool', 'p', '--command', 'sleep 1', '--num-jobs', '12', '--json'],
    {
      cwd,
    },
  );
  assert.equal(steady.code, 0, steady.stderr);
  const steadyJob = (JSON.parse(steady.stdout) as { jobname: string }).jobname;
  // The readers below, once untimed: the test's first fetch loads its HTTP client (warmFetch).
  const auth = { authorization: `Bearer ${server.token}` };
  assert.equal(await warmFetch(`${server.url}/v1/ui/me`, { headers: auth }), 200);
  const kinds = Object.keys(RESULT_FILE_KINDS);
  let run = 0;
  const slowest: Timed[] = [];
  await fc.assert(
    fc.asyncProperty(fc.array(fc.constantFrom(...kinds), { minLength: 1, maxLength: 8 }), async (picked) => {
      const job = `h${++run}`;
      const pre = await runDrover(
        ['prelaunch', '+command', 'sh task.sh', '+jobname', job, '+pos-arg', ...picked],
        {
          cwd,
        },
      );
      assert.equal(pre.code, 0, pre.stderr);
      const l = await runDrover(['launch', '--pool', 'p', '--jobname', job, '--json'], { cwd });
      assert.equal(l.code, 0, l.stderr);
      const base = `${server.url}/v1/ui/jobs/${job}`;
      const token = server.token;
      // Read while the tasks make their files and after, until every one has ended. The bound is a time, not a
      // count of rounds: the tasks wait behind the steady job's (about 6 s), and a round takes what the machine
      // gives it, so 60 rounds once ran out before the first task started.
      const deadline = Date.now() + ENDED_WITHIN_MS;
      let ended = false;
      let counts: Record<string, number> = {};
      while (!ended && Date.now() < deadline) {
        const answers = await Promise.all([
          timedGet(`${base}/tasks`, token, 'task table'),
          ...picked.map((_, i) => timedGet(`${base}/tasks/${i + 1}`, token, `task page ${i + 1}`)),
          timedGet(`${base}/chart?field=loss&param=pos1`, token, 'chart'),
          timedGet(`${server.url}/v1/ui/me`, token, 'me'),
        ]);
        for (const a of answers) assert.equal(a.status, 200, `${a.what} of ${job}`);
        slowest.push(answers.reduce((a, b) => (a.ms >= b.ms ? a : b)));
        const s = await runDrover(['status', job, '--json'], { cwd });
        counts = (JSON.parse(s.stdout) as { counts: Record<string, number> }).counts;
        ended = counts.succeeded === picked.length;
        if (!ended) await setTimeout(ROUND_PAUSE_MS);
      }
      assert.ok(ended, `the tasks of ${job} (${picked.join(' ')}) all ended: ${JSON.stringify(counts)}`);
      const t0 = performance.now();
      const r = await runDrover(['results', job, '--json'], { cwd });
      slowest.push({ what: 'drover results', ms: performance.now() - t0, status: r.code ?? -1 });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(
        (JSON.parse(r.stdout) as { result: unknown }[]).map((x) => x.result),
        picked.map(() => null),
      );
    }),
    { numRuns: 4, includeErrorInReport: true },
  );
  const worst = slowest.reduce((a, b) => (a.ms >= b.ms ? a : b));
  t.diagnostic(`the slowest answer: ${worst.what}, ${Math.round(worst.ms)} ms (of ${slowest.length} rounds)`);
  // drover results is a process of its own: Node's start counts too, so it is held to the same bound plus that.
  for (const s of slowest) {
    const bound = s.what === 'drover results' ? PROMPT_MS + 2000 : PROMPT_MS;
    assert.ok(
      s.ms < bound,
      `${s.what} took ${Math.round(s.ms)} ms (the slowest: ${worst.what}, ${Math.round(worst.ms)} ms)`,
    );
  }
  await waitFor(
    'the steady job to end',
    async () => {
      const s = await runDrover(['status', steadyJob, '--json'], { cwd });
      const counts = (JSON.parse(s.stdout) as { counts: Record<string, number> }).counts;
      return counts.succeeded === 12 || (counts.lost ?? 0) > 0;
    },
    120_000,
  );
  const s = JSON.parse((await runDrover(['status', steadyJob, '--json'], { cwd })).stdout) as {
    counts: Record<string, number>;
  };
  assert.equal(s.counts.succeeded, 12, JSON.stringify(s.counts));
  const pool = JSON.parse((await runDrover(['pool', 'status', 'p', '--json'], { cwd })).stdout) as {
    workers: { state: string }[];
    workers_gone?: number;
  };
  assert.deepEqual(
    pool.workers.map((w) => w.state),
    ['ready', 'ready'],
    'both workers alive, none taken for lost',
  );
});
