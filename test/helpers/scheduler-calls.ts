import fs from 'node:fs';

/**
 * The scheduler commands a test's drover ran, as the FAKE schedulers (test/fakes/) and the recording shim in front
 * of the real ones (test/helpers/recording-shim.ts) both log them: one JSON line per run in `calls.jsonl`.
 */

/** One run of sbatch, scancel, qsub, qdel... */
export interface SchedulerCall {
  /** The program's name (`sbatch`). */
  prog: string;
  /** Its arguments (without the program). */
  argv: string[];
  cwd: string;
  /** Unix seconds when it ran. */
  at: number;
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Every logged run in a calls file, oldest first (none when it does not exist yet). */
export function readCalls(file: string): SchedulerCall[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as SchedulerCall);
}

/** The job id a successful sbatch (`123`, `123;cluster`, `Submitted batch job 123`) or qsub (`4.1-3:1`) printed. */
export function submittedId(call: SchedulerCall): string | undefined {
  if (call.status !== 0) return undefined;
  const m = /(\d+)(?:[.;][^\s]*)?\s*$/.exec(call.stdout.trim());
  return m?.[1];
}
