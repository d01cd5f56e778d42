import { DroverError, usageError } from '../../errors.js';
import { formatBlocks } from '../../tasklist/tasklist.js';
import { listItems } from '../../util/list-items.js';
import { quoted } from '../../util/quote.js';
import { formatSize } from '../../util/size.js';
import type { LaunchRequest } from '../backend.js';
import type { Submission } from '../cluster/plan.js';
import { lastErrorLine, type SlurmRun } from './commands.js';

/** --after: job ids (optionally array elements) separated by commas or colons. */
const AFTER = /^[0-9]+(_[0-9]+)?([,:][0-9]+(_[0-9]+)?)*$/;

/** Refuse requests sbatch would misread, before anything is written or submitted. */
export function checkSlurmRequest(req: LaunchRequest): void {
  if (req.after !== undefined && !AFTER.test(listItems(req.after).join(','))) {
    throw usageError(`--after ${quoted(req.after)} is not a Slurm job id: give e.g. 1234 or 1234,1240`);
  }
  if (req.maxTasksPerNode !== undefined && req.tasksPerNode <= 1) {
    throw usageError(
      '--max-tasks-per-node needs --tasks-per-node N (N > 1): it sets the slots of each packed element',
    );
  }
}

/** The largest sig_time of `sbatch --signal` (a 16-bit field). */
const SLURM_MAX_SIGNAL_TIME = 65_535;

/** A time limit in seconds as sbatch --time minutes (Slurm's unit; rounded up, at least 1). */
export function slurmMinutes(seconds: number): string {
  return String(Math.max(1, Math.ceil(seconds / 60)));
}

/** The options every submission of a launch shares: name, output file, resources and extra arguments. */
export function sbatchCommonArgs(req: LaunchRequest, jobname: string, outPattern: string): string[] {
  const args = [`--job-name=${jobname}`, `--output=${outPattern}`];
  if (req.cpus !== undefined) args.push(`--cpus-per-task=${req.cpus}`);
  if (req.gpus !== undefined && req.gpus > 0) args.push(`--gres=gpu:${req.gpus}`);
  if (req.memMb !== undefined) args.push(`--mem=${formatSize(req.memMb, 'T')}`);
  if (req.duration !== undefined) args.push(`--time=${slurmMinutes(req.duration)}`);
  // The batch shell (B:) gets it, and its wrapper relays it to the runner (cluster/wrapper.ts); the runner
  // times the warning itself too, so a time beyond Slurm's 65535 s is left to it alone.
  if (req.signal !== undefined && req.duration !== undefined && req.signal.seconds <= SLURM_MAX_SIGNAL_TIME)
    args.push(`--signal=B:${req.signal.signal.slice(3)}@${req.signal.seconds}`);
  if (req.partition !== undefined) args.push(`--partition=${req.partition}`);
  if (req.account !== undefined) args.push(`--account=${req.account}`);
  if (req.qos !== undefined) args.push(`--qos=${req.qos}`);
  if (req.after !== undefined) args.push(`--dependency=afterok:${listItems(req.after).join(':')}`);
  return args;
}

/**
 * The full argv of one submission: `sbatch --parsable --array=<blocks>[%N] <common> <extra> <wrapper> <offset>`.
 * The arguments after `--` come last before the script, so they can refine drover's options.
 */
export function sbatchArgs(
  sub: Submission,
  common: readonly string[],
  req: Pick<LaunchRequest, 'maxTasks' | 'extraArgs' | 'requeue'>,
  wrapper: string,
): string[] {
  const throttle = req.maxTasks !== undefined ? `%${req.maxTasks}` : '';
  return [
    '--parsable',
    `--array=${formatBlocks(sub.blocks)}${throttle}`,
    ...common,
    // A preempted or requeued element runs again only for --requeue, whose runner goes on from its records (an
    // element run again otherwise would run its tasks again under the same attempt numbers); its output file
    // keeps what each run printed.
    ...(req.requeue ? ['--requeue', '--open-mode=append'] : ['--no-requeue']),
    ...req.extraArgs,
    wrapper,
    String(sub.offset),
  ];
}

/** The job id in `sbatch --parsable` output (`123` or `123;cluster`, one whole line); undefined if it is not one. */
export function parseJobId(stdout: string): string | undefined {
  const m = /^([0-9]+)(;\S+)?\n$/.exec(stdout);
  return m?.[1];
}

/** Every error line of sbatch's stderr without its prefixes, first to last. */
function errorLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .map((l) => lastErrorLine(l))
    .filter((l) => l !== '');
}

/** What to do about a refusal, by its message. */
const HINTS: [RegExp, string][] = [
  [/partition/i, 'check --partition or the slurm partition in drover config (sinfo lists the partitions)'],
  [/gres|generic resource/i, 'check --gpus: sinfo -o "%P %G" shows the GPUs (GRES) of each partition'],
  [/memory/i, 'lower --mem: sinfo -o "%P %m" shows the memory of the nodes (MB)'],
  [/account/i, 'check --account or the slurm account in drover config (sacctmgr show assoc user=$USER)'],
  [/qos/i, 'check --qos or the slurm qos in drover config'],
  [/time limit/i, 'lower --duration: sinfo -o "%P %l" shows the time limit of each partition'],
  [/dependency/i, 'check --after: the job must exist'],
  [/node configuration|not available/i, 'ask for fewer CPUs, GPUs or memory (sinfo -o "%P %c %m %G")'],
  [/unrecognized option|invalid option|requires an argument/i, 'check the arguments after --'],
];

/**
 * sbatch refused a submission (`what`: the launch, or a pool's workers): one line naming Slurm's reason and what to do. A request the cluster refuses
 * (bad partition, resources, options) is a usage error; a controller that cannot be reached is a backend error.
 */
export function sbatchRefusal(r: SlurmRun, what = 'the launch'): DroverError {
  const why = errorLines(r.stderr).join('; ') || `exit status ${r.status}`;
  const unreachable =
    /unable to contact|connection refused|socket timed out|temporarily unable|communication/i;
  if (unreachable.test(r.stderr)) {
    return new DroverError('backend', `sbatch could not reach the Slurm controller: ${why}; try again later`);
  }
  const hint = HINTS.find(([re]) => re.test(why) || re.test(r.stderr))?.[1];
  return usageError(`Slurm refused ${what}: ${why}${hint ? `: ${hint}` : ''}`);
}
