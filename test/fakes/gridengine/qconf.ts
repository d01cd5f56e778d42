import type { Answer, Program } from '../main.js';
import { FakeUsage } from '../state.js';
import { maxArrayTasks, PARALLEL_ENVIRONMENTS, QMASTER_DOWN } from './cluster.js';

/** FAKE `qconf -sconf` (the global configuration's values a launcher may read) and `qconf -spl`. */
function run(args: string[]): Answer {
  if (args.join(' ') === '-spl')
    return { status: 0, stdout: `${PARALLEL_ENVIRONMENTS.join('\n')}\n`, stderr: '' };
  if (args.join(' ') !== '-sconf' && args.join(' ') !== '-sconf global')
    throw new FakeUsage(`FAKE: '${args.join(' ')}' is not emulated`);
  const settings: [string, string][] = [
    ['execd_spool_dir', '/var/spool/gridengine/execd'],
    ['login_shells', 'none'],
    ['min_uid', '0'],
    ['min_gid', '0'],
    ['max_aj_instances', '2000'],
    ['max_aj_tasks', String(maxArrayTasks())],
    ['max_u_jobs', '0'],
    ['max_jobs', '0'],
  ];
  const text = `#global:\n${settings.map(([k, v]) => `${k.padEnd(28)} ${v}`).join('\n')}\n`;
  return { status: 0, stdout: text, stderr: '' };
}

export const qconf: Program = { run, down: { status: 1, stdout: '', stderr: QMASTER_DOWN } };
