import type { Answer, Program } from '../main.js';
import { slurmList } from '../ranges.js';
import { FakeUsage, listJobs, readAccounting, readState } from '../state.js';
import { accountingMode } from './cluster.js';

/**
 * FAKE `sacct -n -P -X -j IDS -o JobID,State,ExitCode` (the fields drover reads), when the fake cluster has
 * slurmdbd (DROVER_FAKE_SLURM_ACCOUNTING=sacct); otherwise it answers like the test cluster: "Slurm accounting
 * storage is disabled", exit 1. Ended elements one per line (`12_3|CANCELLED by 0|0:0`), running ones as
 * RUNNING, pending ones folded (`12_[4-9]|PENDING|0:0`).
 */

interface Row {
  JobID: string;
  State: string;
  ExitCode: string;
  JobName: string;
}

function run(args: string[], dir: string): Answer {
  if (accountingMode() !== 'sacct') {
    return { status: 1, stdout: '', stderr: 'Slurm accounting storage is disabled\n' };
  }
  let ids: string[] | undefined;
  let fields = ['JobID', 'JobName', 'State', 'ExitCode'];
  let parsable = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-n' || a === '--noheader' || a === '-X' || a === '--allocations') continue;
    else if (a === '-P' || a === '--parsable2') parsable = true;
    else if (a === '-S' || a === '--starttime') i++;
    else if (a === '-j' || a === '--jobs') ids = (args[++i] ?? '').split(',');
    else if (a === '-o' || a === '--format') fields = (args[++i] ?? '').split(',');
    else throw new FakeUsage(`FAKE: option '${a}' is not emulated`);
  }
  if (!parsable) throw new FakeUsage('FAKE: only -P output is emulated');
  const rows: Row[] = [];
  const ended = readAccounting(dir).filter((r) => r.scheduler === 'slurm');
  for (const job of listJobs(dir, 'slurm')) {
    if (ids && !ids.includes(String(job.id))) continue;
    const st = readState(dir, job.id)?.elements ?? [];
    for (const r of ended.filter((x) => x.job === job.id)) {
      const state = r.state === 'CANCELLED' ? `CANCELLED by ${process.getuid?.() ?? 0}` : r.state;
      rows.push({
        JobID: `${job.id}_${r.index}`,
        State: state,
        ExitCode: `${r.exitCode}:${r.signal}`,
        JobName: job.name,
      });
    }
    for (const e of st.filter((x) => x.state === 'running'))
      rows.push({ JobID: `${job.id}_${e.index}`, State: 'RUNNING', ExitCode: '0:0', JobName: job.name });
    const pending = st.filter((x) => x.state === 'pending').map((x) => x.index);
    if (pending.length > 0)
      rows.push({
        JobID: `${job.id}_[${slurmList(pending)}]`,
        State: 'PENDING',
        ExitCode: '0:0',
        JobName: job.name,
      });
  }
  for (const f of fields) {
    if (!['JobID', 'State', 'ExitCode', 'JobName'].includes(f))
      throw new FakeUsage(`FAKE: field ${f} is not emulated`);
  }
  const text = rows.map((r) => `${fields.map((f) => r[f as keyof Row]).join('|')}\n`).join('');
  return { status: 0, stdout: text, stderr: '' };
}

export const sacct: Program = {
  run,
  down: {
    status: 1,
    stdout: '',
    stderr: 'sacct: error: Problem talking to the database: Connection refused\n',
  },
};
