import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { droverJson, runDrover } from '../helpers/drover.js';
import { attempts } from './helpers.js';

/**
 * A sweep whose tasks print numbered lines and write a result, and the checks that `drover logs` and `results`
 * answer each task's output byte for byte (the tests of workers without a shared filesystem).
 */

/** The task script, `emit.sh`: task `n` prints n × 4,000 numbered lines on stdout (task 8: about 200 KiB), one on stderr. */
export const EMIT = `n=$2
seq 1 $((n * 4000)) | sed "s/^/task $n line /"
echo "stderr of task $n" >&2
printf '{"n": %s, "square": %s}\\n' "$n" "$((n * n))" > "$DROVER_RESULT_FILE"
`;

/** What task `n` prints on stdout. */
export function expectedOut(n: number): string {
  let s = '';
  for (let i = 1; i <= n * 4000; i++) s += `task ${n} line ${i}\n`;
  return s;
}

/** Launch the sweep of `n` tasks onto pool p as job `job` and wait until it is done; its launch id. */
export async function runSweep(
  cwd: string,
  job: string,
  n: number,
  logs: 'files' | 'segments',
): Promise<number> {
  const values = Array.from({ length: n }, (_, i) => String(i + 1));
  const pre = await runDrover(
    ['prelaunch', '+command', 'sh emit.sh', '+jobname', job, '+arg', '--n', ...values, '+q'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const l = await runDrover(
    ['launch', '--pool', 'p', '--jobname', job, '--logs', logs, '--follow', '--json'],
    {
      cwd,
    },
  );
  assert.equal(l.code, 0, `${l.stdout}\n${l.stderr}`);
  return Number((JSON.parse(l.stdout) as { launch: string }).launch);
}

/** Every task's logs and result, as `drover logs` and `drover results` answer them, against what it printed. */
export async function checkOutputs(cwd: string, job: string, n: number): Promise<void> {
  for (let task = 1; task <= n; task++) {
    const out = await runDrover(['logs', job, String(task)], { cwd });
    assert.equal(out.code, 0, out.stderr);
    assert.ok(out.stdout === expectedOut(task), `task ${task}: stdout differs (${out.stdout.length} bytes)`);
    const err = await runDrover(['logs', job, String(task), '--err'], { cwd });
    assert.equal(err.stdout, `stderr of task ${task}\n`, `task ${task}: stderr`);
  }
  const results = await droverJson<{ task: number; result: { n: number; square: number } }[]>(
    ['results', job, '--json'],
    { cwd },
  );
  assert.deepEqual(
    results.map((r) => [r.task, r.result]),
    Array.from({ length: n }, (_, i) => [i + 1, { n: i + 1, square: (i + 1) ** 2 }]),
  );
}

/** Each task has exactly one attempt, and it succeeded. */
export function oneSuccessEach(cwd: string, job: string, n: number): void {
  assert.deepEqual(
    attempts(cwd, job).map((a) => [a.task_id, a.attempt, a.state]),
    Array.from({ length: n }, (_, i) => [i + 1, 1, 'succeeded']),
  );
}

/** Files under `dir`, relative, sorted. */
export function tree(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    .sort();
}
