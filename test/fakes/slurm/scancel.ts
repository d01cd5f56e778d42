import { requestCancel } from '../cancel.js';
import type { Answer, Program } from '../main.js';
import { parseRangeList } from '../ranges.js';
import { FakeUsage } from '../state.js';

/**
 * FAKE `scancel ID...` (`12`, `12_3`, `12_[1-3,5]`): pending elements vanish at once and leave no trace (no
 * jobcomp line), running ones get slurmstepd's CANCELLED line, SIGTERM, then SIGKILL after KillWait. Unknown
 * ids are ignored silently and scancel exits 0, as Slurm's does.
 */
function run(args: string[], dir: string): Answer {
  const byJob = new Map<number, number[] | 'all'>();
  for (const a of args) {
    if (a.startsWith('-')) throw new FakeUsage(`FAKE: option '${a}' is not emulated`);
    const m = /^(\d+)(?:_(?:(\d+)|\[([^\]]+)\]))?$/.exec(a);
    if (!m) {
      return { status: 1, stdout: '', stderr: `scancel: error: Invalid job id ${a}\n` };
    }
    const id = Number(m[1]);
    const some = m[2] !== undefined ? [Number(m[2])] : m[3] !== undefined ? parseRangeList(m[3]) : 'all';
    if (some === undefined) return { status: 1, stdout: '', stderr: `scancel: error: Invalid job id ${a}\n` };
    const had = byJob.get(id);
    byJob.set(id, had === 'all' || some === 'all' ? 'all' : [...(had ?? []), ...some]);
  }
  for (const [id, indices] of byJob) requestCancel(dir, id, indices);
  return { status: 0, stdout: '', stderr: '' };
}

export const scancel: Program = {
  run,
  down: {
    status: 1,
    stdout: '',
    stderr:
      'scancel: error: Kill job error on job id 0: Unable to contact slurm controller (connect failure)\n',
  },
};
