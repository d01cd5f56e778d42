import type { Answer, Program } from '../main.js';
import { gridEngineList } from '../ranges.js';
import { type ElementState, type FakeJob, FakeUsage, hostName, listJobs, readState } from '../state.js';
import { QMASTER_DOWN, QUEUE, SLOTS } from './cluster.js';

/**
 * FAKE `qstat`: `-xml` as Son of Grid Engine 8.1.9 prints it (running tasks one by one under <queue_info>,
 * pending and Eqw tasks as ranges under <job_info>), `-j JOB` with the per-task `error reason` lines of Eqw
 * tasks, `-f` and the plain listing. A job is known while it has tasks pending, running or in Eqw; Grid Engine
 * forgets a finished job at once.
 */

interface Live {
  job: FakeJob;
  elements: ElementState[];
}

function live(dir: string): Live[] {
  return listJobs(dir, 'gridengine')
    .map((job) => ({
      job,
      elements: (readState(dir, job.id)?.elements ?? []).filter(
        (e) => e.state === 'pending' || e.state === 'running' || e.state === 'error',
      ),
    }))
    .filter((l) => l.elements.length > 0);
}

function isoTime(unix: number): string {
  const d = new Date(unix * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

function usTime(unix: number): string {
  const [date = '', time = ''] = isoTime(unix).split('T');
  const [y, m, d] = date.split('-');
  return `${m}/${d}/${y} ${time}`;
}

function entry(
  kind: 'running' | 'pending',
  job: FakeJob,
  state: string,
  time: string,
  queue: string,
  tasks: string,
): string {
  const timeTag = kind === 'running' ? 'JAT_start_time' : 'JB_submission_time';
  return [
    `    <job_list state="${kind}">`,
    `      <JB_job_number>${job.id}</JB_job_number>`,
    `      <JAT_prio>${kind === 'running' ? '0.50000' : '0.00000'}</JAT_prio>`,
    `      <JB_name>${job.name}</JB_name>`,
    `      <JB_owner>${job.user}</JB_owner>`,
    `      <state>${state}</state>`,
    `      <${timeTag}>${time}</${timeTag}>`,
    `      <queue_name>${queue}</queue_name>`,
    `      <slots>${job.cpus}</slots>`,
    `      <tasks>${tasks}</tasks>`,
    '    </job_list>',
  ].join('\n');
}

/**
 * A running element's state: `Rr` once rescheduled (qmod -rj: while its stopped run ends, and when it runs
 * again), `dr` while qdel stops it, else `r`.
 */
function runningState(e: ElementState): string {
  if (e.requeueing || e.restarts) return 'Rr';
  return e.stopping === 'cancel' ? 'dr' : 'r';
}

/** The pending states qstat lists, each with its elements: `Rq` for an element rescheduled to run again. */
const PENDING: readonly [string, (e: ElementState) => boolean][] = [
  ['qw', (e) => e.state === 'pending' && !e.restarts],
  ['Rq', (e) => e.state === 'pending' && !!e.restarts],
  ['Eqw', (e) => e.state === 'error'],
];

function xml(dir: string): string {
  const host = hostName();
  const running: string[] = [];
  const pending: string[] = [];
  for (const { job, elements } of live(dir)) {
    for (const e of elements.filter((x) => x.state === 'running'))
      running.push(
        entry('running', job, runningState(e), isoTime(e.started!), `${QUEUE}@${host}`, String(e.index)),
      );
    for (const [state, has] of PENDING) {
      const ids = elements.filter(has).map((x) => x.index);
      if (ids.length > 0)
        pending.push(entry('pending', job, state, isoTime(job.submitted), '', gridEngineList(ids)));
    }
  }
  const section = (tag: string, items: string[]) =>
    `  <${tag}>\n${items.map((i) => `${i}\n`).join('')}  </${tag}>\n`;
  return (
    "<?xml version='1.0'?>\n" +
    '<job_info  xmlns:xsd="http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/qstat.xsd">\n' +
    section('queue_info', running) +
    section('job_info', pending) +
    '</job_info>\n'
  );
}

function jobDetails(dir: string, id: string): Answer {
  const l = live(dir).find((x) => String(x.job.id) === id);
  if (!l) return { status: 1, stdout: '', stderr: `Following jobs do not exist: \n${id}\n` };
  const { job, elements } = l;
  const pad = (k: string) => `${k}:`.padEnd(28);
  const lines = [
    '==============================================================',
    `${pad('job_number')}${job.id}`,
    `${pad('submission_time')}${usTime(job.submitted)}`,
    `${pad('owner')}${job.user}`,
    `${pad('cwd')}${job.cwd}`,
    `${pad('job_name')}${job.name}`,
    `${pad('job-array tasks')}${job.indices[0]}-${job.indices[job.indices.length - 1]}:1`,
  ];
  for (const e of elements.filter((x) => x.state === 'error')) {
    lines.push(
      `error reason ${String(e.index).padStart(9)}:      ${usTime(e.started ?? job.submitted)} [${process.getuid?.() ?? 0}:${process.pid}]: error: ${e.error}`,
    );
  }
  if (elements.some((x) => x.state === 'error')) lines.push(`${pad('scheduling info')}Job is in error state`);
  return { status: 0, stdout: `${lines.join('\n')}\n`, stderr: '' };
}

function listing(dir: string, full: boolean): string {
  const host = hostName();
  const rows: string[] = [];
  let used = 0;
  for (const { job, elements } of live(dir)) {
    for (const e of elements.filter((x) => x.state === 'running')) {
      used += job.cpus;
      rows.push(
        `${String(job.id).padStart(7)} 0.50000 ${job.name.slice(0, 10).padEnd(10)} ${job.user.padEnd(12)} ${runningState(e).padEnd(5)} ${usTime(e.started!)} ${`${QUEUE}@${host}`.padEnd(30)} ${String(job.cpus).padStart(5)} ${e.index}`,
      );
    }
    for (const [state, has] of PENDING) {
      const ids = elements.filter(has).map((x) => x.index);
      if (ids.length > 0)
        rows.push(
          `${String(job.id).padStart(7)} 0.00000 ${job.name.slice(0, 10).padEnd(10)} ${job.user.padEnd(12)} ${state.padEnd(5)} ${usTime(job.submitted)} ${''.padEnd(30)} ${String(job.cpus).padStart(5)} ${gridEngineList(ids)}`,
        );
    }
  }
  if (full) {
    const queue = `${`${QUEUE}@${host}`.padEnd(30)} BIP   ${`0/${used}/${SLOTS}`.padEnd(15)}0.50     lx-amd64      `;
    return `queuename                      qtype resv/used/tot. load_avg arch          states\n${'-'.repeat(81)}\n${queue}\n${rows.map((r) => `${r}\n`).join('')}`;
  }
  if (rows.length === 0) return '';
  return `job-ID  prior   name       user         state submit/start at     queue                          slots ja-task-ID \n${'-'.repeat(113)}\n${rows.map((r) => `${r}\n`).join('')}`;
}

function run(args: string[], dir: string): Answer {
  let full = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-xml') return { status: 0, stdout: xml(dir), stderr: '' };
    if (a === '-j') return jobDetails(dir, args[i + 1] ?? '');
    if (a === '-f') full = true;
    else if (a === '-u')
      i++; // one user's jobs: the fake has one user
    else throw new FakeUsage(`FAKE: option ${a} is not emulated`);
  }
  return { status: 0, stdout: listing(dir, full), stderr: '' };
}

/** `qstat -j` without its `error reason` lines (the other answers have no per-element details to leave out). */
function bare(a: Answer): Answer {
  return { ...a, stdout: a.stdout.replace(/^error reason.*\n/gm, '') };
}

export const qstat: Program = { run, down: { status: 1, stdout: '', stderr: QMASTER_DOWN }, bare };
