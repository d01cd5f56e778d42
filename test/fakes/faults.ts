import { createHash } from 'node:crypto';
import { nextNumber } from './state.js';

/**
 * Failures the FAKE schedulers inject on demand, named in DROVER_FAKE_FAULTS (comma separated), because a real
 * cluster cannot produce them when a test wants them:
 *
 * - `PROG:refuse` — the program refuses the request (sbatch/qsub: a site policy's message, exit 1);
 * - `PROG:down` — the scheduler's controller cannot be reached (the real message of a stopped slurmctld or
 *   sge_qmaster, exit 1);
 * - `PROG:truncate` — the program prints only the first half of its answer, cut inside a line, and exits 0;
 * - `PROG:bare` — a whole answer without its per-element details (`qstat -j`: no `error reason` lines), as a
 *   scheduler answers in the moment before it has them.
 *
 * PROG is a program's name (`qstat`: all its runs) or its name and first option (`qstat-j`: only `qstat -j ...`).
 * `@N` limits a fault to the Nth run of PROG that carried this same DROVER_FAKE_FAULTS value (`sbatch:refuse@3`:
 * the third sbatch of a launch), `@N-M` to runs N to M.
 */

/** A fault one run of a fake program must show. */
export type Fault = 'refuse' | 'down' | 'truncate' | 'bare';

const ITEM = /^([a-z]+(?:-[a-z]+)?):(refuse|down|truncate|bare)(?:@(\d+)(?:-(\d+))?)?$/;

/** The fault this run of `prog` with `args` must show, if DROVER_FAKE_FAULTS names one (counting the run). */
export function faultFor(
  prog: string,
  args: readonly string[],
  dir: string,
  spec = process.env.DROVER_FAKE_FAULTS ?? '',
): Fault | undefined {
  const items = spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const names = [prog, ...(args[0]?.startsWith('-') ? [`${prog}${args[0]}`] : [])];
  const mine: { name: string; fault: Fault; from: number; to: number }[] = [];
  for (const item of items) {
    const m = ITEM.exec(item);
    if (!m) throw new Error(`DROVER_FAKE_FAULTS: '${item}' is not PROG:refuse|down|truncate|bare[@N[-M]]`);
    if (!names.includes(m[1]!)) continue;
    const from = m[3] === undefined ? 1 : Number(m[3]);
    const to = m[3] === undefined ? Number.POSITIVE_INFINITY : Number(m[4] ?? m[3]);
    mine.push({ name: m[1]!, fault: m[2] as Fault, from, to });
  }
  if (mine.length === 0) return undefined;
  // Runs are counted per name: `qstat-j:down@2` is the second `qstat -j`, whatever other qstat runs came between.
  const key = createHash('sha256').update(spec).digest('hex').slice(0, 16);
  const runs = new Map(
    names
      .filter((n) => mine.some((f) => f.name === n))
      .map((n) => [n, nextNumber(dir, `faults-${n}-${key}`, 1)]),
  );
  return mine.find((f) => runs.get(f.name)! >= f.from && runs.get(f.name)! <= f.to)?.fault;
}

/** The first half of a text, cut inside a line when it has more than one character. */
export function truncated(text: string): string {
  const cut = Math.floor(text.length / 2);
  return text[cut - 1] === '\n' && cut > 1 ? text.slice(0, cut - 1) : text.slice(0, cut);
}
