import assert from 'node:assert/strict';
import { counts } from '../../helpers/contract.js';
import {
  drover,
  droverJson,
  inState,
  type Launched,
  launch,
  list,
  logOf,
  prelaunch,
  script,
  settled,
  status,
} from '../drive.js';
import { type Scenario, usual } from '../scenario.js';

/** Which tasks a launch runs: --failed, a tasklist of several blocks, and what --dry-run says. */

const FLAKY = `if [ "$DROVER_ATTEMPT" = 1 ]; then
  case $1 in 2|5) exit 3;; 4) kill -9 $$;; esac
fi
echo "done $1"
`;

export const rerunFailed: Scenario = {
  name: '--failed reruns exactly the tasks that failed or were killed, as one launch',
  timeoutMs: usual,
  async run(b, site) {
    script(site, 'flaky.sh', FLAKY);
    await prelaunch(site, 'F', 'sh flaky.sh', [1, 2, 3, 4, 5, 6]);
    await launch(site, 'F');
    assert.deepEqual((await settled(b, site, 'F')).counts, counts({ succeeded: 3, failed: 2, killed: 1 }));
    const again = await launch(site, 'F', ['--failed']);
    assert.deepEqual([again.tasks, again.tasklist], [3, '2,4-5']);
    const s = await settled(b, site, 'F');
    assert.deepEqual(s.counts, counts({ succeeded: 6 }));
    assert.deepEqual(
      s.launches.map((x) => [x.tasklist, x.counts.succeeded]),
      [
        ['1-6', 3],
        ['2,4-5', 3],
      ],
    );
    assert.deepEqual(
      (await list(site, 'F')).map((x) => x.attempts),
      [1, 2, 1, 2, 2, 1],
    );
    assert.equal(await logOf(site, 'F', 4), 'done 4\n');
    const none = await drover(site, [
      'launch',
      ...site.launch,
      ...site.background,
      '--jobname',
      'F',
      '--failed',
      '--json',
    ]);
    assert.equal(none.code, 0, none.stderr);
    assert.deepEqual(JSON.parse(none.stdout), { jobname: 'F', launch: null, tasks: 0 });
    assert.equal((await status(site, 'F')).launches.length, 2, 'nothing to rerun makes no launch');
  },
};

const SHOW = 'echo "$1 $DROVER_TASK_ID"\n';
const twelve = Array.from({ length: 12 }, (_, i) => `v${i + 1}`);

export const tasklistBlocks: Scenario = {
  name: 'a tasklist of several blocks (1-3,7,9-12) runs exactly those tasks, each as itself',
  timeoutMs: usual,
  async run(b, site) {
    script(site, 'show.sh', SHOW);
    await prelaunch(site, 'B', 'sh show.sh', twelve);
    const l = await launch(site, 'B', ['--tasklist', '1-3,7,9-12']);
    assert.deepEqual([l.tasks, l.tasklist], [8, '1-3,7,9-12']);
    const s = await settled(b, site, 'B');
    assert.deepEqual(s.counts, counts({ succeeded: 8, pending: 4 }));
    assert.equal(s.launches[0]!.tasklist, '1-3,7,9-12');
    const tasks = await list(site, 'B');
    assert.deepEqual(inState(tasks, 'succeeded'), [1, 2, 3, 7, 9, 10, 11, 12]);
    assert.deepEqual(inState(tasks, 'pending'), [4, 5, 6, 8]);
    for (const id of inState(tasks, 'succeeded')) assert.equal(await logOf(site, 'B', id), `v${id} ${id}\n`);
  },
};

/** What `drover launch --dry-run --json` prints. */
interface DryRun extends Launched {
  dry_run: true;
  submissions: string[][];
}

export const dryRunIsWhatRuns: Scenario = {
  name: 'a dry run shows the tasks, and the exact scheduler commands, that the launch then runs',
  timeoutMs: usual,
  async run(b, site) {
    script(site, 'show.sh', SHOW);
    await prelaunch(site, 'R', 'sh show.sh', twelve.slice(0, 6));
    const args = ['--tasklist', '1-2,4,6', ...b.throttle(2)];
    const after = b.scheduler?.extraArgs ?? [];
    const tail = after.length > 0 ? ['--', ...after] : [];
    const dry = await droverJson<DryRun>(site, [
      'launch',
      ...site.launch,
      '--jobname',
      'R',
      '--dry-run',
      '--json',
      ...args,
      ...tail,
    ]);
    assert.deepEqual([dry.launch, dry.dry_run, dry.tasks, dry.tasklist], [null, true, 4, '1-2,4,6']);
    assert.deepEqual((await status(site, 'R')).launches, [], 'a dry run makes no launch');
    if (b.scheduler) {
      assert.deepEqual(site.calls(b.scheduler.submit), [], 'a dry run submits nothing');
      assert.ok(dry.submissions.length > 0 && dry.submissions.every((c) => c[0] === b.scheduler!.submit));
    } else assert.deepEqual(dry.submissions, []);
    const l = await launch(site, 'R', args, after);
    assert.deepEqual([l.tasks, l.tasklist], [dry.tasks, dry.tasklist]);
    if (b.scheduler) {
      const ran = site.calls(b.scheduler.submit).map((c) => [c.prog, ...c.argv]);
      const shown = dry.submissions.map((argv) => argv.map((a) => a.replaceAll('<N>', l.launch!)));
      assert.deepEqual(ran, shown, 'the launch ran exactly the commands the dry run showed');
    }
    const s = await settled(b, site, 'R');
    assert.deepEqual(s.counts, counts({ succeeded: 4, pending: 2 }));
    assert.deepEqual(inState(await list(site, 'R'), 'succeeded'), [1, 2, 4, 6]);
  },
};
