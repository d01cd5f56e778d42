import path from 'node:path';
import { requestCancel } from '../cancel.js';
import type { Answer, Program } from '../main.js';
import { type FakeJob, FakeUsage, hostName, jobDir, listJobs, readJson, readState } from '../state.js';
import {
  accountingMode,
  CLUSTER_NAME,
  controllerDown,
  jobcompFile,
  killWait,
  maxArraySize,
  NODE_CPUS,
  NODE_MEM_MB,
  PARTITIONS,
  slurmTime,
} from './cluster.js';

/** FAKE `scontrol show config` and `sinfo`: the fake cluster's settings and its one node. */

function showConfig(dir: string): string {
  const mode = accountingMode();
  const host = hostName();
  const settings: [string, string][] = [
    ['AccountingStorageType', mode === 'sacct' ? 'accounting_storage/slurmdbd' : 'accounting_storage/none'],
    ['ClusterName', CLUSTER_NAME],
    ['JobCompLoc', mode === 'jobcomp' ? jobcompFile(dir) : '(null)'],
    ['JobCompType', mode === 'jobcomp' ? 'jobcomp/filetxt' : 'jobcomp/none'],
    ['KillWait', `${killWait()} sec`],
    ['MaxArraySize', String(maxArraySize())],
    ['MaxJobCount', '200000'],
    ['MinJobAge', '3600 sec'],
    ['ProctrackType', 'proctrack/linuxproc'],
    ['SchedulerParameters', 'batch_sched_delay=0,sched_min_interval=0'],
    ['SchedulerType', 'sched/backfill'],
    ['SelectType', 'select/cons_tres'],
    ['SlurmctldHost[0]', `${host}(127.0.0.1)`],
  ];
  const lines = settings.map(([k, v]) => `${k.padEnd(23)} = ${v}`);
  return `Configuration data as of ${slurmTime(Date.now() / 1000)}\n${lines.join('\n')}\n\nSlurmctld(primary) at ${host} is UP\n`;
}

function scontrolRun(args: string[], dir: string): Answer {
  if (args.join(' ') === 'show config') return { status: 0, stdout: showConfig(dir), stderr: '' };
  if (args[0] === 'requeue' && args.length === 2) return requeue(args[1]!, dir);
  // `update JobId=ID StartTime=now`: a requeued element is eligible at once (the fake never delays it).
  if (args[0] === 'update' && args.length === 3 && /^StartTime=now$/i.test(args[2]!)) {
    return { status: 0, stdout: '', stderr: '' };
  }
  throw new FakeUsage(
    `FAKE: '${args.join(' ')}' is not emulated (only show config, requeue ID_INDEX, update JobId=ID StartTime=now)`,
  );
}

/**
 * `scontrol requeue ID_INDEX`: a running element is stopped as scancel stops it (SIGTERM, SIGKILL after
 * KillWait; slurmstepd's line says DUE TO JOB REQUEUE) and pends again, to run with SLURM_RESTART_COUNT. An
 * element submitted with --no-requeue is refused as Slurm 22.05 refuses it.
 */
function requeue(arg: string, dir: string): Answer {
  const m = /^(\d+)(?:_(\d+))?$/.exec(arg);
  if (!m)
    throw new FakeUsage(
      `FAKE: scontrol requeue ${arg}: only ID_INDEX and an element's own job id are emulated`,
    );
  // ID_INDEX, or the element's own job id (SLURM_JOB_ID, as an element requeues itself).
  const own =
    m[2] === undefined
      ? listJobs(dir, 'slurm').flatMap((j) =>
          (readState(dir, j.id)?.elements ?? [])
            .filter((e) => e.jobId === Number(m[1]))
            .map((e) => ({ id: j.id, e })),
        )[0]
      : undefined;
  const id = own?.id ?? Number(m[1]);
  const job = readJson<FakeJob>(path.join(jobDir(dir, id), 'job.json'));
  const el = own?.e ?? readState(dir, id)?.elements.find((e) => e.index === Number(m[2]));
  if (!job || !el || el.state === 'done' || el.state === 'removed')
    return { status: 1, stdout: '', stderr: `${arg}: Invalid job id specified\n` };
  if (!job.requeueable)
    return { status: 1, stdout: '', stderr: `${arg}: Requested operation is presently disabled\n` };
  requestCancel(dir, id, [el.index], true);
  return { status: 0, stdout: '', stderr: '' };
}

export const scontrol: Program = {
  run: scontrolRun,
  down: {
    status: 1,
    stdout: '',
    stderr: 'slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure)\n',
  },
};

function nodeState(dir: string): string {
  const busy = listJobs(dir, 'slurm').some((j) =>
    readState(dir, j.id)?.elements.some((e) => e.state === 'running'),
  );
  return busy ? 'mixed' : 'idle';
}

function sinfoRun(args: string[], dir: string): Answer {
  let header = true;
  let fmt = '%P %a %l %D %T %N';
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-h' || a === '--noheader') header = false;
    else if (a === '-N' || a === '--Node') continue;
    else if (a === '-o' || a === '--format') fmt = args[++i] ?? '';
    else throw new FakeUsage(`FAKE: option '${a}' is not emulated`);
  }
  const host = hostName();
  const state = nodeState(dir);
  const field = (c: string, p: (typeof PARTITIONS)[number]) => {
    switch (c) {
      case 'P':
        return p.name + (p.isDefault ? '*' : '');
      case 'a':
        return 'up';
      case 'c':
        return String(NODE_CPUS);
      case 'm':
        return String(NODE_MEM_MB);
      case 'G':
        return '(null)';
      case 'l':
        return 'infinite';
      case 'D':
        return '1';
      case 'T':
        return state;
      case 'N':
        return host;
      default:
        throw new FakeUsage(`FAKE: format code %${c} is not emulated`);
    }
  };
  const line = (p: (typeof PARTITIONS)[number]) =>
    fmt.replace(/%\.?\d*([a-zA-Z])/g, (_, c: string) => field(c, p));
  const body = PARTITIONS.map((p) => `${line(p)}\n`).join('');
  const head = header ? `${fmt.replace(/%\.?\d*([a-zA-Z])/g, (_, c: string) => c.toUpperCase())}\n` : '';
  return { status: 0, stdout: head + body, stderr: '' };
}

export const sinfo: Program = {
  run: sinfoRun,
  down: { status: 1, stdout: '', stderr: controllerDown('slurm_load_partitions') },
};
