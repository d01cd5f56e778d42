import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { ingestLaunch } from '../../src/ledger/ingest.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import type { AttemptRecord, EndRecord } from '../../src/protocol/records.js';
import { launch, makeJob, tempLedger } from '../helpers/ledger.js';
import { captureWarnings, line, Writer } from '../helpers/records.js';

/**
 * Chaos over record files: random record streams of a few tasks, damaged at random (lines cut short, a NUL
 * inside, a torn line glued to the next record, junk lines between, a torn last line after a crash), written
 * in chunks cut at random byte offsets and ingested after each. The ledger must end as if the clean stream
 * minus exactly the damaged records had been ingested at once; every damaged line is reported with its file
 * and line; no task's state depends on a neighbour's damage.
 */

const END_STATES = ['succeeded', 'failed', 'killed', 'timeout', 'cancelled'] as const;
const RETRY_STATES = ['failed', 'killed', 'timeout'] as const;

/** What one task does: attempts (all but the last retried), or skipped before it started. */
const taskPlan = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      retried: fc.array(fc.constantFrom(...RETRY_STATES), { maxLength: 2 }),
      last: fc.constantFrom(...END_STATES),
      code: fc.integer({ min: 0, max: 255 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant('skip' as const) },
);

type Plan = typeof taskPlan extends fc.Arbitrary<infer T> ? T : never;
type Damage = 'keep' | 'cut' | 'nul' | 'glue';
const damage = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Damage>('keep') },
  { weight: 1, arbitrary: fc.constant<Damage>('cut') },
  { weight: 1, arbitrary: fc.constant<Damage>('nul') },
  { weight: 1, arbitrary: fc.constant<Damage>('glue') },
);
const junk = fc.oneof(
  fc.stringMatching(/^[a-z0-9 ":,\][]{0,30}[a-z0-9]$/),
  fc.constantFrom('[1,2]', '42', '"end"', '{"type":"nope"}', 'null', '{"type":"end","task":1}'),
  fc.constant('{"type":"end","task":1,"attempt":1,"at":5,"state":"bogus","exit_code":0,"signal":null}'),
);

/** A clean stream: the runner record, each task's records interleaved at random, the runner's end. */
function buildStream(plans: Plan[], order: number[], runner: AttemptRecord): AttemptRecord[] {
  const perTask = plans.map((p, i) => {
    const task = i + 1;
    if (p === 'skip') return [{ type: 'skip', task, at: 0, state: 'cancelled' } as AttemptRecord];
    const rs: AttemptRecord[] = [];
    const states = [...p.retried, p.last];
    states.forEach((state, k) => {
      rs.push({
        type: 'start',
        task,
        attempt: k + 1,
        at: 0,
        pid: 4000 + task,
        slot: 0,
        gpus: null,
        host: 'hé',
        out: `/l/${task}.out`,
        err: `/l/${task}.err`,
      });
      const e: EndRecord = {
        type: 'end',
        task,
        attempt: k + 1,
        at: 0,
        state,
        exit_code: state === 'failed' ? p.code || 1 : state === 'succeeded' ? 0 : null,
        signal: state === 'killed' ? 'SIGKILL' : null,
      };
      if (k < states.length - 1) e.retry = true;
      rs.push(e);
    });
    return rs;
  });
  const out: AttemptRecord[] = [runner];
  for (const i of order) out.push(perTask[i]!.shift()!);
  out.push({ type: 'runner-end', at: 0, reason: 'done' });
  // Whole seconds: the launch's summed busy time is then exact whatever the batching.
  return out.map((r, i) => ({ ...r, at: 10 + i }));
}

/** Every row the ledger keeps about a launch and its job, without what depends on file paths or the clock. */
function dump(ledger: Ledger, jobId: number, launchId: number): unknown {
  const all = (sql: string, id: number) => ledger.db.prepare(sql).all(id);
  return {
    tasks: all('SELECT id, state, exit_code, attempts FROM tasks WHERE job_id = ? ORDER BY id', jobId),
    launchTasks: all(
      'SELECT task_id, state FROM launch_tasks WHERE launch_id = ? ORDER BY task_id',
      launchId,
    ),
    attempts: all(
      `SELECT task_id, attempt, state, exit_code, signal, started_at, ended_at, host, slot, gpus, pid, stdout_path,
         stderr_path, reason FROM attempts WHERE job_id = ? ORDER BY task_id, attempt`,
      jobId,
    ),
    launch: all('SELECT first_start, last_end, busy, open FROM launches WHERE id = ?', launchId),
    runners: all(
      'SELECT name, host, pid, pid_start, started_at, ended_at FROM runners WHERE launch_id = ?',
      launchId,
    ),
    counts: all('SELECT state, n FROM job_counts WHERE job_id = ? AND n != 0 ORDER BY state', jobId),
  };
}

test('chaos: damaged, torn and junk lines in record files ingested in random chunks', async (t) => {
  const scenario = fc.array(taskPlan, { minLength: 1, maxLength: 5 }).chain((plans) => {
    const events = plans.flatMap(
      (p, i) => Array(p === 'skip' ? 1 : 2 * (p.retried.length + 1)).fill(i) as number[],
    );
    const lines = events.length + 2;
    return fc.record({
      plans: fc.constant(plans),
      order: fc.shuffledSubarray(events, { minLength: events.length, maxLength: events.length }),
      damage: fc.array(damage, { minLength: lines, maxLength: lines }),
      cutAt: fc.array(fc.double({ min: 0.05, max: 0.95, noNaN: true }), {
        minLength: lines,
        maxLength: lines,
      }),
      junkBefore: fc.array(fc.option(junk, { freq: 6 }), { minLength: lines, maxLength: lines }),
      tornTail: fc.boolean(),
      chunks: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
    });
  });
  // One ledger for the chaos and one for the references, a job per run: a ledger costs ~50 ms to make.
  const world: World = { ledger: tempLedger(t), ref: tempLedger(t), live: new Writer(t), runs: 0 };
  captureWarnings(world.ref);
  await fc.assert(
    fc.asyncProperty(scenario, (s) => run(s, world, t)),
    { numRuns: 100, includeErrorInReport: true },
  );
});

interface World {
  ledger: Ledger;
  ref: Ledger;
  /** The writer of runs whose file ends whole: it lives on. */
  live: Writer;
  runs: number;
}

interface Scenario {
  plans: Plan[];
  order: number[];
  damage: Damage[];
  cutAt: number[];
  junkBefore: (string | null)[];
  tornTail: boolean;
  chunks: number[];
}

async function run(
  s: Scenario,
  world: World,
  t: { after(fn: () => void | Promise<void>): void },
): Promise<void> {
  const { ledger, ref } = world;
  const name = `J${++world.runs}`;
  const warnings = captureWarnings(ledger);
  const job = makeJob(ledger, name, s.plans.length);
  const ids = s.plans.map((_, i) => i + 1);
  const l = launch(ledger, job, ids);
  // A torn last line is cut only once its writer is gone: those runs get a writer of their own to end.
  const writer = s.tornTail ? new Writer(t) : world.live;
  const file = writer.file(l);
  const clean = buildStream(s.plans, s.order, writer.runner(l.id));

  // Damage it: which records are gone, which lines must be reported.
  const gone = new Set<number>();
  const faulty: number[] = [];
  let text = '';
  let lineNo = 1;
  let glued = false;
  clean.forEach((r, i) => {
    const last = i === clean.length - 1;
    const json = JSON.stringify(r);
    const junkLine = s.junkBefore[i];
    if (junkLine !== null && !glued && junkLine !== undefined) {
      text += `${junkLine}\n`;
      faulty.push(lineNo++);
    }
    const at = Math.max(1, Math.min(json.length - 1, Math.floor(json.length * s.cutAt[i]!)));
    if (last && s.tornTail) {
      text += json.slice(0, at); // the crash: no line end, and no one will write one
      gone.add(i);
      faulty.push(lineNo);
      return;
    }
    let d = glued ? 'keep' : s.damage[i]!;
    if (d === 'glue' && (last || (i === clean.length - 2 && s.tornTail))) d = 'cut';
    glued = d === 'glue';
    if (d === 'keep') {
      text += `${json}\n`;
      lineNo++;
      return;
    }
    gone.add(i);
    if (d === 'cut') text += `${json.slice(0, at)}\n`;
    else if (d === 'nul') text += `${json.slice(0, at)}\u0000${json.slice(at)}\n`;
    else text += json.slice(0, at); // glued to the next record, which counts
    faulty.push(lineNo);
    if (d !== 'glue') lineNo++;
  });

  // Write it as a runner would, in chunks, ingesting after each.
  const bytes = Buffer.from(text);
  const cuts = [...new Set(s.chunks.map((c) => Math.floor(c * bytes.length)))].sort((a, b) => a - b);
  let from = 0;
  fs.writeFileSync(file, '');
  for (const cut of [...cuts, bytes.length]) {
    fs.appendFileSync(file, bytes.subarray(from, cut));
    from = cut;
    ingestLaunch(ledger, l);
  }
  if (s.tornTail) await writer.die();
  ingestLaunch(ledger, l);
  ingestLaunch(ledger, l);

  // The reference: the clean stream minus the damaged records, at once.
  const refJob = makeJob(ref, name, s.plans.length);
  const refLaunch = launch(ref, refJob, ids);
  fs.writeFileSync(
    writer.file(refLaunch),
    clean
      .filter((_, i) => !gone.has(i))
      .map(line)
      .join(''),
  );
  ingestLaunch(ref, refLaunch);
  assert.deepEqual(dump(ledger, job.id, l.id), dump(ref, refJob.id, refLaunch.id));

  // Each damaged line reported once, by file and line.
  const reported = warnings.map((w) => {
    assert.ok(w.startsWith(`${file}:`), w);
    return Number(w.slice(file.length + 1).split(':')[0]);
  });
  assert.deepEqual(reported, faulty);

  // A task whose own records are intact ends as its runner said, whatever happened to its neighbours.
  for (const task of ids) {
    const own = clean.map((r, i) => [r, i] as const).filter(([r]) => 'task' in r && r.task === task);
    if (own.some(([, i]) => gone.has(i))) continue;
    const lastRec = own.at(-1)![0];
    const want = lastRec.type === 'skip' ? 'cancelled' : (lastRec as EndRecord).state;
    const got = ledger.db
      .prepare('SELECT state FROM tasks WHERE job_id = ? AND id = ?')
      .get(job.id, task) as {
      state: string;
    };
    assert.equal(got.state, want, `task ${task}`);
  }
}
