import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Answer, Program } from '../main.js';
import { parseRangeList } from '../ranges.js';
import { FakeUsage, nextJobId, userName } from '../state.js';
import { enqueue } from '../submit.js';
import {
  accountingMode,
  killWait,
  maxArraySize,
  NODE_CPUS,
  NODE_MEM_MB,
  PARTITIONS,
  secondsPerMinute,
} from './cluster.js';

/**
 * FAKE `sbatch`: the options drover and its pools use, checked as Slurm 22.05 checks them (messages copied from
 * the test cluster), then a job array in the fake queue. Options it does not emulate are refused, so a test
 * never passes on an option the fake silently ignored.
 */

/** Long option → takes a value. Short aliases map to these. */
const OPTIONS: Record<string, boolean> = {
  parsable: false,
  array: true,
  'job-name': true,
  output: true,
  error: true,
  chdir: true,
  'cpus-per-task': true,
  mem: true,
  time: true,
  partition: true,
  account: true,
  qos: true,
  gres: true,
  comment: true,
  signal: true,
  requeue: false,
  'no-requeue': false,
  'open-mode': true,
};
const SHORT: Record<string, string> = {
  a: 'array',
  J: 'job-name',
  o: 'output',
  e: 'error',
  D: 'chdir',
  c: 'cpus-per-task',
  t: 'time',
  p: 'partition',
  A: 'account',
  q: 'qos',
};
/** Real options the fake does not emulate: refused with a FAKE message. */
const NOT_EMULATED = new Set(['dependency', 'd', 'export', 'wrap', 'nodes', 'N', 'ntasks', 'n', 'exclusive']);

const refused = (...lines: string[]): Answer => ({
  status: 1,
  stdout: '',
  stderr: lines.map((l) => `sbatch: error: ${l}\n`).join(''),
});

/** Parse sbatch's command line into options and the script with its arguments. */
function parse(args: string[]): { opts: Map<string, string>; script?: string; scriptArgs: string[] } {
  const opts = new Map<string, string>();
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('-') || a === '-') break;
    let name: string;
    let value: string | undefined;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      value = eq < 0 ? undefined : a.slice(eq + 1);
    } else {
      name = SHORT[a[1]!] ?? a.slice(1);
      value = a.length > 2 ? a.slice(2) : undefined;
    }
    if (NOT_EMULATED.has(name)) throw new FakeUsage(`FAKE: option '${a}' is not emulated`, 1);
    if (!(name in OPTIONS)) {
      throw new FakeUsage(`unrecognized option '${a}'\nTry "sbatch --help" for more information`, 255);
    }
    if (OPTIONS[name] && value === undefined) {
      value = args[++i];
      if (value === undefined) throw new FakeUsage(`option '${a}' requires an argument`, 255);
    }
    opts.set(name, value ?? '');
  }
  return { opts, script: args[i], scriptArgs: args.slice(i + 1) };
}

/**
 * `--signal=B:SIG@T` as the fake emulates it: to the batch shell, T seconds (scaled as a minute of --time is)
 * before the limit; null if it is not a signal spec. Without `B:` (every step's processes) it is not emulated.
 */
function batchSignal(spec: string): { signal: NodeJS.Signals; beforeS: number } | null {
  const m = /^(?:([RB]+):)?(?:SIG)?([A-Z0-9]+)(?:@([0-9]+))?$/.exec(spec);
  if (!m) return null;
  if (!m[1]?.includes('B'))
    throw new FakeUsage(`FAKE: option '--signal=${spec}' without B: is not emulated`, 1);
  const signal = /^[0-9]+$/.test(m[2]!) ? undefined : (`SIG${m[2]}` as NodeJS.Signals);
  if (signal === undefined || !(signal in os.constants.signals))
    throw new FakeUsage(`FAKE: option '--signal=${spec}': only signal names are emulated`, 1);
  return { signal, beforeS: (Number(m[3] ?? 60) * secondsPerMinute()) / 60 };
}

/** Minutes of a Slurm time (`M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S`), rounded up; undefined if bad. */
export function timeMinutes(text: string): number | undefined {
  const m = /^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$/.exec(text);
  if (!m) return undefined;
  const [, d, a, b, c] = m;
  const n = [a, b, c].filter((x): x is string => x !== undefined).map(Number);
  let seconds: number;
  if (d !== undefined) seconds = Number(d) * 86400 + (n[0] ?? 0) * 3600 + (n[1] ?? 0) * 60 + (n[2] ?? 0);
  else if (n.length === 1) seconds = n[0]! * 60;
  else if (n.length === 2) seconds = n[0]! * 60 + n[1]!;
  else seconds = n[0]! * 3600 + n[1]! * 60 + n[2]!;
  return Math.max(1, Math.ceil(seconds / 60));
}

/** MB of a Slurm memory size (`500`, `500M`, `4G`, `1T`); undefined if bad. */
function memMb(text: string): number | undefined {
  const m = /^(\d+)([KMGT]?)$/i.exec(text);
  if (!m) return undefined;
  const f = { K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024, '': 1 }[m[2]!.toUpperCase()] ?? 1;
  return Number(m[1]) * f;
}

function submit(args: string[], dir: string): Answer {
  const { opts, script, scriptArgs } = parse(args);
  if (script === undefined) throw new FakeUsage('FAKE: reading the script from stdin is not emulated');
  const cwd = process.cwd();
  const scriptPath = path.resolve(cwd, script);
  let text: string;
  try {
    text = fs.readFileSync(scriptPath, 'utf8');
  } catch {
    return refused(`Unable to open file ${script}`);
  }
  if (!text.startsWith('#!')) {
    return refused(
      'This does not look like a batch script.  The first',
      'line must start with #! followed by the path to an interpreter.',
      'For instance: #!/bin/sh',
    );
  }
  const partition = opts.get('partition') ?? PARTITIONS.find((p) => p.isDefault)!.name;
  if (!PARTITIONS.some((p) => p.name === partition)) {
    return refused(
      `invalid partition specified: ${partition}`,
      'Batch job submission failed: Invalid partition name specified',
    );
  }
  const gres = opts.get('gres');
  if (gres !== undefined && /(^|,)gpu(:[^:,]+)?:[1-9]/.test(gres))
    return refused('Invalid generic resource (gres) specification');
  const mem = opts.get('mem');
  if (mem !== undefined) {
    const mb = memMb(mem);
    if (mb === undefined) return refused(`Invalid --mem specification`);
    if (mb > NODE_MEM_MB) {
      return refused(
        'Memory specification can not be satisfied',
        'Batch job submission failed: Requested node configuration is not available',
      );
    }
  }
  const spec = opts.get('array');
  if (spec === undefined) throw new FakeUsage('FAKE: jobs without --array are not emulated');
  const [list = '', throttleText] = spec.split('%');
  const indices = parseRangeList(list);
  const throttle = throttleText === undefined ? undefined : Number(throttleText);
  if (
    !indices ||
    indices.length === 0 ||
    indices[indices.length - 1]! >= maxArraySize() ||
    (throttle !== undefined && !(Number.isInteger(throttle) && throttle >= 0))
  ) {
    return refused('Batch job submission failed: Invalid job array specification');
  }
  const time = opts.get('time');
  const minutes = time === undefined ? undefined : timeMinutes(time);
  if (time !== undefined && minutes === undefined) return refused(`Invalid time limit specification`);
  const warn = opts.has('signal') ? batchSignal(opts.get('signal')!) : undefined;
  if (warn === null) return refused('Invalid --signal specification');
  const cpus = Number(opts.get('cpus-per-task') ?? 1);
  if (!Number.isInteger(cpus) || cpus < 1) return refused('Invalid numeric value for --cpus-per-task');
  const id = nextJobId(dir);
  const workdir = path.resolve(cwd, opts.get('chdir') ?? '.');
  enqueue(
    dir,
    {
      scheduler: 'slurm',
      id,
      name: opts.get('job-name') ?? path.basename(script),
      user: userName(),
      submitted: Date.now() / 1000,
      cwd: workdir,
      submitDir: cwd,
      args: scriptArgs,
      env: { ...(process.env as Record<string, string>) },
      indices,
      ...(throttle !== undefined && throttle > 0 ? { throttle } : {}),
      ...(minutes !== undefined ? { limitS: minutes * secondsPerMinute(), limitText: String(minutes) } : {}),
      stdout: opts.get('output') ?? 'slurm-%A_%a.out',
      ...(opts.has('error') ? { stderr: opts.get('error')! } : {}),
      partition,
      cpus,
      ...(warn ? { warn } : {}),
      notify: false,
      killWaitS: killWait(),
      startDelayMs: Number(process.env.DROVER_FAKE_START_DELAY_MS ?? 100),
      accounting: accountingMode(),
      // JobRequeue=1 (Slurm's default): elements may be run again unless --no-requeue.
      requeueable: !opts.has('no-requeue'),
      ...(cpus > NODE_CPUS ? { neverRuns: 'PartitionConfig' } : {}),
    },
    scriptPath,
  );
  return { status: 0, stdout: opts.has('parsable') ? `${id}\n` : `Submitted batch job ${id}\n`, stderr: '' };
}

export const sbatch: Program = {
  run: submit,
  down: {
    status: 1,
    stdout: '',
    stderr:
      'sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n',
  },
  refuse: refused(
    "Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)",
  ),
};
