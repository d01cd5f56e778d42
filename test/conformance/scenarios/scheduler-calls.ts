import assert from 'node:assert/strict';
import type { JobStatus } from '../../helpers/contract.js';
import type { BackendUnderTest, Site } from '../backend.js';
import { drover, droverJson, launch, prelaunch } from '../drive.js';
import { clustersOnly, type Scenario, usual } from '../scenario.js';

/**
 * Scheduler calls that do not grow with the user's work: `drover status` of a folder with many active launches
 * asks the queue once (one squeue, one qstat -xml) and accounting at most once, however many launches are open;
 * a cancel is one scancel (qdel) per launch. Counted from the calls the fake schedulers log, and on the real
 * clusters from the recording shims in front of the real programs.
 */

const LAUNCHES = 10;

/** The calls of `prog` the scheduler saw while `fn` ran. */
async function callsDuring(site: Site, prog: string, fn: () => Promise<void>): Promise<string[][]> {
  const before = site.calls(prog).length;
  await fn();
  return site
    .calls(prog)
    .slice(before)
    .map((c) => c.argv);
}

export const schedulerCalls: Scenario = {
  name: `status of ${LAUNCHES} active launches asks the queue once and accounting at most once; cancel is one call per launch`,
  notFor: clustersOnly,
  timeoutMs: (b) => usual(b) * 2,
  async run(b: BackendUnderTest, site: Site) {
    const s = b.scheduler!;
    const accounting = s.kind === 'slurm' ? 'sacct' : 'qacct';
    const jobs = Array.from({ length: LAUNCHES }, (_, i) => `S${i + 1}`);
    for (const job of jobs) {
      await prelaunch(site, job, 'sleep', [300]);
      const made = await launch(site, job);
      assert.equal(made.tasks, 1);
    }
    let all: JobStatus[] = [];
    const queue = await callsDuring(site, s.queue, async () => {
      const acct = await callsDuring(site, accounting, async () => {
        all = await droverJson<JobStatus[]>(site, ['status', '--json']);
      });
      assert.ok(acct.length <= 1, `${accounting} ran ${acct.length} times: ${JSON.stringify(acct)}`);
    });
    assert.equal(all.length, LAUNCHES, 'status lists every job');
    for (const job of all)
      assert.equal(job.counts.queued + job.counts.running, 1, `${job.jobname} is active`);
    assert.equal(
      queue.length,
      1,
      `${s.queue} ran ${queue.length} times for one status: ${JSON.stringify(queue)}`,
    );
    // One job's status asks the queue once too.
    const one = await callsDuring(site, s.queue, async () => {
      const r = await drover(site, ['status', 'S1', '--json']);
      assert.equal(r.code, 0, r.stderr);
    });
    assert.equal(one.length, 1, `${s.queue} ran ${one.length} times for status S1: ${JSON.stringify(one)}`);
    for (const job of jobs) {
      const stops = await callsDuring(site, s.cancel, async () => {
        const r = await drover(site, ['cancel', job, '--yes']);
        assert.equal(r.code, 0, r.stderr);
      });
      assert.equal(stops.length, 1, `${s.cancel} ran ${stops.length} times for cancel ${job}`);
    }
    const after = await droverJson<JobStatus[]>(site, ['status', '--json']);
    for (const job of after) assert.equal(job.counts.cancelled, 1, `${job.jobname} is cancelled`);
  },
};
