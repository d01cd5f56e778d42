import assert from 'node:assert/strict';
import { counts } from '../../helpers/contract.js';
import { lines } from '../../helpers/drover.js';
import { waitFor } from '../../helpers/workspace.js';
import type { BackendUnderTest, Site } from '../backend.js';
import {
  attempts,
  drover,
  GATE,
  launch,
  list,
  openGate,
  prelaunch,
  type Status,
  script,
  settled,
  status,
  waitStatus,
} from '../drive.js';
import { fakesOnly, type Scenario, usual } from '../scenario.js';

/**
 * A scheduler that cannot answer for a while, or answers only in part: drover keeps its record true — a task
 * whose runner says it runs stays running, one whose runner says it ended shows that — and judges nothing from
 * an answer it did not get.
 */

const faults = (spec: string) => ({ DROVER_FAKE_FAULTS: spec });

/** Three gated tasks, all running. */
async function threeRunning(b: BackendUnderTest, site: Site, job: string): Promise<void> {
  script(site, 'gate.sh', GATE);
  await prelaunch(site, job, 'sh gate.sh', [1, 2, 3]);
  await launch(site, job);
  await waitStatus(b, site, job, '3 tasks running', (s) => s.counts.running === 3);
}

export const queueOutage: Scenario = {
  name: 'while squeue/qstat cannot reach the scheduler, running tasks stay running and ended ones show their end',
  notFor: fakesOnly,
  timeoutMs: usual,
  async run(b, site) {
    await threeRunning(b, site, 'O');
    const outage = faults(`${b.scheduler!.queue}:down`);
    for (let i = 0; i < 3; i++)
      assert.deepEqual((await status(site, 'O', outage)).counts, counts({ running: 3 }));
    openGate(site, 1);
    const during = await waitStatus(
      b,
      site,
      'O',
      'task 1 to succeed',
      (s) => s.counts.succeeded === 1,
      b.settleMs,
      outage,
    );
    assert.deepEqual(during.counts, counts({ succeeded: 1, running: 2 }));
    assert.deepEqual(
      (await list(site, 'O', outage)).map((x) => x.state),
      ['succeeded', 'running', 'running'],
    );
    assert.deepEqual(
      (await status(site, 'O')).counts,
      counts({ succeeded: 1, running: 2 }),
      'after the outage',
    );
    openGate(site, 2);
    openGate(site, 3);
    assert.deepEqual((await settled(b, site, 'O')).counts, counts({ succeeded: 3 }));
  },
};

export const truncatedQueue: Scenario = {
  name: 'a squeue/qstat answer cut off in the middle judges nothing: running tasks stay running, with one warning',
  notFor: fakesOnly,
  timeoutMs: usual,
  async run(b, site) {
    await threeRunning(b, site, 'X');
    const queue = b.scheduler!.queue;
    const cut = faults(`${queue}:truncate`);
    for (let i = 0; i < 3; i++) {
      const r = await drover(site, ['status', 'X', '--json'], cut);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(
        (JSON.parse(r.stdout) as Status).counts,
        counts({ running: 3 }),
        `status ${i + 1} with a cut answer`,
      );
      assert.equal(lines(r.stderr).length, 1, `one warning:\n${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^drover: warning: ${queue}.* cannot read whole`));
    }
    assert.ok(
      site.calls(queue).some((c) => c.status === 0 && !c.stdout.endsWith('\n')),
      'the answers were cut',
    );
    assert.deepEqual((await status(site, 'X')).counts, counts({ running: 3 }));
    for (const task of [1, 2, 3]) openGate(site, task);
    assert.deepEqual((await settled(b, site, 'X')).counts, counts({ succeeded: 3 }));
  },
};

export const truncatedAccounting: Scenario = {
  name: 'a sacct/qacct answer cut off in the middle judges nothing from it: elements that died before the runner end error, with one warning',
  notFor: fakesOnly,
  timeoutMs: usual,
  async run(b, site) {
    const slurm = b.scheduler!.kind === 'slurm';
    const acct = slurm ? 'sacct' : 'qacct';
    if (slurm) site.env = { ...site.env, DROVER_FAKE_SLURM_ACCOUNTING: 'sacct' };
    await prelaunch(site, 'C', 'true', [1, 2]);
    const cfg = await drover(site, ['config', '--write', b.scheduler!.kind, 'header', 'exit 7']);
    assert.equal(cfg.code, 0, cfg.stderr);
    await launch(site, 'C');
    const cut = faults(`${acct}:truncate`);
    // The accounting record of an ended element shows a moment after it left the queue (as on a real cluster):
    // until then the scheduler's answer is a whole "not found", which rightly says nothing. Wait for a status
    // that asked while there was a record to cut, i.e. one that said something.
    const r = await waitFor(
      `drover to ask ${acct} while it holds the elements' records (job C on ${b.name})`,
      async () => {
        const r = await drover(site, ['status', 'C', '--json'], cut);
        return site.calls(acct).length > 0 && r.stderr !== '' ? r : undefined;
      },
      b.settleMs,
      b.pollMs,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(lines(r.stderr).length, 1, `one warning:\n${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^drover: warning: ${acct} .* cannot read whole`));
    // Slurm judges from the elements' output files alone; Grid Engine waits for a whole accounting record.
    assert.deepEqual(
      (JSON.parse(r.stdout) as Status).counts,
      counts(slurm ? { error: 2 } : { queued: 2 }),
      `with a cut ${acct} answer`,
    );
    assert.deepEqual((await settled(b, site, 'C')).counts, counts({ error: 2 }));
    for (const a of await attempts(site, 'C')) assert.match(a.reason ?? '', /before drover's runner started/);
  },
};

export const cancelWhileDown: Scenario = {
  name: 'a cancel while scancel/qdel cannot reach the scheduler fails in one line, records nothing false, and can be repeated',
  notFor: fakesOnly,
  timeoutMs: usual,
  async run(b, site) {
    await threeRunning(b, site, 'K');
    // An hour to wait for the tasks to stop: a cancel that waited for them instead of failing would take it all.
    const t0 = Date.now();
    const r = await drover(
      site,
      ['cancel', 'K', '--yes', '--wait', '3600'],
      faults(`${b.scheduler!.cancel}:down`),
    );
    assert.equal(r.code, 1, `drover cancel must fail when ${b.scheduler!.cancel} did: ${r.stderr}`);
    assert.ok(Date.now() - t0 < 60_000, 'it fails at once, without waiting for the tasks to stop');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^drover: ${b.scheduler!.cancel} failed: .*(controller|qmaster)`));
    // The tasks run on: a later end of theirs is not taken for a cancel the scheduler never got.
    const tasks = await list(site, 'K');
    assert.deepEqual(
      tasks.map((x) => x.state),
      ['running', 'running', 'running'],
    );
    openGate(site, 1);
    const ended = await waitStatus(b, site, 'K', 'task 1 to end', (s) => s.counts.running === 2);
    assert.deepEqual(ended.counts, counts({ succeeded: 1, running: 2 }));
    const again = await drover(site, ['cancel', 'K', '--yes']);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual((await settled(b, site, 'K')).counts, counts({ succeeded: 1, cancelled: 2 }));
  },
};
