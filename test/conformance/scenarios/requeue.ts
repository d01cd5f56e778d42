import assert from 'node:assert/strict';
import { counts } from '../../helpers/contract.js';
import { attempts, drover, droverJson, launch, list, prelaunch, script, settled } from '../drive.js';
import { type Scenario, usual } from '../scenario.js';

/**
 * `--requeue N` (issue 34): a task that checkpoints on the `--signal` warning and exits 75 runs again, resumed
 * (DROVER_RESUME=1), and succeeds; one that never checkpoints hits its time limit N + 1 times and ends `timeout`.
 * Earlier attempts keep their true state and reason; the requeues are counted apart from the states.
 */

/**
 * Five one-second steps, counted in a checkpoint file of its own (`ck.<name>`): on USR1 it saves and exits 75.
 * `ignore` has a hundred steps and ignores USR1: only its limit ends it, every time.
 */
const STEPS = `ck=ck.$1 goal=5
if [ "$1" = ignore ]; then trap '' USR1; goal=100; else trap 'echo "saved at $n"; exit 75' USR1; fi
n=$(cat "$ck" 2>/dev/null || echo 0)
echo "attempt $DROVER_ATTEMPT resume=\${DROVER_RESUME-none} from $n"
while [ "$n" -lt "$goal" ]; do sleep 1 & wait $!; n=$((n + 1)); echo "$n" > "$ck"; done
echo "done at $n"
`;

export const requeueAtLimit: Scenario = {
  name: '--requeue 2 with --task-timeout 8 and --signal USR1@4: a task that checkpoints resumes and succeeds, one that never does ends timeout after 3 attempts',
  timeoutMs: (b) => usual(b) + 30_000,
  async run(b, site) {
    script(site, 'steps.sh', STEPS);
    await prelaunch(site, 'R', 'sh steps.sh', ['save', 'ignore']);
    await launch(site, 'R', [
      '--task-timeout',
      '8',
      '--signal',
      'USR1@4',
      '--requeue',
      '2',
      '--kill-grace',
      '1',
    ]);
    const s = await settled(b, site, 'R', b.settleMs + 30_000);
    assert.deepEqual(s.counts, counts({ succeeded: 1, timeout: 1 }));
    assert.equal(s.requeues, 3, 'one requeue of task 1, two of task 2');
    assert.deepEqual(
      (await list(site, 'R')).map((x) => [x.task, x.state, x.attempts, x.requeues]),
      [
        [1, 'succeeded', 2, 1],
        [2, 'timeout', 3, 2],
      ],
    );
    assert.deepEqual(
      (await attempts(site, 'R')).map((a) => [a.task, a.attempt, a.state, a.exit_code, a.reason]),
      [
        [1, 1, 'failed', 75, 'checkpointed'],
        [1, 2, 'succeeded', 0, null],
        [2, 1, 'timeout', null, 'time limit of 8 s'],
        [2, 2, 'timeout', null, 'time limit of 8 s'],
        [2, 3, 'timeout', null, 'time limit of 8 s'],
      ],
    );
    const both = await drover(site, ['logs', 'R', '1', '--all-attempts']);
    assert.equal(both.code, 0, both.stderr);
    assert.match(both.stdout, /==> attempt 1: failed \(checkpointed\) <==\nattempt 1 resume=none from 0\n/);
    assert.match(
      both.stdout,
      /saved at [1-4]\n==> attempt 2: succeeded <==\nattempt 2 resume=1 from [1-4]\n/,
    );
    assert.match(both.stdout, /done at 5\n$/);
    // --failed finds the task that never checkpointed, and only it.
    const again = await droverJson<{ tasks: number; tasklist: string }>(site, [
      ...['launch', ...site.launch, '--jobname', 'R', '--failed', '--dry-run', '--json'],
    ]);
    assert.deepEqual([again.tasks, again.tasklist], [1, '2']);
  },
};
