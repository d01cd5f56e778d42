import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { type JobStatus, status } from '../helpers/contract.js';
import { runDrover, startDrover } from '../helpers/drover.js';
import { isAlive, launchProcesses, tempWorkspace, waitFor, writeScript } from '../helpers/workspace.js';

/**
 * Chaos: random local launches (tasks, slots, executor, foreground or detached) whose runner is SIGKILLed —
 * alone, or with its whole process group — at a random moment. After each: no task process survives
 * untracked, nothing stays `running` or `queued`, counts never exceed the task count, and `--unfinished` ends
 * every task exactly once, never while an earlier run of it lives. Bounded: RUNS launches (DROVER_CHAOS_RUNS);
 * a failure prints fast-check's seed and path (replay with DROVER_CHAOS_SEED and DROVER_CHAOS_PATH).
 */

const RUNS = Number(process.env.DROVER_CHAOS_RUNS ?? 12);

interface Scenario {
  /** Seconds each task sleeps on its first run. */
  sleeps: number[];
  maxTasks: number;
  spawner: 'python' | 'perl' | 'node';
  detach: boolean;
  /** What gets SIGKILL: the runner process, or its whole process group. */
  target: 'runner' | 'group';
  killAfterMs: number;
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  sleeps: fc.array(fc.constantFrom(0, 0.05, 0.3, 1, 5), { minLength: 1, maxLength: 6 }),
  maxTasks: fc.integer({ min: 1, max: 3 }),
  spawner: fc.constantFrom('python' as const, 'perl' as const, 'node' as const),
  detach: fc.boolean(),
  target: fc.constantFrom('runner' as const, 'group' as const),
  killAfterMs: fc.integer({ min: 0, max: 1500 }),
});

/** Every count a status shows stays within the job's tasks, and they add up to them. */
function checkCounts(s: JobStatus, n: number, when: string): void {
  const total = Object.values(s.counts).reduce((a, b) => a + b, 0);
  assert.equal(total, n, `${when}: counts add up to ${total}, not ${n} tasks`);
  for (const l of s.launches) {
    const sum = Object.values(l.counts).reduce((a, b) => a + b, 0);
    assert.ok(sum <= n, `${when}: launch ${l.id} counts ${sum} tasks of ${n}`);
  }
}

/** Runs of each task in a launch folder, from the lines task.sh appends: B (began) per run. */
function runsIn(cwd: string, launchDir: string): Map<number, number> {
  const runs = new Map<number, number>();
  const file = path.join(cwd, 'runs.log');
  if (!fs.existsSync(file)) return runs;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const [kind, task, dir] = line.split(' ');
    if (kind === 'B' && dir === launchDir) runs.set(Number(task), (runs.get(Number(task)) ?? 0) + 1);
  }
  return runs;
}

async function trial(t: { after(fn: () => void | Promise<void>): void }, sc: Scenario): Promise<void> {
  const cwd = tempWorkspace(t, 'drover-chaos-');
  const n = sc.sleeps.length;
  writeScript(
    cwd,
    'task.sh',
    'echo "B $1 $DROVER_LAUNCH_DIR" >> runs.log\nif [ -f fast ]; then exit 0; fi\nsleep "$2"\n',
  );
  const pre = await runDrover(
    [
      'prelaunch',
      '+command',
      'sh task.sh',
      '+jobname',
      'J',
      '+pos-arg',
      ...sc.sleeps.map((s, i) => `${i + 1} ${s}`),
    ],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const env = { DROVER_SPAWNER: sc.spawner };
  const args = ['launch', '--jobname', 'J', '--max-tasks', String(sc.maxTasks), '-q'];

  if (sc.detach) {
    const r = await runDrover([...args, '--detach', '--json'], { cwd, env });
    assert.equal(r.code, 0, r.stderr);
    const pid = (JSON.parse(r.stdout) as { pid: number }).pid;
    await new Promise((r) => setTimeout(r, sc.killAfterMs));
    try {
      process.kill(sc.target === 'group' ? -pid : pid, 'SIGKILL');
    } catch {
      // it finished already
    }
    // kill() returns before the process dies: until the kernel next runs it, it still runs. On a loaded machine
    // an in-process status looked within that time, saw the runner alive and left its tasks queued, rightly.
    await waitFor('the killed runner to be dead', () => !isAlive(pid), 10_000, 5);
  } else {
    const launch = startDrover(args, { cwd, env, setsid: true });
    const exited = new Promise<void>((resolve) => {
      if (launch.child.exitCode !== null || launch.child.signalCode !== null) resolve();
      else launch.child.once('exit', () => resolve());
    });
    await Promise.race([exited, new Promise((r) => setTimeout(r, sc.killAfterMs / 2))]);
    if (launch.child.exitCode === null && fs.existsSync(path.join(cwd, '.drover', 'ledger.db')))
      checkCounts(await status('J', { cwd }), n, 'while running');
    await Promise.race([exited, new Promise((r) => setTimeout(r, sc.killAfterMs / 2))]);
    try {
      process.kill(sc.target === 'group' ? -launch.pid : launch.pid, 'SIGKILL');
    } catch {
      // it finished already
    }
    await exited;
  }

  // The first look at the job after the kill.
  const after = await status('J', { cwd });
  assert.deepEqual(launchProcesses(cwd), [], 'a task process survives its dead runner untracked');
  checkCounts(after, n, 'after the kill');
  assert.equal(
    after.counts.running + after.counts.queued,
    0,
    'tasks left running or queued by a dead runner',
  );
  const unfinished = n - after.counts.succeeded;

  fs.writeFileSync(path.join(cwd, 'fast'), '');
  const rerun = await runDrover(['launch', '--jobname', 'J', '--unfinished', '-q'], { cwd, env });
  assert.equal(rerun.code, 0, rerun.stderr);
  const final = await status('J', { cwd });
  checkCounts(final, n, 'after --unfinished');
  assert.equal(final.counts.succeeded, n, `not every task succeeded: ${JSON.stringify(final.counts)}`);
  assert.deepEqual(launchProcesses(cwd), []);
  if (unfinished === 0) return;
  // Exactly once: each task left unfinished ran once in the rerun, and no other task did.
  const last = final.launches.at(-1)!;
  const runs = runsIn(cwd, path.join(cwd, '.drover', 'jobs', 'J', 'launches', String(last.id)));
  assert.equal(last.counts.succeeded, unfinished);
  assert.equal(runs.size, unfinished, `tasks run by --unfinished: ${[...runs.keys()]}`);
  for (const [task, k] of runs) assert.equal(k, 1, `task ${task} ran ${k} times in the rerun`);
}

test(`chaos: ${RUNS} local launches SIGKILLed at random moments keep an honest record`, async (t) => {
  const seed = process.env.DROVER_CHAOS_SEED
    ? Number(process.env.DROVER_CHAOS_SEED)
    : Date.now() ^ process.pid;
  t.diagnostic(`seed ${seed}`);
  await fc.assert(
    fc.asyncProperty(scenario, async (sc) => {
      try {
        await trial(t, sc);
      } catch (err) {
        t.diagnostic(`failed on ${JSON.stringify(sc)}: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      }
    }),
    {
      numRuns: RUNS,
      seed,
      endOnFailure: true,
      ...(process.env.DROVER_CHAOS_PATH ? { path: process.env.DROVER_CHAOS_PATH } : {}),
    },
  );
});
