import { requestCancel } from '../cancel.js';
import type { Answer, Program } from '../main.js';
import { parseRange } from '../ranges.js';
import { FakeUsage, readState, userName } from '../state.js';
import { QMASTER_DOWN } from './cluster.js';

/**
 * FAKE `qdel JOB... [-t first-last:step]`: pending and Eqw tasks are gone at once, running ones get SIGUSR2
 * (-notify) then SIGKILL after the queue's notify time, or SIGKILL at once. A job Grid Engine no longer has is
 * `denied: job "N" does not exist`, exit 1 (on stdout, as the test cluster prints it).
 */
function run(args: string[], dir: string): Answer {
  const jobs: string[] = [];
  let range: number[] | 'all' = 'all';
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-t') {
      const r = parseRange(args[++i] ?? '');
      if (!r) throw new FakeUsage(`ERROR! -t option has invalid argument "${args[i]}"`, 1);
      range = r;
    } else if (a.startsWith('-')) throw new FakeUsage(`FAKE: option ${a} is not emulated`);
    else jobs.push(a);
  }
  let out = '';
  let status = 0;
  const user = userName();
  for (const job of jobs) {
    const id = Number(job);
    const elements = (Number.isInteger(id) ? readState(dir, id)?.elements : undefined) ?? [];
    const wanted = elements.filter(
      (e) =>
        (range === 'all' || range.includes(e.index)) &&
        (e.state === 'pending' || e.state === 'running' || e.state === 'error'),
    );
    if (!elements.some((e) => e.state === 'pending' || e.state === 'running' || e.state === 'error')) {
      out += `denied: job "${job}" does not exist\n`;
      status = 1;
      continue;
    }
    requestCancel(dir, id, range);
    for (const e of wanted) {
      out +=
        e.state === 'running'
          ? `${user} has registered the job-array task ${id}.${e.index} for deletion\n`
          : `${user} has deleted job-array task ${id}.${e.index}\n`;
    }
  }
  return { status, stdout: out, stderr: '' };
}

export const qdel: Program = { run, down: { status: 1, stdout: '', stderr: QMASTER_DOWN } };
