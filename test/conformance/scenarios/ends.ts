import assert from 'node:assert/strict';
import { counts } from '../../helpers/contract.js';
import {
  attempts,
  drover,
  launch,
  list,
  logOf,
  prelaunch,
  SLEEPER,
  script,
  settled,
  status,
  taskGone,
} from '../drive.js';
import { clustersOnly, type Scenario, usual } from '../scenario.js';

/** How tasks end: each exit status and signal, a task's own time limit, and the backend's time limit. */

const TASK = `case $1 in
  ok) echo "ok $DROVER_TASK_ID";;
  fail) echo "failing on purpose" >&2; exit 3;;
  kill) kill -9 $$;;
esac
`;

export const exitStates: Scenario = {
  name: 'tasks that succeed, fail (exit 3) or are killed by a signal end so, with their exit codes',
  timeoutMs: usual,
  async run(b, site) {
    script(site, 'task.sh', TASK);
    await prelaunch(site, 'E', 'sh task.sh', ['ok', 'fail', 'kill', 'ok']);
    const l = await launch(site, 'E', ['--kill-grace', '1']);
    assert.deepEqual([l.tasks, l.tasklist, l.backend], [4, '1-4', b.recordedAs]);
    const s = await settled(b, site, 'E');
    assert.deepEqual(s.counts, counts({ succeeded: 2, failed: 1, killed: 1 }));
    assert.equal(s.launches.length, 1);
    assert.deepEqual(
      [s.launches[0]!.backend, s.launches[0]!.tasklist, s.launches[0]!.counts],
      [b.recordedAs, '1-4', s.counts],
    );
    const notOk = (s as unknown as { failed: { task: number; state: string; exit_code: number | null }[] })
      .failed;
    assert.deepEqual(
      notOk.map((x) => [x.task, x.state, x.exit_code]),
      [
        [2, 'failed', 3],
        [3, 'killed', null],
      ],
    );
    assert.deepEqual(
      (await list(site, 'E')).map((x) => [x.task, x.state, x.exit_code, x.attempts]),
      [
        [1, 'succeeded', 0, 1],
        [2, 'failed', 3, 1],
        [3, 'killed', null, 1],
        [4, 'succeeded', 0, 1],
      ],
    );
    const killed = (await attempts(site, 'E')).find((a) => a.task === 3);
    assert.equal(killed?.signal, 'SIGKILL');
    assert.equal(await logOf(site, 'E', 1), 'ok 1\n');
    assert.equal(await logOf(site, 'E', 2, true), 'failing on purpose\n');
  },
};

export const taskTimeLimit: Scenario = {
  name: 'a task over its --task-timeout ends as timeout and its process is stopped',
  timeoutMs: usual,
  async run(b, site) {
    script(site, 'sleeper.sh', SLEEPER);
    await prelaunch(site, 'T', 'sh sleeper.sh', [0, 300]);
    await launch(site, 'T', ['--task-timeout', '2s', '--kill-grace', '1']);
    const s = await settled(b, site, 'T');
    assert.deepEqual(s.counts, counts({ succeeded: 1, timeout: 1 }));
    assert.deepEqual(
      (await list(site, 'T')).map((x) => [x.task, x.state, x.exit_code]),
      [
        [1, 'succeeded', 0],
        [2, 'timeout', null],
      ],
    );
    await taskGone(site, 2);
  },
};

export const backendTimeLimit: Scenario = {
  name: 'a task stopped by the backend’s time limit (--duration) ends as timeout, its process gone',
  notFor: (b) => (b.limit ? undefined : `${b.name} takes no --duration (workers have their own limit)`),
  timeoutMs: (b) => usual(b) + (b.limit?.waitMs ?? 0),
  async run(b, site) {
    script(site, 'sleeper.sh', SLEEPER);
    await prelaunch(site, 'D', 'sh sleeper.sh', [0, 300]);
    await launch(site, 'D', [...b.limit!.args, '--kill-grace', '1']);
    const s = await settled(b, site, 'D', b.settleMs + b.limit!.waitMs);
    assert.deepEqual(s.counts, counts({ succeeded: 1, timeout: 1 }));
    assert.deepEqual(
      (await list(site, 'D')).map((x) => [x.task, x.state]),
      [
        [1, 'succeeded'],
        [2, 'timeout'],
      ],
    );
    await taskGone(site, 2);
    assert.deepEqual((await status(site, 'D')).counts, s.counts, 'a later status says the same');
  },
};

export const diedBeforeRunner: Scenario = {
  name: 'an element that ends before drover’s runner starts (a failing configured header) makes its tasks error',
  notFor: clustersOnly,
  timeoutMs: usual,
  async run(b, site) {
    await prelaunch(site, 'H', 'true', [1, 2]);
    const cfg = await drover(site, ['config', '--write', b.scheduler!.kind, 'header', 'exit 7']);
    assert.equal(cfg.code, 0, cfg.stderr);
    await launch(site, 'H');
    const s = await settled(b, site, 'H');
    assert.deepEqual(s.counts, counts({ error: 2 }));
    assert.deepEqual(
      (await list(site, 'H')).map((x) => [x.task, x.state, x.exit_code]),
      [
        [1, 'error', null],
        [2, 'error', null],
      ],
    );
    const tried = await attempts(site, 'H');
    assert.deepEqual(
      tried.map((a) => [a.task, a.state]),
      [
        [1, 'error'],
        [2, 'error'],
      ],
    );
    for (const a of tried)
      assert.match(a.reason ?? '', /ended( \(.*exit 7\))? before drover's runner started/);
  },
};
