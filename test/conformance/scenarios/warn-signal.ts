import assert from 'node:assert/strict';
import { counts } from '../../helpers/contract.js';
import { launch, list, logOf, prelaunch, script, settled } from '../drive.js';
import { clustersOnly, type Scenario, usual } from '../scenario.js';

/**
 * `--signal SIG@TIME`: each task gets SIG in its process group TIME before its limit, from its runner's timer
 * (every backend) and, at a Slurm element's limit, from Slurm too (`--signal=B:`, relayed by the batch script).
 */

/** Prints its start and limit variables and, on USR1, when it came, then exits 0; ignores USR1 with `ignore`. */
const WARNED = `start=$(date +%s.%N)
echo "start=$start left=\${DROVER_TIME_LEFT_S-none} deadline=\${DROVER_DEADLINE-none}"
if [ "$1" = ignore ]; then trap '' USR1; else trap 'echo "usr1=$(date +%s.%N)"; exit 0' USR1; fi
i=0; while [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
echo "no signal"
`;

/** The `key=value` fields of a task's output. */
async function fieldsOf(site: Parameters<typeof logOf>[0], job: string, task: number) {
  const out = await logOf(site, job, task);
  return Object.fromEntries([...out.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

export const warnBeforeTaskTimeout: Scenario = {
  name: '--signal USR1@5 with --task-timeout 8: a task that traps it exits 0 about 3 s in, one that ignores it times out',
  timeoutMs: usual,
  async run(b, site) {
    script(site, 'warned.sh', WARNED);
    await prelaunch(site, 'W', 'bash warned.sh', ['trap', 'ignore']);
    await launch(site, 'W', ['--task-timeout', '8', '--signal', 'USR1@5', '--kill-grace', '1']);
    const s = await settled(b, site, 'W');
    assert.deepEqual(s.counts, counts({ succeeded: 1, timeout: 1 }));
    assert.deepEqual(
      (await list(site, 'W')).map((x) => [x.task, x.state, x.exit_code]),
      [
        [1, 'succeeded', 0],
        [2, 'timeout', null],
      ],
    );
    const f = await fieldsOf(site, 'W', 1);
    const delay = Number(f.usr1) - Number(f.start);
    assert.ok(delay > 2 && delay < 7.5, `USR1 about 3 s after the start, not ${delay} s`);
    assert.equal(f.left, '8');
    assert.ok(
      Math.abs(Number(f.deadline) - Number(f.start) - 8) <= 1.5,
      `deadline ${f.deadline}, start ${f.start}`,
    );
    assert.doesNotMatch(await logOf(site, 'W', 2), /usr1=|no signal/);
  },
};

export const warnBeforeElementLimit: Scenario = {
  name: '--signal USR1@40 with --duration 1m: the task is warned before its element’s limit and exits 0',
  notFor: clustersOnly,
  timeoutMs: (b) => usual(b) + 60_000,
  async run(b, site) {
    // A fake minute of 30 s: Slurm's warning (40 s of 60, scaled: 20 s before) comes 10 s in, well before
    // the runner's own timer (20 s in, from the 60 s drover asked for), so it shows that the relay works.
    const fakeSlurm = b.scheduler!.fake && b.scheduler!.kind === 'slurm';
    if (fakeSlurm) site.env = { ...site.env, DROVER_FAKE_SLURM_SECONDS_PER_MINUTE: '30' };
    script(site, 'warned.sh', WARNED);
    await prelaunch(site, 'E', 'bash warned.sh', ['trap']);
    await launch(site, 'E', ['--duration', '1m', '--signal', 'USR1@40', '--kill-grace', '1']);
    if (b.scheduler!.kind === 'slurm') {
      const argv = site.calls('sbatch').at(-1)!.argv;
      assert.ok(argv.includes('--signal=B:USR1@40'), `sbatch ${argv.join(' ')}`);
    }
    const s = await settled(b, site, 'E', b.settleMs + 60_000);
    assert.deepEqual(s.counts, counts({ succeeded: 1 }));
    const f = await fieldsOf(site, 'E', 1);
    const delay = Number(f.usr1) - Number(f.start);
    assert.ok(delay < (fakeSlurm ? 17 : 40), `USR1 ${delay} s after the start`);
    const left = Number(f.left);
    assert.ok(left > 40 && left <= 60, `DROVER_TIME_LEFT_S ${f.left}`);
  },
};

/** Prints its start (Unix seconds) and its limit's variables. */
const LIMIT_VARS = `echo "start=$(date +%s) left=\${DROVER_TIME_LEFT_S-none} deadline=\${DROVER_DEADLINE-none}"
`;

export const limitVariables: Scenario = {
  name: 'under --duration 10m every task sees DROVER_TIME_LEFT_S and DROVER_DEADLINE, one per element and packed',
  notFor: (b) => (b.limit ? undefined : `${b.name} takes no --duration`),
  timeoutMs: usual,
  async run(b, site) {
    script(site, 'vars.sh', LIMIT_VARS);
    const runs: [string, string[]][] = [['V', []]];
    if (b.scheduler) runs.push(['P', ['--tasks-per-node', '2']]);
    for (const [job, extra] of runs) {
      await prelaunch(site, job, 'sh vars.sh', [1, 2]);
      await launch(site, job, ['--duration', '10m', ...extra]);
      assert.deepEqual((await settled(b, site, job)).counts, counts({ succeeded: 2 }));
      for (const task of [1, 2]) {
        const f = await fieldsOf(site, job, task);
        const left = Number(f.left);
        assert.ok(left > 540 && left <= 600, `${job} task ${task}: DROVER_TIME_LEFT_S ${f.left}`);
        const gap = Number(f.deadline) - Number(f.start) - left;
        assert.ok(
          Math.abs(gap) <= 2,
          `${job} task ${task}: deadline ${f.deadline}, start ${f.start}, left ${left}`,
        );
      }
    }
  },
};
