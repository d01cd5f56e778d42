import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { counts } from '../../helpers/contract.js';
import { lines } from '../../helpers/drover.js';
import { submittedId } from '../../helpers/scheduler-calls.js';
import { waitFor } from '../../helpers/workspace.js';
import type { BackendUnderTest, Site } from '../backend.js';
import { drover, droverJson, launch, prelaunch, settled, status } from '../drive.js';
import { clustersOnly, fakesOnly, type Scenario, usual } from '../scenario.js';

/** Submissions the scheduler refuses: drover says why in one line and records nothing. */

/** The launch left nothing: no launch in the ledger, no launch folder, every task still pending. */
async function nothingRecorded(site: Site, job: string, tasks: number): Promise<void> {
  const s = await status(site, job);
  assert.deepEqual(s.launches, [], 'no launch recorded');
  assert.deepEqual(s.counts, counts({ pending: tasks }));
  const dir = path.join(site.cwd, '.drover', 'jobs', job, 'launches');
  assert.deepEqual(fs.existsSync(dir) ? fs.readdirSync(dir) : [], [], 'no launch folder left');
  const history = await drover(site, ['history', '--launch', '--json']);
  assert.equal(history.code, 0, history.stderr);
  assert.deepEqual(
    (JSON.parse(history.stdout) as { dry_run?: boolean }[]).filter((h) => !h.dry_run),
    [],
    'the refused launch left no history entry',
  );
}

/** Launch, expecting a refusal: the exit code and the one line of stderr. */
async function refusedLaunch(site: Site, job: string, args: string[], env: Record<string, string> = {}) {
  const r = await drover(
    site,
    ['launch', ...site.launch, ...site.background, '--jobname', job, ...args],
    env,
  );
  assert.equal(lines(r.stderr).length, 1, `exactly one line on stderr, got:\n${r.stderr}`);
  return r;
}

export const refusedRequest: Scenario = {
  name: 'a request the scheduler refuses is one line and exit 2, and leaves no launch behind',
  notFor: clustersOnly,
  timeoutMs: usual,
  async run(b, site) {
    await prelaunch(site, 'U', 'true', [1, 2]);
    const r = await refusedLaunch(site, 'U', b.scheduler!.badRequest.args);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, b.scheduler!.badRequest.says);
    await nothingRecorded(site, 'U', 2);
    assert.ok(
      site.calls(b.scheduler!.submit).every((c) => c.status !== 0),
      'nothing was submitted',
    );
  },
};

/** The fault variables of a fake (DROVER_FAKE_FAULTS, see test/fakes/faults.ts). */
const faults = (spec: string) => ({ DROVER_FAKE_FAULTS: spec });

export const refusedOrUnreachable: Scenario = {
  name: 'a submission refused by site policy, or a scheduler that cannot be reached, leaves no launch; the next launch runs',
  notFor: fakesOnly,
  timeoutMs: usual,
  async run(b, site) {
    const submit = b.scheduler!.submit;
    await prelaunch(site, 'Q', 'true', [1, 2, 3]);
    const policy = await refusedLaunch(site, 'Q', [], faults(`${submit}:refuse`));
    assert.equal(policy.code, 2, policy.stderr);
    assert.match(
      policy.stderr,
      b.scheduler!.kind === 'slurm' ? /accounting\/QOS policy/ : /Only 10 jobs are allowed/,
    );
    await nothingRecorded(site, 'Q', 3);
    const down = await refusedLaunch(site, 'Q', [], faults(`${submit}:down`));
    assert.notEqual(down.code, 0, down.stderr);
    assert.match(down.stderr, /controller|qmaster/);
    assert.match(down.stderr, /could not reach|did not answer/);
    await nothingRecorded(site, 'Q', 3);
    await launch(site, 'Q');
    assert.deepEqual((await settled(b, site, 'Q')).counts, counts({ succeeded: 3 }));
  },
};

/** Settings that make a launch of 10 tasks take several submissions. */
function splitting(b: BackendUnderTest): { env: Record<string, string>; args: string[] } {
  return b.scheduler!.kind === 'slurm'
    ? { env: { DROVER_FAKE_SLURM_MAX_ARRAY_SIZE: '5' }, args: [] }
    : { env: {}, args: ['--tasklist', '1-2,4,7-10'] };
}

export const rollback: Scenario = {
  name: 'refusing the last of a launch’s submissions withdraws those accepted before it and records nothing',
  notFor: fakesOnly,
  timeoutMs: usual,
  async run(b, site) {
    const s = b.scheduler!;
    await prelaunch(site, 'W', 'sleep', Array(10).fill(30));
    const { env, args } = splitting(b);
    const dry = await droverJson<{ submissions: string[][] }>(
      site,
      ['launch', ...site.launch, '--jobname', 'W', '--dry-run', '--json', ...args],
      env,
    );
    const k = dry.submissions.length;
    const r = await refusedLaunch(site, 'W', args, { ...env, ...faults(`${s.submit}:refuse@${k}`) });
    assert.equal(r.code, 2, r.stderr);
    const submits = site.calls(s.submit);
    assert.equal(submits.length, k, `the ${k} submissions of the dry run were tried`);
    const accepted = submits.slice(0, -1).map(submittedId);
    assert.ok(accepted.every((id) => id !== undefined) && submits.at(-1)!.status !== 0);
    const withdrawn = site.calls(s.cancel).flatMap((c) => c.argv.filter((a) => /^\d+$/.test(a)));
    assert.deepEqual(
      [...withdrawn].sort(),
      [...(accepted as string[])].sort(),
      'exactly the accepted ones withdrawn',
    );
    // Withdrawn: pending elements gone at once, a running one once it has ended its tasks (as after scancel/qdel).
    for (const id of accepted)
      await waitFor(
        `job ${id} to leave the queue`,
        () => s.elements(site, id!).length === 0,
        b.settleMs,
        b.pollMs,
      );
    await nothingRecorded(site, 'W', 10);
  },
};
