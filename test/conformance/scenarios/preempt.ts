import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ELEMENT_LIMIT, PREEMPTED } from '../../../src/runner/reasons.js';
import { counts } from '../../helpers/contract.js';
import { testEnv } from '../../helpers/drover-in-process-fake.js';
import { submittedId } from '../../helpers/scheduler-calls.js';
import { waitFor } from '../../helpers/workspace.js';
import type { BackendUnderTest, Site } from '../backend.js';
import {
  attempts,
  drover,
  launch,
  list,
  prelaunch,
  type Status,
  script,
  settled,
  status,
  waitStatus,
} from '../drive.js';
import { clustersOnly, fakesOnly, type Scenario, usual } from '../scenario.js';

/**
 * Issue 34: an array element the scheduler stops and runs again — `scontrol requeue` on Slurm (as preemption with
 * PreemptMode=REQUEUE does), `qmod -rj` on Grid Engine — is a preemption. With `--requeue 1` its task runs again,
 * resumed, as a new attempt: the one cut keeps its state (`killed`) with the reason `preempted`, and the requeue
 * is counted. Without `--requeue` drover asks the scheduler never to run an element again (its tasks would run
 * again under the same attempt numbers), and the scheduler refuses the requeue.
 */

/**
 * Six one-second steps counted in `ck.<name>`, printing where it started: a resumed run goes on from there. The
 * checkpoint is written whole or not at all (a stop between a truncate and a write left it empty).
 */
const STEPS = `ck=ck.$1
n=$(cat "$ck" 2>/dev/null || echo 0)
echo "attempt $DROVER_ATTEMPT resume=\${DROVER_RESUME-none} from $n"
while [ "$n" -lt 6 ]; do sleep 1 & wait $!; n=$((n + 1)); echo "$n" > "$ck.new"; mv "$ck.new" "$ck"; done
echo "done at $n"
`;

/**
 * STEPS that wait after their second step until the file `release.<name>` is there: a test stops the element
 * while its task waits there, however late its wait for the second step returns (on the real Grid Engine in CI, a
 * test process whose event loop concurrent scenarios' spawnSync calls held saw the whole task end first).
 */
const GATED_STEPS = STEPS.replace(
  'while [ "$n" -lt 6 ]; do ',
  'while [ "$n" -lt 6 ]; do if [ "$n" -ge 2 ] && [ ! -e "release.$1" ]; then sleep 0.2 & wait $!; continue; fi; ',
);

/** Let GATED_STEPS task `name` go on past its second step. */
function release(site: Site, name: string): void {
  fs.writeFileSync(path.join(site.cwd, `release.${name}`), '');
}

/** Run a command with the site's environment; its exit code and output. */
function runIn(site: Site, argv: string[]): { code: number | null; text: string } {
  const r = spawnSync(argv[0]!, argv.slice(1), {
    cwd: site.cwd,
    env: { ...testEnv(), ...site.env },
    encoding: 'utf8',
  });
  return { code: r.status, text: `${r.stdout}${r.stderr}`.trim() };
}

/** Ask the scheduler to stop element `index` of job `id` and run it again, as an admin or preemption does. */
function requeueElement(b: BackendUnderTest, site: Site, id: string, index: number) {
  return b.scheduler!.kind === 'slurm'
    ? runIn(site, ['scontrol', 'requeue', `${id}_${index}`])
    : runIn(site, ['qmod', '-rj', `${id}.${index}`]);
}

/**
 * Real Slurm holds a requeued element back for about two minutes (BeginTime): let it start at once, as an admin
 * may — once it pends again, not while it completes its run (the requeue's own hold would undo the update). Not
 * in the second its run was stopped either: slurmd revoked the element's job credential then, and a credential
 * made in that same second is taken for revoked too ("Killing non-startable batch job: Job credential revoked":
 * the element ends FAILED; CI's rehearsal at b99807f saw it once, the update 0.2 s after the requeue). So the
 * first update comes 2 s after the element is seen pending again. (`StartTime=now+2` instead waits for the next
 * backfill pass, ~30 s: nothing schedules when a begin time passes.) Nothing on the fakes, which hold nothing.
 */
async function runAgainNow(b: BackendUnderTest, site: Site, id: string, index: number): Promise<void> {
  if (b.scheduler?.kind !== 'slurm' || b.scheduler.fake) return;
  const show = () => runIn(site, ['scontrol', '-o', 'show', 'job', `${id}_${index}`]).text;
  await waitFor(
    `element ${id}_${index} pending again`,
    () => {
      const s = show();
      return /Restarts=[1-9]/.test(s) && /JobState=PENDING/.test(s);
    },
    b.settleMs + 60_000,
    500,
  );
  const revokedUntil = Date.now() + 2_000;
  await waitFor(
    `element ${id}_${index} running again`,
    () => {
      if (!/JobState=PENDING/.test(show())) return true;
      if (Date.now() >= revokedUntil)
        runIn(site, ['scontrol', 'update', `JobId=${id}_${index}`, 'StartTime=now']);
      return false;
    },
    60_000,
    1_000,
  );
}

/**
 * What a failure of the preempted job needs said, as CI shows only the assertion: each attempt, the records the
 * runners left, and what the scheduler says of element 1 now.
 */
async function whyNot(b: BackendUnderTest, site: Site, id: string, job: string): Promise<string> {
  const rows = (await attempts(site, job)).map((a) => JSON.stringify(a)).join('\n');
  const element =
    b.scheduler?.kind === 'slurm'
      ? runIn(site, ['scontrol', '-o', 'show', 'job', `${id}_1`]).text
      : runIn(site, ['qstat', '-j', id]).text;
  const dir = path.join(site.cwd, '.drover', 'jobs', job);
  const files = fs.existsSync(dir) ? (fs.readdirSync(dir, { recursive: true }) as string[]) : [];
  const records = files
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => `${f}:\n${fs.readFileSync(path.join(dir, f), 'utf8').slice(0, 3000)}`)
    .join('\n');
  return `attempts:\n${rows}\nrecords:\n${records}\nscheduler: ${element.slice(0, 2000)}`;
}

/** Wait until task `name`'s checkpoint file counts at least `n` steps. */
async function stepped(site: Site, name: string, n: number, timeoutMs: number): Promise<void> {
  const file = path.join(site.cwd, `ck.${name}`);
  await waitFor(
    `ck.${name} at ${n} steps`,
    () => {
      try {
        return Number(fs.readFileSync(file, 'utf8')) >= n;
      } catch {
        return false;
      }
    },
    timeoutMs,
    200,
  );
}

export const preemptRequeue: Scenario = {
  name: 'a preempted element (scontrol requeue, qmod -rj) with --requeue 1 runs its task again, resumed; without --requeue the scheduler may not',
  notFor: clustersOnly,
  timeoutMs: (b) => usual(b) * 2 + 60_000,
  async run(b, site) {
    const s = b.scheduler!;
    script(site, 'steps.sh', GATED_STEPS);
    await prelaunch(site, 'P', 'sh steps.sh', ['a', 'b']);
    await launch(site, 'P', ['--requeue', '1', '--task-timeout', '120', '--kill-grace', '1']);
    const id = submittedId(site.calls(s.submit).at(-1)!)!;
    await stepped(site, 'a', 2, b.settleMs);
    const asked = requeueElement(b, site, id, 1);
    release(site, 'a');
    release(site, 'b');
    assert.equal(asked.code, 0, asked.text);
    await runAgainNow(b, site, id, 1);
    const done = await settled(b, site, 'P', b.settleMs + 60_000);
    const want = counts({ succeeded: 2 });
    if (!isDeepStrictEqual(done.counts, want))
      assert.deepEqual(done.counts, want, await whyNot(b, site, id, 'P'));
    assert.equal(done.requeues, 1);
    assert.deepEqual(
      (await list(site, 'P')).map((x) => [x.task, x.state, x.attempts, x.requeues]),
      [
        [1, 'succeeded', 2, 1],
        [2, 'succeeded', 1, 0],
      ],
    );
    assert.deepEqual(
      (await attempts(site, 'P')).map((a) => [a.task, a.attempt, a.state, a.reason]),
      [
        [1, 1, 'killed', PREEMPTED],
        [1, 2, 'succeeded', null],
        [2, 1, 'succeeded', null],
      ],
    );
    const both = await drover(site, ['logs', 'P', '1', '--all-attempts']);
    assert.equal(both.code, 0, both.stderr);
    assert.match(both.stdout, /==> attempt 1: killed \(preempted[^\n]*<==\nattempt 1 resume=none from 0\n/);
    assert.match(both.stdout, /==> attempt 2: succeeded <==\nattempt 2 resume=1 from [2-6]\n/);
    assert.match(both.stdout, /done at 6\n$/);

    // Without --requeue the element is the scheduler's to end, never to run again.
    await prelaunch(site, 'Q', 'sh steps.sh', ['q']);
    await launch(site, 'Q', []);
    const qid = submittedId(site.calls(s.submit).at(-1)!)!;
    await stepped(site, 'q', 1, b.settleMs);
    const refused = requeueElement(b, site, qid, 1);
    if (s.kind === 'slurm') {
      assert.equal(refused.code, 1, refused.text);
      assert.match(refused.text, /Requested operation is presently disabled/);
    } else assert.match(refused.text, /is not restartable/);
    release(site, 'q');
    const q = await settled(b, site, 'Q', b.settleMs + 30_000);
    assert.deepEqual(q.counts, counts({ succeeded: 1 }));
    assert.deepEqual(
      (await attempts(site, 'Q')).map((a) => [a.task, a.attempt, a.state]),
      [[1, 1, 'succeeded']],
    );
  },
};

/**
 * An element header (drover config) that holds an element run again — after scontrol requeue (Slurm sets
 * SLURM_RESTART_COUNT) or qmod -rj (Grid Engine sets RESTARTED=1) — before its runner starts, until the file
 * `rerun` is there: the scheduler holds the element while its task's last attempt has ended `killed`, as real
 * Slurm does while the element completes its requeue (CG).
 */
const HOLD_RERUN = `if [ "\${SLURM_RESTART_COUNT:-0}" != 0 ] || [ "\${RESTARTED:-0}" = 1 ]; then while [ ! -e rerun ]; do sleep 0.2; done; fi`;

/** The launches of a status that are open, for a failure message. */
const openOf = (s: Status) => s.launches.map((l) => `${l.id}: ${l.open ? 'open' : 'closed'}`).join(', ');

export const requeueKeepsLaunchOpen: Scenario = {
  name: 'while a requeued element holds a task whose attempt a stop ended, its launch stays open, even with the queue unreachable; the run again is recorded',
  notFor: fakesOnly,
  timeoutMs: usual,
  async run(b, site) {
    const s = b.scheduler!;
    script(site, 'steps.sh', STEPS);
    const cfg = await drover(site, ['config', '--write', s.kind, 'header', HOLD_RERUN]);
    assert.equal(cfg.code, 0, cfg.stderr);
    await prelaunch(site, 'H', 'sh steps.sh', ['h']);
    await launch(site, 'H', ['--requeue', '1', '--task-timeout', '120', '--kill-grace', '1']);
    const id = submittedId(site.calls(s.submit).at(-1)!)!;
    await stepped(site, 'h', 1, b.settleMs);
    const asked = requeueElement(b, site, id, 1);
    assert.equal(asked.code, 0, asked.text);
    // First while the queue cannot be asked: nothing says whether the element runs again, so nothing is final.
    const down = { DROVER_FAKE_FAULTS: `${s.queue}:down` };
    const stopped = await waitStatus(
      b,
      site,
      'H',
      'the stopped attempt',
      (x) => x.counts.killed === 1,
      b.settleMs,
      down,
    );
    assert.ok(
      stopped.launches[0]!.open,
      `the launch stays open with the queue unreachable (${openOf(stopped)})`,
    );
    // Then with the queue's answer, while the element waits in the header: still open, the task queued or killed.
    for (let i = 0; i < 3; i++) {
      const held = await status(site, 'H');
      assert.ok(held.launches[0]!.open, `status ${i + 1}: the launch stays open (${openOf(held)})`);
      assert.equal(
        held.counts.killed + held.counts.queued,
        1,
        `status ${i + 1}: ${JSON.stringify(held.counts)}`,
      );
    }
    fs.writeFileSync(path.join(site.cwd, 'rerun'), '');
    const done = await settled(b, site, 'H');
    assert.deepEqual(done.counts, counts({ succeeded: 1 }));
    assert.equal(done.requeues, 1);
    assert.deepEqual(
      (await attempts(site, 'H')).map((a) => [a.attempt, a.state, a.reason]),
      [
        [1, 'killed', PREEMPTED],
        [2, 'succeeded', null],
      ],
    );
  },
};

/**
 * Preempt element `index` of job `id` as a site does: a job of the higher-tier partition `urgent` (the test
 * cluster's, scripts/test-cluster/slurm-up.sh: PreemptType=preempt/partition_prio, PreemptMode=REQUEUE) takes
 * every CPU of the node.
 */
async function preemptBy(site: Site, id: string, index: number): Promise<void> {
  const cpus = runIn(site, ['sinfo', '-h', '-N', '-o', '%c']).text.split('\n')[0]!.trim();
  const urgent = runIn(site, [
    'sbatch',
    '--parsable',
    '-p',
    'urgent',
    '-c',
    cpus,
    '--output=/dev/null',
    '--wrap',
    'sleep 2',
  ]);
  assert.equal(urgent.code, 0, urgent.text);
  site.defer(() => void runIn(site, ['scancel', urgent.text]));
  await waitFor(
    `element ${id}_${index} preempted`,
    () => !/^\S+ R$/m.test(runIn(site, ['squeue', '-h', '-r', '-j', id, '-o', '%i %t']).text),
    30_000,
    200,
  );
}

export const preemptedByPartition: Scenario = {
  name: 'a job of a higher-priority partition preempts an element: with --requeue 1 its task resumes and succeeds; without, it ends killed, preempted',
  notFor: (b) =>
    b.scheduler?.kind === 'slurm' && !b.scheduler.fake
      ? undefined
      : 'preemption by partition priority needs the test Slurm’s urgent partition (PreemptMode=REQUEUE)',
  alone: 'its urgent job preempts every element on the node, not only its own',
  timeoutMs: (b) => usual(b) * 2 + 60_000,
  async run(b, site) {
    const s = b.scheduler!;
    script(site, 'steps.sh', STEPS);
    await prelaunch(site, 'P', 'sh steps.sh', ['a']);
    await launch(site, 'P', ['--requeue', '1', '--task-timeout', '120']);
    const id = submittedId(site.calls(s.submit).at(-1)!)!;
    await stepped(site, 'a', 2, b.settleMs);
    await preemptBy(site, id, 1);
    await runAgainNow(b, site, id, 1);
    const done = await settled(b, site, 'P', b.settleMs + 60_000);
    assert.deepEqual(done.counts, counts({ succeeded: 1 }));
    assert.equal(done.requeues, 1);
    assert.deepEqual(
      (await attempts(site, 'P')).map((a) => [a.task, a.attempt, a.state, a.reason]),
      [
        [1, 1, 'killed', PREEMPTED],
        [1, 2, 'succeeded', null],
      ],
    );
    assert.match(
      (await drover(site, ['logs', 'P', '1', '--all-attempts'])).stdout,
      /attempt 2 resume=1 from [2-6]\n/,
    );

    // Without --requeue Slurm cannot requeue the element: it cancels it, and the task is killed, preempted.
    await prelaunch(site, 'Q', 'sh steps.sh', ['q']);
    await launch(site, 'Q', []);
    const qid = submittedId(site.calls(s.submit).at(-1)!)!;
    await stepped(site, 'q', 1, b.settleMs);
    await preemptBy(site, qid, 1);
    const q = await settled(b, site, 'Q', b.settleMs + 30_000);
    assert.deepEqual(q.counts, counts({ killed: 1 }));
    assert.deepEqual(
      (await attempts(site, 'Q')).map((a) => [a.task, a.attempt, a.state, a.reason]),
      [[1, 1, 'killed', 'preempted: its array element was preempted']],
    );
  },
};

/** Thirty one-second steps counted in `ck.<name>`: more than one run of a 30 s element can do. */
const LONG_STEPS = STEPS.replace('-lt 6', '-lt 30');

export const requeueAtElementLimit: Scenario = {
  name: '--requeue 1 with only --duration 40s: the element stops its task before its limit and runs again, where the task resumes and succeeds',
  notFor: clustersOnly,
  timeoutMs: (b) => usual(b) * 2 + 120_000,
  async run(b, site) {
    const s = b.scheduler!;
    script(site, 'steps.sh', LONG_STEPS);
    await prelaunch(site, 'E', 'sh steps.sh', ['e']);
    // Each run stops its task 11 s (--kill-grace 1 + 10) before the element's 40 s: 29 s, too few for the task's
    // 30 one-second steps, and with the next run's 29 s, ample for them however slowly the runs start.
    // The fake Slurm's minutes last a real minute here: the element's limit is as asked.
    const r = await drover(
      site,
      ['launch', 'E', ...site.launch, '--requeue', '1', '--duration', '40s', '--kill-grace', '1', '-q'],
      {
        DROVER_FAKE_SLURM_SECONDS_PER_MINUTE: '60',
      },
    );
    assert.equal(r.code, 0, r.stderr);
    const id = submittedId(site.calls(s.submit).at(-1)!)!;
    await runAgainNow(b, site, id, 1);
    const done = await settled(b, site, 'E', b.settleMs + 90_000);
    const both = await drover(site, ['logs', 'E', '1', '--all-attempts']);
    // The attempts first: their states and reasons say what went wrong, the logs where each got to.
    assert.deepEqual(
      (await attempts(site, 'E')).map((a) => [a.task, a.attempt, a.state, a.reason]),
      [
        [1, 1, 'timeout', ELEMENT_LIMIT],
        [1, 2, 'succeeded', null],
      ],
      both.stdout,
    );
    assert.deepEqual(done.counts, counts({ succeeded: 1 }));
    assert.equal(done.requeues, 1);
    assert.match(both.stdout, /==> attempt 2: succeeded <==\nattempt 2 resume=1 from ([1-9]|[12][0-9])\n/);
    assert.match(both.stdout, /done at 30\n$/);
  },
};
