import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { LogsMode } from '../../src/runner/group.js';
import { assertNothingLeft, logOf, type Outcome, type Rec, runWith, want } from './runner-harness.js';
import type { RunnerImpl } from './runners.js';

/**
 * What the runner conformance suite (conformance.test.ts) and its run under load (conformance-under-load.test.ts)
 * share: the ends scenario — every row of the exit-status table, the logs, the DROVER_* environment and the
 * process group — and the checks of an outcome.
 */

/** Both ways of keeping output: a runner that keeps files per attempt under `segments` must still pass. */
export const LOG_MODES: LogsMode[] = ['files', 'segments'];

export const ok = { state: 'succeeded', exit_code: 0, signal: null };
export const failed = (code: number) => ({ state: 'failed', exit_code: code, signal: null });
export const killed = (signal: string) => ({ state: 'killed', exit_code: null, signal });

/** The result file of an attempt: beside its logs, named after it (also when its output is in segments). */
export const resultFile = (start: Rec): string =>
  path.join(path.dirname(String(start.out)), `${start.task}.${start.attempt}.result.json`);

/** A log's expected text, a pattern it must match, or a check given the task's start record. */
export type LogCheck = string | RegExp | ((text: string, start: Rec) => void);

/** A task of the ends scenario: its command, its end record, and its logs. */
export interface EndCase {
  command: string;
  end: Rec;
  out?: LogCheck;
  err?: LogCheck;
}

/**
 * The variables a task sees that drover sets. Those of the test run itself (DROVER_SPAWNER, CI's
 * DROVER_TEST_SLURM, ...) pass through to the task as any variable of the user's does, and are left out.
 */
export const DROVER_ENV =
  "env | grep '^DROVER_' | grep -v '^DROVER_\\(SPAWNER\\|ELEMENT_RUNNER\\|TEST_[A-Z_]*\\|FAKE_[A-Z_]*\\)=' | sort; echo \"cwd $(pwd)\"";

/** Its pid and process group, what it ignores (SigIgn), and whether its stdin ends at once. */
export const PROCESS_SHAPE =
  "echo $$ $(cut -d' ' -f5 /proc/$$/stat); grep '^SigIgn' /proc/$$/status; cat; echo stdin-done";

export const ENDS: EndCase[] = [
  { command: 'true', end: ok, out: '', err: '' },
  { command: "sh -c 'exit 3'", end: failed(3) },
  { command: 'drover-no-such-program', end: failed(127), out: '', err: /drover-no-such-program/ },
  { command: "sh -c 'exit 127'", end: failed(127) },
  { command: './not-executable', end: failed(126), err: /not-executable/ },
  { command: "sh -c 'kill -9 $$'", end: killed('SIGKILL') },
  { command: "sh -c 'kill -TERM $$'", end: killed('SIGTERM') },
  { command: "sh -c 'kill -29 $$'", end: killed('SIGIO') },
  // Its shell exits 128+9: the table reads it as the signal that killed the shell's child.
  { command: "sh -c 'sleep 5 & kill -9 $!; wait $!'", end: killed('SIGKILL') },
  { command: "sh -c 'sleep 0.02 & exit 5'", end: failed(5) },
  { command: "sh -c 'sleep 0.01; exit 0'", end: ok },
  {
    command: 'printf \'%s|%s\\n\' "$DROVER_TASK_ID" "$DROVER_ATTEMPT"; echo "it\'s $DROVER_JOBNAME" >&2',
    end: ok,
    out: '12|1\n',
    err: "it's J\n",
  },
  // The result file is the attempt's own, beside its logs, and the task can write it.
  {
    command:
      'echo \'{"loss": 0.5}\' > "$DROVER_RESULT_FILE" && cat "$DROVER_RESULT_FILE" && basename "$DROVER_RESULT_FILE"',
    end: ok,
    out: (text, start) => {
      assert.equal(text, `{"loss": 0.5}\n${start.task}.1.result.json\n`);
      assert.equal(fs.readFileSync(resultFile(start), 'utf8'), '{"loss": 0.5}\n');
    },
  },
  { command: 'echo \'é \\ "q"\ta\'\necho second line', end: ok, out: 'é \\ "q"\ta\nsecond line\n' },
  // A variable of the launch (settings.env) with a newline, a tab, quotes and non-ASCII.
  { command: 'printf \'[%s]\' "$X_NOTE"', end: ok, out: '[a\nb\t"c" é]' },
  {
    command: DROVER_ENV,
    end: ok,
    out: (text, start) => {
      const dir = String(start.out).split('/.drover/')[0];
      assert.equal(
        text,
        [
          'DROVER_ATTEMPT=1',
          'DROVER_JOBNAME=J',
          'DROVER_LAUNCH=3',
          `DROVER_LAUNCH_DIR=${dir}/.drover/jobs/J/launches/3`,
          `DROVER_RESULT_FILE=${resultFile(start)}`,
          `DROVER_SLOT=${start.slot}`,
          `DROVER_TASK_ID=${start.task}`,
          `cwd ${dir}`,
          '',
        ].join('\n'),
      );
    },
  },
  {
    command: PROCESS_SHAPE,
    end: ok,
    out: (text, start) => {
      const [ids, sigIgn, last] = text.trim().split('\n');
      assert.equal(ids, `${start.pid} ${start.pid}`, 'the task leads its own process group');
      const mask = BigInt(`0x${sigIgn!.split(/\s+/)[1]}`);
      for (const sig of [1, 2, 3, 13, 15])
        assert.equal((mask >> BigInt(sig - 1)) & 1n, 0n, `signal ${sig} ignored`);
      assert.equal(last, 'stdin-done', 'reading stdin ends at once');
    },
  },
  // A command line longer than the kernel takes for one argument: its shell cannot be executed at all.
  { command: `: ${'x'.repeat(1 << 20)}`, end: failed(126), out: '', err: /Argument list too long|E2BIG/ },
];

export function checkLog(o: Outcome, task: number, ext: 'out' | 'err', check: LogCheck | undefined): void {
  if (check === undefined) return;
  const text = logOf(o, task, ext);
  const start = o.raw.find((r) => r.type === 'start' && r.task === task)!;
  if (typeof check === 'string') assert.equal(text, check, `task ${task}'s ${ext} log`);
  else if (check instanceof RegExp) assert.match(text, check, `task ${task}'s ${ext} log`);
  else check(text, start);
}

/** Every task's records as expected: an attempt per end given, a skip, or nothing (undefined). */
export function assertTasks(o: Outcome, expected: Record<number, Rec[] | undefined>): void {
  const got = Object.fromEntries([...o.tasks].map(([id, recs]) => [id, recs]));
  const wanted = Object.fromEntries(Object.entries(expected).filter(([, recs]) => recs !== undefined));
  assert.deepEqual(got, wanted);
}

/** The ends scenario: every row of the exit-status table and the logs, with two slots. */
export async function runEnds(
  t: Parameters<typeof runWith>[0],
  impl: RunnerImpl,
  logs: LogsMode,
): Promise<void> {
  const o = await runWith(t, impl, { commands: ENDS.map((c) => c.command), logs });
  assertTasks(o, Object.fromEntries(ENDS.map((c, i) => [i + 1, want.attempt(o.launch, i + 1, 1, c.end)])));
  ENDS.forEach((c, i) => {
    checkLog(o, i + 1, 'out', c.out);
    checkLog(o, i + 1, 'err', c.err);
  });
  assert.deepEqual(new Set(o.ends.values()), new Set(['done']));
  assert.deepEqual(new Set(o.exits.values()), new Set(impl.packs ? [1] : [0, 1]));
  // Two slots asked for: a runner of one task has one.
  for (const r of o.raw) if (r.type === 'runner') assert.equal(r.slots, impl.packs ? 2 : 1);
  assertNothingLeft(o);
}
