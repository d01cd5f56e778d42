import { usageError } from '../../errors.js';
import { listItems } from '../../util/list-items.js';
import { formatSize } from '../../util/size.js';
import type { LaunchRequest } from '../backend.js';

/**
 * Pure translation of a launch request into qsub options. Resource names come from the `gridengine` config
 * section, because sites name them differently (onager hard-coded one site's): `pe` (default smp),
 * `mem_resource` (e.g. h_vmem), `gpu_resource` (e.g. gpu), `queue`.
 */

/** Names Grid Engine reserves for itself; a job may not be called so. */
const RESERVED = new Set(['NONE', 'ALL', 'TEMPLATE']);

/**
 * A job name Grid Engine accepts: letters, digits and `_ . + -` (anything else becomes `_`), not starting with
 * a digit (`j` is put in front), not a reserved word, at most 100 characters.
 */
export function sanitizeJobName(name: string): string {
  let s = name.replace(/[^A-Za-z0-9_.+-]/g, '_').slice(0, 100);
  if (s === '' || /^[0-9.+-]/.test(s) || RESERVED.has(s.toUpperCase())) s = `j${s}`.slice(0, 100);
  return s;
}

/**
 * Memory of one slot for Grid Engine, which counts memory per slot: the element's MiB divided by its slots,
 * rounded up, as whole mebibytes (`1366M`) or whole gibibytes when exact (`4G`).
 */
export function memoryPerSlot(mib: number, slots: number): string {
  return formatSize(Math.ceil(mib / slots), 'G');
}

/** What one array element asks Grid Engine for, and how its runner runs the element's tasks. */
export interface ElementResources {
  /** qsub options for resources, throttle, queue, account and dependency (no -t, no -N, no paths). */
  args: string[];
  /** Slots of the parallel environment (NSLOTS); 1 without one. */
  peSlots: number;
  /** Tasks the element's runner runs at once. */
  runnerSlots: number;
  /** Human summary of the resources, e.g. `2 slots`, `h_rt 60 s`. */
  summary: string[];
  /** Requests that are likely to fail. */
  warnings: string[];
}

/** Address space (MiB) the element's runner (Node) needs under an address-space limit such as h_vmem. */
const RUNNER_ADDRESS_SPACE_MIB = 1536;

/** `-pe NAME N` in the arguments after `--`: N when it is a plain number, 'range' otherwise. */
function peInExtra(extra: readonly string[]): number | 'range' | undefined {
  const i = extra.indexOf('-pe');
  if (i < 0) return undefined;
  const n = extra[i + 2];
  return n !== undefined && /^[0-9]+$/.test(n) ? Number(n) : 'range';
}

/** Check the arguments after `--`: ones drover sets itself and that would break the launch are refused. */
function checkExtra(extra: readonly string[]): void {
  for (const a of extra) {
    if (a === '-t')
      throw usageError("'-t' after --: drover submits the array itself; choose tasks with --tasklist");
    if (a === '-b')
      throw usageError("'-b' after --: drover submits a script; drop -b (use --command for one command)");
  }
}

/**
 * The resources of one array element. One task per element: `--cpus` → `-pe PE N`, `--gpus` and `--mem` as
 * asked, one slot. Packed (`--tasks-per-node`): the runner runs `--max-tasks-per-node` M tasks at once (default
 * NSLOTS / cpus, NSLOTS being the slots of a `-pe` given after `--`, else cpus); the element asks for M × cpus
 * slots and M × gpus GPUs. `--mem` is per element; Grid Engine counts memory per slot, so it is divided by the
 * slots. `--duration` → `-l h_rt=SECONDS`, `--max-tasks` → `-tc N`, `--after` → `-hold_jid`.
 */
export function elementResources(request: LaunchRequest, config: Record<string, string>): ElementResources {
  checkExtra(request.extraArgs);
  const packed = request.tasksPerNode > 1;
  const cpus = request.cpus ?? 1;
  const extraPe = peInExtra(request.extraArgs);
  if (extraPe !== undefined && request.cpus !== undefined) {
    throw usageError('--cpus and a -pe after -- both set the slots: give one of them');
  }
  let runnerSlots = 1;
  let peSlots = cpus;
  if (packed) {
    if (request.maxTasksPerNode !== undefined) runnerSlots = request.maxTasksPerNode;
    else if (extraPe === 'range') {
      throw usageError('a -pe slot range after -- leaves the slots open: give --max-tasks-per-node too');
    } else if (typeof extraPe === 'number') runnerSlots = Math.max(1, Math.floor(extraPe / cpus));
    peSlots = typeof extraPe === 'number' ? extraPe : runnerSlots * cpus;
  } else if (request.maxTasksPerNode !== undefined) {
    throw usageError('--max-tasks-per-node is for packed launches: add --tasks-per-node N');
  } else if (typeof extraPe === 'number') peSlots = extraPe;
  const args: string[] = [];
  const summary: string[] = [];
  const warnings: string[] = [];
  if (extraPe === undefined && peSlots > 1) args.push('-pe', config.pe || 'smp', String(peSlots));
  if (peSlots > 1) summary.push(`${peSlots} slots`);
  if (request.memMb !== undefined) {
    if (!config.mem_resource) {
      throw usageError(
        '--mem needs the name of your site’s memory resource: drover config --write gridengine mem_resource h_vmem (or the name your site uses)',
      );
    }
    const mem = formatSize(request.memMb);
    const perSlot = memoryPerSlot(request.memMb, extraPe === 'range' ? 1 : peSlots);
    if (/vmem$/.test(config.mem_resource) && request.memMb < RUNNER_ADDRESS_SPACE_MIB) {
      warnings.push(
        `--mem ${mem} as ${config.mem_resource} limits address space, and each element's runner (Node) needs about 1.5G of it: ask for more, or set mem_resource to a consumable that is not a limit`,
      );
    }
    args.push('-l', `${config.mem_resource}=${perSlot}`);
    summary.push(`${mem} (${config.mem_resource}=${perSlot} per slot)`);
  }
  if (request.gpus !== undefined && request.gpus > 0) {
    if (!config.gpu_resource) {
      throw usageError(
        '--gpus needs the name of your site’s GPU resource: drover config --write gridengine gpu_resource gpu (or the name your site uses)',
      );
    }
    const gpus = request.gpus * (packed ? runnerSlots : 1);
    args.push('-l', `${config.gpu_resource}=${gpus}`);
    summary.push(`${gpus} GPU(s)`);
  }
  if (request.duration !== undefined) {
    args.push('-l', `h_rt=${Math.ceil(request.duration)}`);
    summary.push(`h_rt ${Math.ceil(request.duration)} s`);
  }
  if (request.maxTasks !== undefined) args.push('-tc', String(request.maxTasks));
  const queue = request.partition ?? config.queue;
  if (queue) args.push('-q', queue);
  if (request.account) args.push('-A', request.account);
  if (request.qos) throw usageError('--qos is a Slurm option: Grid Engine has no QOS (drop it)');
  if (request.after !== undefined) args.push('-hold_jid', listItems(request.after).join(','));
  return { args, peSlots, runnerSlots, summary, warnings };
}
