import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Answer, Program } from '../main.js';
import { parseRange } from '../ranges.js';
import { FakeUsage, hostName, nextJobId, userName } from '../state.js';
import { enqueue } from '../submit.js';
import {
  accountingDelayMs,
  COMPLEXES,
  maxArrayTasks,
  notifySeconds,
  PARALLEL_ENVIRONMENTS,
  parseTime,
  QMASTER_DOWN,
  QUEUE,
  SLOTS,
  TIME_COMPLEXES,
} from './cluster.js';

/**
 * FAKE `qsub`: the options drover and its pools use, checked as Son of Grid Engine 8.1.9 checks them (messages
 * copied from the test cluster: one `-t` range only, task ids from 1, max_aj_tasks, job names, resources,
 * parallel environments, queues), then an array job in the fake queue. Options it does not emulate are refused.
 */

const WITH_VALUE = new Set(['-N', '-S', '-wd', '-o', '-e', '-j', '-t', '-tc', '-l', '-q', '-A', '-b', '-r']);
const FLAGS = new Set(['-terse', '-notify', '-V', '-cwd']);
const NOT_EMULATED = new Set(['-hold_jid', '-sync', '-w', '-v', '-P', '-R', '-m', '-M', '-a', '-now', '-ar']);

const rejected = (why: string): Answer => ({
  status: 1,
  stdout: '',
  stderr: `Unable to run job: ${why}\nExiting.\n`,
});

interface Parsed {
  flags: Set<string>;
  values: Map<string, string[]>;
  pe?: { name: string; slots: string };
  script?: string;
  scriptArgs: string[];
}

function parse(args: string[]): Parsed {
  const p: Parsed = { flags: new Set(), values: new Map(), scriptArgs: [] };
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('-')) break;
    if (NOT_EMULATED.has(a)) throw new FakeUsage(`FAKE: option ${a} is not emulated`, 1);
    if (FLAGS.has(a)) p.flags.add(a);
    else if (a === '-pe') {
      p.pe = { name: args[i + 1] ?? '', slots: args[i + 2] ?? '' };
      i += 2;
    } else if (WITH_VALUE.has(a)) {
      const v = args[++i];
      if (v === undefined) throw new FakeUsage(`ERROR! ${a} option must have argument`, 7);
      p.values.set(a, [...(p.values.get(a) ?? []), v]);
    } else throw new FakeUsage(`invalid option argument "${a}"`, 2);
  }
  p.script = args[i];
  p.scriptArgs = args.slice(i + 1);
  return p;
}

const last = (p: Parsed, opt: string) => p.values.get(opt)?.at(-1);

/** The minimal environment of an element submitted without -V (what the test cluster's execd passes on). */
function minimalEnv(): Record<string, string> {
  return {
    HOME: os.homedir(),
    USER: userName(),
    LOGNAME: userName(),
    SHELL: '/bin/sh',
    LANG: process.env.LANG ?? 'C.UTF-8',
    PATH: '/usr/local/bin:/bin:/usr/bin',
  };
}

function submit(args: string[], dir: string): Answer {
  const p = parse(args);
  if (p.script === undefined) throw new FakeUsage('FAKE: reading the script from stdin is not emulated');
  const cwd = process.cwd();
  const script = path.resolve(cwd, p.script);
  if (!fs.existsSync(script)) {
    return {
      status: 14,
      stdout: '',
      stderr: `Unable to read script file because of error: error opening ${p.script}: No such file or directory\n`,
    };
  }
  if (last(p, '-b') === 'y') throw new FakeUsage('FAKE: -b y is not emulated');
  const rerun = last(p, '-r');
  if (rerun !== undefined && !/^(y|yes|n|no)$/i.test(rerun))
    throw new FakeUsage(`ERROR! -r option must have argument "y" or "n"`, 7);
  const t = p.values.get('-t') ?? [];
  if (t.length === 0) throw new FakeUsage('FAKE: jobs without -t are not emulated');
  const range = t.at(-1)!; // two -t flags: the last wins, as on the test cluster
  if (range.includes(',')) throw new FakeUsage('-t option only allows one range specification', 7);
  if (/^0(\D|$)/.test(range)) return rejected('job rejected: 0 is an invalid task id');
  const indices = parseRange(range);
  if (!indices) throw new FakeUsage(`ERROR! -t option has invalid argument "${range}"`, 7);
  const max = maxArrayTasks();
  if (indices.length > max)
    return rejected(`job rejected: you tried to submit a job with more than ${max} tasks`);
  const name = last(p, '-N') ?? path.basename(p.script);
  if (/\s/.test(name)) return rejected('Error reading answer list from qmaster');
  if (/^\d/.test(name))
    return rejected(`denied: "${name}" is not a valid object name (cannot start with a digit)`);
  if (name.includes(':')) return rejected("Colon (':') not allowed in objectname");
  let limitS: number | undefined;
  for (const list of p.values.get('-l') ?? []) {
    for (const item of list.split(',')) {
      const [res = '', value = ''] = item.split('=');
      if (!COMPLEXES.has(res)) return rejected(`unknown resource "${res}"`);
      if (TIME_COMPLEXES.has(res) && parseTime(value) === undefined)
        return rejected(`attribute "${res}" is not a time value`);
      if (res === 'h_rt') limitS = parseTime(value);
    }
  }
  if (p.pe && !PARALLEL_ENVIRONMENTS.includes(p.pe.name))
    return rejected(`job rejected: the requested parallel environment "${p.pe.name}" does not exist`);
  const slots = p.pe ? Number(p.pe.slots) : 1;
  if (p.pe && !(Number.isInteger(slots) && slots > 0))
    throw new FakeUsage(`FAKE: -pe slot ranges are not emulated ('${p.pe.slots}')`);
  const queue = last(p, '-q');
  if (queue !== undefined && queue !== QUEUE && queue !== `${QUEUE}@${hostName()}`)
    return rejected(`Job was rejected because job requests unknown queue "${queue}"`);
  const tc = last(p, '-tc');
  const throttle = tc === undefined ? undefined : Number(tc);
  const workdir = p.flags.has('-cwd') ? cwd : path.resolve(cwd, last(p, '-wd') ?? os.homedir());
  const merge = last(p, '-j') === 'y';
  const id = nextJobId(dir);
  const base = p.flags.has('-V') ? (process.env as Record<string, string>) : minimalEnv();
  const env = {
    ...base,
    SGE_O_HOME: process.env.HOME ?? os.homedir(),
    SGE_O_PATH: process.env.PATH ?? '',
    SGE_O_SHELL: process.env.SHELL ?? '/bin/sh',
    SGE_O_WORKDIR: cwd,
    SGE_O_HOST: hostName(),
  };
  enqueue(
    dir,
    {
      scheduler: 'gridengine',
      id,
      name,
      user: userName(),
      submitted: Date.now() / 1000,
      cwd: workdir,
      submitDir: cwd,
      args: p.scriptArgs,
      shell: last(p, '-S') ?? '/bin/sh',
      env,
      indices,
      ...(throttle !== undefined && throttle > 0 ? { throttle } : {}),
      ...(limitS !== undefined ? { limitS } : {}),
      stdout: last(p, '-o') ?? '',
      ...(merge ? {} : { stderr: last(p, '-e') ?? '' }),
      partition: QUEUE,
      cpus: slots,
      ...(p.pe ? { pe: p.pe.name } : {}),
      notify: p.flags.has('-notify'),
      requeueable: rerun !== undefined && /^y/i.test(rerun),
      killWaitS: notifySeconds(),
      accountingDelayMs: accountingDelayMs(),
      startDelayMs: Number(process.env.DROVER_FAKE_START_DELAY_MS ?? 100),
      accounting: 'none',
      ...(slots > SLOTS ? { neverRuns: 'cannot run in PE "smp" because it only offers 32 slots' } : {}),
    },
    script,
  );
  const [first, lastIndex] = [indices[0]!, indices[indices.length - 1]!];
  const step = /:(\d+)$/.exec(range)?.[1] ?? '1';
  const handle = `${id}.${first}-${lastIndex}:${step}`;
  const out = p.flags.has('-terse')
    ? `${handle}\n`
    : `Your job-array ${handle} ("${name}") has been submitted\n`;
  return { status: 0, stdout: out, stderr: '' };
}

export const qsub: Program = {
  run: submit,
  down: {
    status: 1,
    stdout: '',
    stderr: `${QMASTER_DOWN.replace('error: unable', 'Unable to run job: unable')}Exiting.\n`,
  },
  refuse: rejected('job rejected: Only 10 jobs are allowed per user (current job count: 10)'),
};
