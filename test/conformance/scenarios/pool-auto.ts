import assert from 'node:assert/strict';
import { PAUSE_AFTER } from '../../../src/controller/allocate.js';
import type { PoolStatus } from '../../../src/protocol/messages.js';
import { counts } from '../../helpers/contract.js';
import { startPoolServer } from '../../helpers/pool-server.js';
import { submittedId } from '../../helpers/scheduler-calls.js';
import { waitFor } from '../../helpers/workspace.js';
import type { BackendUnderTest, Site } from '../backend.js';
import { drover, droverJson, status } from '../drive.js';
import { clustersOnly, type Scenario, workerDuration } from '../scenario.js';

/**
 * Automatic allocation (`drover pool create --auto`, issue 35): a pool with no worker starts allocations (array
 * jobs of workers) by itself while tasks queue, within --max-workers, lets them leave when idle past
 * --idle-timeout and leaves nothing in the scheduler's queue; and a worker setup that fails pauses allocation
 * after a few tries, with the reason, the tasks still queued.
 */

const IDLE = 20;

async function poolStatus(site: Site, name: string): Promise<PoolStatus> {
  return droverJson<PoolStatus>(site, ['pool', 'status', name, '--json', '--all']);
}

/** The array job ids the site's scheduler accepted. */
function arrays(b: BackendUnderTest, site: Site): string[] {
  return site
    .calls(b.scheduler!.submit)
    .map(submittedId)
    .filter((id): id is string => id !== undefined);
}

async function createAuto(b: BackendUnderTest, site: Site, name: string, extra: string[]): Promise<void> {
  const args = ['--backend', b.scheduler!.kind, '--auto', '--max-workers', '2', '--idle-timeout', `${IDLE}s`];
  const r = await drover(site, ['pool', 'create', name, ...args, '--duration', workerDuration(b), ...extra]);
  assert.equal(r.code, 0, r.stderr);
}

export const poolAuto: Scenario = {
  name: 'a pool with --auto and no worker starts allocations for queued tasks, and leaves the queue empty when idle',
  notFor: clustersOnly,
  timeoutMs: (b) => (b.scheduler?.fake ? 150_000 : 600_000),
  async run(b, site, t) {
    await startPoolServer(site);
    await createAuto(b, site, 'ap', []);
    assert.deepEqual(arrays(b, site), [], 'nothing is submitted while nothing is queued');
    const r = await drover(site, [
      'launch',
      '--pool',
      'ap',
      '--num-jobs',
      '200',
      '--command',
      'sleep 0.2',
      '--jobname',
      'A',
      '--follow',
      '--json',
    ]);
    const ended = Date.now();
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await status(site, 'A')).counts, counts({ succeeded: 200 }));
    const after = await poolStatus(site, 'ap');
    // One allocation of both workers: 200 one-slot tasks want more than 2, and --max-workers 2 caps it.
    assert.deepEqual(
      after.auto!.allocations.map((a) => [a.workers, a.state]),
      [[2, 'running']],
      JSON.stringify(after.auto),
    );
    assert.deepEqual(arrays(b, site), [after.auto!.allocations[0]!.job]);
    const job = arrays(b, site)[0]!;
    const readyMs = b.scheduler!.fake ? 60_000 : 180_000;
    await waitFor(
      `the workers to leave after ${IDLE} s idle, and the array to leave the queue`,
      () => b.scheduler!.elements(site, job).length === 0,
      readyMs,
      500,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}; the pool: ${JSON.stringify(await poolStatus(site, 'ap'))}`);
    });
    t.diagnostic(`the queue was empty ${((Date.now() - ended) / 1000).toFixed(1)} s after the last task`);
    const idle = await waitFor(
      'the allocation finished',
      async () => {
        const p = await poolStatus(site, 'ap');
        return p.auto!.allocations[0]!.state === 'finished' && p;
      },
      30_000,
      500,
    );
    assert.equal(idle.workers.filter((w) => w.state !== 'stopped').length, 0, JSON.stringify(idle.workers));
    assert.deepEqual(
      idle.workers.map((w) => w.reason),
      ['drained', 'drained'],
      'both left because they were idle',
    );
    assert.equal(arrays(b, site).length, 1, 'nothing more was submitted once idle');
  },
};

export const poolAutoPaused: Scenario = {
  name: 'a pool with --auto whose worker setup fails pauses after a few allocations, with the reason, tasks queued',
  notFor: clustersOnly,
  timeoutMs: (b) => (b.scheduler?.fake ? 120_000 : 600_000),
  async run(b, site) {
    await startPoolServer(site);
    await createAuto(b, site, 'bp', ['--setup', 'exit 3']);
    const r = await drover(site, [
      'launch',
      '--pool',
      'bp',
      '--num-jobs',
      '20',
      '--command',
      'true',
      '--jobname',
      'B',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const paused = await waitFor(
      'allocation to pause',
      async () => {
        const p = await poolStatus(site, 'bp');
        return p.auto!.state === 'paused' && p;
      },
      b.scheduler!.fake ? 60_000 : 400_000,
      500,
    );
    assert.match(
      paused.auto!.decision,
      new RegExp(`${PAUSE_AFTER} allocations in a row failed to start \\(last: setup exited 3\\)`),
    );
    // --backlog 1: each allocation is submitted once the one before it failed, and none after the third.
    assert.deepEqual(
      paused.auto!.allocations.map((a) => [a.state, a.reason]),
      Array.from({ length: PAUSE_AFTER }, () => ['failed', 'setup exited 3']),
    );
    assert.equal(arrays(b, site).length, PAUSE_AFTER);
    assert.deepEqual((await status(site, 'B')).counts, counts({ queued: 20 }), 'the tasks wait, none lost');
    const text = await drover(site, ['pool', 'status', 'bp']);
    assert.match(text.stdout, /allocation paused .*setup exited 3.*drover pool resume/);
    // `pool resume` forgives them: it tries again, and pauses again after as many failures.
    const resumed = await drover(site, ['pool', 'resume', 'bp', '--json']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal((JSON.parse(resumed.stdout) as PoolStatus).auto!.state, 'active');
    const again = await waitFor(
      'allocation to pause again',
      async () => {
        const p = await poolStatus(site, 'bp');
        return p.auto!.state === 'paused' && p.auto!.allocations.length === 2 * PAUSE_AFTER && p;
      },
      b.scheduler!.fake ? 60_000 : 400_000,
      500,
    );
    assert.equal(arrays(b, site).length, 2 * PAUSE_AFTER, JSON.stringify(again.auto));
    assert.deepEqual((await status(site, 'B')).counts, counts({ queued: 20 }));
    // The failed allocations left nothing behind in the queue.
    await waitFor(
      'the failed arrays to leave the queue',
      () => arrays(b, site).every((id) => b.scheduler!.elements(site, id).length === 0),
      60_000,
      500,
    );
  },
};

export const poolAutoRefused: Scenario = {
  name: 'a pool with --auto whose allocations the scheduler refuses pauses after a few, naming the refusal',
  notFor: clustersOnly,
  timeoutMs: (b) => (b.scheduler?.fake ? 90_000 : 300_000),
  async run(b, site) {
    await startPoolServer(site);
    const bad =
      b.scheduler!.kind === 'slurm'
        ? {
            args: ['--partition', 'nosuch'],
            says: /Slurm refused the workers of pool 'rp'.*Invalid partition/,
          }
        : { args: ['--queue', 'nosuch.q'], says: /Grid Engine refused the workers of pool 'rp'.*nosuch\.q/ };
    await createAuto(b, site, 'rp', bad.args);
    const r = await drover(site, [
      'launch',
      '--pool',
      'rp',
      '--num-jobs',
      '5',
      '--command',
      'true',
      '--jobname',
      'R',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const paused = await waitFor(
      'allocation to pause',
      async () => {
        const p = await poolStatus(site, 'rp');
        return p.auto!.state === 'paused' && p;
      },
      60_000,
      500,
    );
    const allocations = paused.auto!.allocations;
    assert.equal(allocations.length, PAUSE_AFTER, JSON.stringify(allocations));
    for (const a of allocations) {
      assert.equal(a.job, null, 'refused: no job id');
      assert.equal(a.state, 'failed');
      assert.match(a.reason ?? '', bad.says);
    }
    assert.match(paused.auto!.decision, bad.says);
    assert.equal(site.calls(b.scheduler!.submit).length, PAUSE_AFTER, 'one submission per allocation');
    assert.ok(site.calls(b.scheduler!.submit).every((c) => c.status !== 0));
    assert.deepEqual((await status(site, 'R')).counts, counts({ queued: 5 }));
  },
};
