import fs from 'node:fs';
import path from 'node:path';
import { type Fault, faultFor, truncated } from './faults.js';
import { FakeUsage, stateDir } from './state.js';

/**
 * Entry of the FAKE Slurm and Grid Engine commands (test/fakes/bin/* ask the state folder's server, serve.ts,
 * or, without one, run `node main.js PROG ARGS...`). Each program answers from the state folder, its run is
 * logged in `calls.jsonl`, and the faults of DROVER_FAKE_FAULTS are applied. `main.js controller DIR ID` is the
 * process that runs one job's elements; `main.js serve` the server (of the state folders named on its stdin).
 */

/** What a fake program answers. */
export interface Answer {
  status: number;
  stdout: string;
  stderr: string;
}

/** How a program behaves under the faults it knows; `run` is its normal behaviour. */
export interface Program {
  run(args: string[], dir: string): Answer;
  /** The answer when the scheduler's controller cannot be reached. */
  down: Answer;
  /** The answer of a refused request (submission programs only). */
  refuse?: Answer;
  /** A whole answer without its per-element details (programs that print them only). */
  bare?: (a: Answer) => Answer;
}

/** Each fake program by name, loaded on first use. */
const LOADERS: Record<string, () => Promise<Program>> = {
  sbatch: async () => (await import('./slurm/sbatch.js')).sbatch,
  squeue: async () => (await import('./slurm/squeue.js')).squeue,
  scancel: async () => (await import('./slurm/scancel.js')).scancel,
  scontrol: async () => (await import('./slurm/config.js')).scontrol,
  sinfo: async () => (await import('./slurm/config.js')).sinfo,
  sacct: async () => (await import('./slurm/sacct.js')).sacct,
  qsub: async () => (await import('./gridengine/qsub.js')).qsub,
  qstat: async () => (await import('./gridengine/qstat.js')).qstat,
  qdel: async () => (await import('./gridengine/qdel.js')).qdel,
  qacct: async () => (await import('./gridengine/qacct.js')).qacct,
  qconf: async () => (await import('./gridengine/qconf.js')).qconf,
  qmod: async () => (await import('./gridengine/qmod.js')).qmod,
};

/** Every fake program's name. */
export const PROGRAMS = Object.keys(LOADERS);

/** The fake program named `prog`, or undefined. */
export async function load(prog: string): Promise<Program | undefined> {
  return Object.hasOwn(LOADERS, prog) ? LOADERS[prog]!() : undefined;
}

function answerWith(program: Program, fault: Fault | undefined, args: string[], dir: string): Answer {
  if (fault === 'down') return program.down;
  if (fault === 'refuse' && program.refuse) return program.refuse;
  const a = program.run(args, dir);
  if (fault === 'bare' && program.bare) return program.bare(a);
  return fault === 'truncate' ? { ...a, stdout: truncated(a.stdout) } : a;
}

/**
 * One run of fake program `prog` in this process's environment and folder: its answer, logged in `calls.jsonl`
 * with the faults of DROVER_FAKE_FAULTS applied. Synchronous, so the server (serve.ts) answers one call at a time.
 */
export function answer(program: Program, prog: string, args: string[]): Answer {
  let a: Answer;
  let dir: string | undefined;
  try {
    dir = stateDir();
    a = answerWith(program, faultFor(prog, args, dir), args, dir);
  } catch (err) {
    if (!(err instanceof FakeUsage)) throw err;
    a = { status: err.status, stdout: '', stderr: `${prog}: ${err.message}\n` };
  }
  if (dir !== undefined) {
    const call = { prog, argv: args, cwd: process.cwd(), at: Date.now() / 1000, ...a };
    fs.appendFileSync(path.join(dir, 'calls.jsonl'), `${JSON.stringify(call)}\n`);
  }
  return a;
}

async function main(argv: string[]): Promise<number> {
  const [prog = '', ...args] = argv;
  if (prog === 'controller') {
    const { runController } = await import('./controller.js');
    await runController(args[0]!, Number(args[1]));
    return 0;
  }
  if (prog === 'serve') {
    const { serve } = await import('./serve.js');
    await serve();
    return 0;
  }
  const program = await load(prog);
  if (!program) {
    process.stderr.write(`FAKE scheduler: no fake program '${prog}'\n`);
    return 2;
  }
  const a = answer(program, prog, args);
  process.stdout.write(a.stdout);
  process.stderr.write(a.stderr);
  return a.status;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(
      `FAKE scheduler: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = 70;
  },
);
