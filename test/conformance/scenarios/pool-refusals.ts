import assert from 'node:assert/strict';
import { lines } from '../../helpers/drover.js';
import { createPoolIn, startPoolServer } from '../../helpers/pool-server.js';
import { submittedId } from '../../helpers/scheduler-calls.js';
import type { BackendUnderTest, Site } from '../backend.js';
import { drover } from '../drive.js';
import { clustersOnly, fakesOnly, type Scenario, usual, workerDuration } from '../scenario.js';

/**
 * `pool create --backend slurm|gridengine` submits its workers through the same client as an array launch
 * (issue 33 §1): a request the scheduler refuses, a scheduler that cannot be reached and the site's array limit
 * meet the pool as they meet a launch — one line naming the reason, no pool left up, nothing left queued.
 */

/** A pool request each scheduler refuses (options `pool create` has), and what drover's one line says. */
function badPool(b: BackendUnderTest): { args: string[]; says: RegExp } {
  return b.scheduler!.kind === 'slurm'
    ? { args: ['--partition', 'nosuch'], says: /Slurm refused the workers of pool 'wp'.*Invalid partition/ }
    : { args: ['--queue', 'nosuch.q'], says: /Grid Engine refused the workers of pool 'wp'.*nosuch\.q/ };
}

/** `pool create wp ARGS` expected to fail: its exit code, after checking its stderr is one line. */
async function refusedPool(site: Site, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const r = await drover(site, ['pool', 'create', 'wp', '--workers', '2', ...args]);
  assert.equal(lines(r.stderr).length, 1, `exactly one line on stderr, got:\n${r.stderr}`);
  const pools = await drover(site, ['pool', 'status', '--json']);
  assert.equal(pools.code, 0, pools.stderr);
  const up = (JSON.parse(pools.stdout) as { name: string; state: string }[]).filter((p) => p.state === 'up');
  assert.deepEqual(up, [], 'no pool left up');
  return r;
}

export const poolRefusedRequest: Scenario = {
  name: 'a pool whose workers the scheduler refuses is one line and exit 2, and is not left up',
  notFor: clustersOnly,
  timeoutMs: usual,
  async run(b, site) {
    await startPoolServer(site);
    const bad = badPool(b);
    const r = await refusedPool(site, ['--backend', b.scheduler!.kind, ...bad.args]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, bad.says);
    assert.ok(
      site.calls(b.scheduler!.submit).every((c) => c.status !== 0),
      'nothing was submitted',
    );
  },
};

export const poolRefusedOrUnreachable: Scenario = {
  name: 'pool workers refused by site policy, or a scheduler that cannot be reached, leave no pool up; the next create works',
  notFor: fakesOnly,
  timeoutMs: (b) => usual(b) + 60_000,
  async run(b, site) {
    const s = b.scheduler!;
    // The controller submits the workers: the faults go into its environment. Its 1st submission is refused
    // by policy, its 2nd finds the scheduler down, its 3rd goes through.
    await startPoolServer({
      ...site,
      env: { ...site.env, DROVER_FAKE_FAULTS: `${s.submit}:refuse@1,${s.submit}:down@2` },
    });
    const kind = ['--backend', s.kind, '--duration', workerDuration(b)];
    const policy = await refusedPool(site, kind);
    assert.equal(policy.code, 2, policy.stderr);
    assert.match(policy.stderr, s.kind === 'slurm' ? /accounting\/QOS policy/ : /Only 10 jobs are allowed/);
    const down = await refusedPool(site, kind);
    assert.notEqual(down.code, 0, down.stderr);
    assert.match(down.stderr, /could not reach|did not answer/);
    await createPoolIn(site, 'wp', ['--workers', '2', ...kind], 60_000);
    const accepted = site
      .calls(s.submit)
      .map(submittedId)
      .filter((id) => id !== undefined);
    assert.equal(accepted.length, 1, 'one array job, for the third create');
    const d = await drover(site, ['pool', 'down', 'wp']);
    assert.equal(d.code, 0, d.stderr);
  },
};

export const poolArrayLimit: Scenario = {
  name: 'pool workers beyond the scheduler’s array limit go in several arrays, all of them ready and removed by down',
  notFor: fakesOnly,
  timeoutMs: (b) => usual(b) + 60_000,
  async run(b, site) {
    const s = b.scheduler!;
    // Arrays of at most 2 elements (Slurm: indices below MaxArraySize 3; Grid Engine: max_aj_tasks 2).
    const limit =
      s.kind === 'slurm' ? { DROVER_FAKE_SLURM_MAX_ARRAY_SIZE: '3' } : { DROVER_FAKE_GE_MAX_AJ_TASKS: '2' };
    site.env = { ...site.env, ...limit };
    await startPoolServer(site);
    await createPoolIn(
      site,
      'wp',
      ['--backend', s.kind, '--workers', '5', '--duration', workerDuration(b)],
      90_000,
    );
    const arrays = site
      .calls(s.submit)
      .map((c) => ({ id: submittedId(c), range: c.argv.find((a) => /^(--array=)?1-\d+$/.test(a)) }))
      .filter((a) => a.id !== undefined);
    assert.deepEqual(
      arrays.map((a) => a.range?.replace('--array=', '')),
      ['1-2', '1-2', '1-1'],
      'five workers in arrays of at most two',
    );
    const d = await drover(site, ['pool', 'down', 'wp']);
    assert.equal(d.code, 0, d.stderr);
  },
};
