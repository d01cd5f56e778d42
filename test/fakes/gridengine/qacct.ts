import os from 'node:os';
import type { Answer, Program } from '../main.js';
import { parseRange } from '../ranges.js';
import { type AccountingRecord, FakeUsage, hostName, readAccounting } from '../state.js';
import { QUEUE } from './cluster.js';

/**
 * FAKE `qacct -j JOB [-t RANGE]`: the accounting records of ended tasks, in the test cluster's layout (one
 * block per task after a line of `=`), each visible a moment after the task left qstat. No record:
 * `error: job id N not found` (with -t: `error: Job-array tasks N.a-b:1 not found`), exit 1.
 */

function ctime(unix: number): string {
  const d = new Date(unix * 1000);
  const day = d.toLocaleString('en-US', { weekday: 'short' });
  const mon = d.toLocaleString('en-US', { month: 'short' });
  const p = (n: number) => String(n).padStart(2, '0');
  return `${day} ${mon} ${String(d.getDate()).padStart(2)} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} ${d.getFullYear()}`;
}

function signalName(status: number): string {
  if (status <= 128) return '';
  const name = Object.entries(os.constants.signals).find(([, n]) => n === status - 128)?.[0];
  return name === 'SIGKILL' ? '(Killed)' : name === 'SIGTERM' ? '(Terminated)' : name ? `(${name})` : '';
}

function block(r: AccountingRecord): string {
  const row = (k: string, v: string) => `${k.padEnd(12)} ${v}`;
  const wide = (k: string, v: string) => row(k, v.padEnd(20));
  const wall = r.started !== undefined ? Math.round(r.ended - r.started) : 0;
  return [
    '==============================================================',
    wide('qname', QUEUE),
    wide('hostname', hostName()),
    wide('group', r.user),
    wide('owner', r.user),
    wide('project', 'NONE'),
    wide('department', 'defaultdepartment'),
    wide('jobname', r.name),
    wide('jobnumber', String(r.job)),
    wide('taskid', String(r.index)),
    wide('account', 'sge'),
    wide('priority', '0'),
    row('qsub_time', ctime(r.submitted)),
    row('start_time', r.started !== undefined ? ctime(r.started) : '-/-'),
    row('end_time', r.started !== undefined ? ctime(r.ended) : '-/-'),
    wide('granted_pe', 'NONE'),
    wide('slots', String(r.slots)),
    row('failed', r.failed === 0 ? '0    ' : `${String(r.failed).padEnd(3)} : ${r.failedText}`),
    row(
      'exit_status',
      signalName(r.exitStatus)
        ? `${String(r.exitStatus).padEnd(20)} ${signalName(r.exitStatus)}`
        : String(r.exitStatus).padEnd(20),
    ),
    row('ru_wallclock', `${wall}s`),
    row('cpu', '0.010s'),
    wide('arid', 'undefined'),
    row('category', r.limitText ?? ''),
  ].join('\n');
}

function run(args: string[], dir: string): Answer {
  let job: string | undefined;
  let range: number[] | undefined;
  let rangeText = '';
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-j') job = args[++i];
    else if (a === '-t') {
      rangeText = args[++i] ?? '';
      range = parseRange(rangeText.replace(/:\d+$/, ''));
    } else throw new FakeUsage(`FAKE: option ${a} is not emulated`);
  }
  if (job === undefined) throw new FakeUsage('FAKE: only -j JOB is emulated');
  const now = Date.now() / 1000;
  const records = readAccounting(dir)
    .filter((r) => r.scheduler === 'gridengine' && String(r.job) === job && (r.visibleAt ?? r.ended) <= now)
    .filter((r) => range === undefined || range.includes(r.index))
    .sort((a, b) => a.ended - b.ended);
  if (records.length === 0) {
    const what = range
      ? `Job-array tasks ${job}.${range[0]}-${range[range.length - 1]}:1 not found`
      : `job id ${job} not found`;
    return { status: 1, stdout: '', stderr: `error: ${what}\n` };
  }
  return { status: 0, stdout: `${records.map(block).join('\n')}\n`, stderr: '' };
}

export const qacct: Program = {
  run,
  down: {
    status: 1,
    stdout: '',
    stderr: 'error: can\'t open accounting file "/var/lib/gridengine/default/common/accounting"\n',
  },
};
