import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { counts } from '../../helpers/contract.js';
import { testEnv } from '../../helpers/drover-in-process-fake.js';
import type { Site } from '../backend.js';
import {
  droverJson,
  launch,
  list,
  logOf,
  prelaunch,
  SLEEPER,
  script,
  settled,
  waitStatus,
} from '../drive.js';
import { fakesOnly, type Scenario, usual } from '../scenario.js';

/**
 * Cluster settings a real test cluster would have to be restarted for, set on the fakes per test: a small array
 * limit (Slurm MaxArraySize, Grid Engine max_aj_tasks), and Slurm without a job completion log.
 */

const SHOW = 'if [ "$DROVER_ATTEMPT" = 1 ] && [ "$1" = 7 ]; then exit 3; fi\necho "$1 $DROVER_TASK_ID"\n';

export const arrayLimit: Scenario = {
  name: 'a launch beyond the scheduler’s array limit is split as the dry run shows, and every task runs as itself',
  notFor: fakesOnly,
  timeoutMs: usual,
  async run(b, site) {
    const limit =
      b.scheduler!.kind === 'slurm'
        ? { DROVER_FAKE_SLURM_MAX_ARRAY_SIZE: '5' }
        : { DROVER_FAKE_GE_MAX_AJ_TASKS: '4' };
    site.env = { ...site.env, ...limit };
    script(site, 'show.sh', SHOW);
    await prelaunch(site, 'M', 'sh show.sh', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const dry = await droverJson<{ submissions: string[][] }>(site, [
      'launch',
      ...site.launch,
      '--jobname',
      'M',
      '--dry-run',
      '--json',
    ]);
    assert.ok(
      dry.submissions.length >= 3,
      `10 elements in arrays of at most 4: ${dry.submissions.length} submissions`,
    );
    const l = await launch(site, 'M');
    const ran = site.calls(b.scheduler!.submit).map((c) => [c.prog, ...c.argv]);
    assert.deepEqual(
      ran,
      dry.submissions.map((argv) => argv.map((a) => a.replaceAll('<N>', l.launch!))),
    );
    assert.deepEqual((await settled(b, site, 'M')).counts, counts({ succeeded: 9, failed: 1 }));
    for (const id of [1, 2, 3, 4, 5, 6, 8, 9, 10]) assert.equal(await logOf(site, 'M', id), `${id} ${id}\n`);
    await launch(site, 'M', ['--failed']);
    assert.deepEqual((await settled(b, site, 'M')).counts, counts({ succeeded: 10 }));
    assert.equal(await logOf(site, 'M', 7), '7 7\n');
  },
};

/** Cancel one element of a job outside drover, through the site's scancel. */
function scancelOutside(site: Site, element: string): void {
  const r = spawnSync('scancel', [element], { env: { ...testEnv(), ...site.env }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

export const slurmAccounting: Scenario = {
  name: 'without a job completion log, Slurm’s time limit and an outside scancel are told from sacct, or from the element’s output alone',
  notFor: (b) =>
    b.scheduler?.fake && b.scheduler.kind === 'slurm' ? undefined : 'the fake Slurm’s accounting settings',
  timeoutMs: (b) => usual(b) * 2,
  async run(b, site) {
    script(site, 'sleeper.sh', SLEEPER);
    for (const mode of ['sacct', 'none']) {
      // A minute of --time lasts 30 s here: time enough to scancel task 3 before its own limit, on a busy
      // machine too (10 s was not, once in CI). Task 2 may have met its limit already when task 3 is seen
      // running: both started then.
      site.env = {
        ...site.env,
        DROVER_FAKE_SLURM_ACCOUNTING: mode,
        DROVER_FAKE_SLURM_SECONDS_PER_MINUTE: '30',
      };
      const job = `A${mode}`;
      await prelaunch(site, job, 'sh sleeper.sh', [0, 300, 300]);
      await launch(site, job, ['--duration', '1m', '--max-tasks', '2']);
      await waitStatus(
        b,
        site,
        job,
        'task 3 running',
        (s) => s.counts.succeeded === 1 && s.counts.running >= 1 && s.counts.running + s.counts.timeout === 2,
      );
      const id = site.calls('sbatch').at(-1)!.stdout.trim();
      scancelOutside(site, `${id}_3`);
      const s = await settled(b, site, job, b.settleMs + b.limit!.waitMs);
      assert.deepEqual(s.counts, counts({ succeeded: 1, timeout: 1, cancelled: 1 }), `accounting ${mode}`);
      assert.deepEqual(
        (await list(site, job)).map((x) => x.state),
        ['succeeded', 'timeout', 'cancelled'],
      );
    }
  },
};
