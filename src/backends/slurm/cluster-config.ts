import fs from 'node:fs';
import { DroverError } from '../../errors.js';
import { completeLines, type Parsed, unreadable, whole } from '../cluster/answer.js';
import { commandError, type SlurmRun, slurmAsync, slurmSync } from './commands.js';

/** What drover needs to know of a Slurm cluster's configuration (`scontrol show config`). */
export interface ClusterConfig {
  /** Array indices run from 0 to MaxArraySize - 1. */
  maxArraySize: number;
  /** Most elements in one array (SchedulerParameters max_array_tasks; else MaxArraySize). */
  maxArrayTasks: number;
  /** `slurmdbd` accounting: sacct works. */
  sacct: boolean;
  /** The job completion log file (JobCompType=jobcomp/filetxt), when there is one. */
  jobcompFile?: string;
}

/** Parse the `Key = Value` lines of `scontrol show config` into a map. */
export function parseConfigLines(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^(\w+)\s+= ?(.*)$/.exec(line.trimEnd());
    if (m) map.set(m[1]!, m[2]!.trim());
  }
  return map;
}

/**
 * The facts drover uses from `scontrol show config` output, or why it is not a whole answer: it begins with
 * `Configuration data as of` and ends with the controllers' state (`Slurmctld(primary) at vm is UP`), which a
 * cut answer lacks; MaxArraySize must be a number.
 */
export function parseClusterConfig(text: string): Parsed<ClusterConfig> {
  const lines = completeLines(text);
  if (!lines.ok) return lines;
  const filled = lines.value.filter((l) => l.trim() !== '');
  if (!filled[0]?.startsWith('Configuration data as of') || !filled.at(-1)?.startsWith('Slurmctld('))
    return unreadable('it lacks its first or last line');
  const map = parseConfigLines(text);
  const maxArraySize = Number(map.get('MaxArraySize'));
  if (!/^\d+$/.test(map.get('MaxArraySize') ?? '') || !Number.isSafeInteger(maxArraySize))
    return unreadable('it has no MaxArraySize');
  const sched = /(?:^|,)max_array_tasks=(\d+)(?:,|$)/.exec(map.get('SchedulerParameters') ?? '');
  const maxArrayTasks = sched ? Math.min(Number(sched[1]), maxArraySize) : maxArraySize;
  const jobcompType = map.get('JobCompType') ?? '';
  const jobcompLoc = map.get('JobCompLoc') ?? '';
  return whole({
    maxArraySize,
    maxArrayTasks,
    sacct: /slurmdbd/.test(map.get('AccountingStorageType') ?? ''),
    ...(jobcompType === 'jobcomp/filetxt' && jobcompLoc.startsWith('/') ? { jobcompFile: jobcompLoc } : {}),
  });
}

/** Read the cluster's configuration: one `scontrol show config`. */
export function readClusterConfig(): ClusterConfig {
  return clusterConfigOf(slurmSync('scontrol', ['show', 'config']));
}

/** The same, without holding the event loop while Slurm answers (the controller submits pool workers so). */
export async function readClusterConfigAsync(): Promise<ClusterConfig> {
  return clusterConfigOf(await slurmAsync('scontrol', ['show', 'config']));
}

function clusterConfigOf(r: SlurmRun): ClusterConfig {
  if (r.status !== 0) throw commandError('scontrol show config', r);
  const parsed = parseClusterConfig(r.stdout);
  if (parsed.ok) return parsed.value;
  throw new DroverError(
    'backend',
    `scontrol show config gave an answer drover cannot read whole (${parsed.why}): is this a Slurm cluster? Try again`,
  );
}

/** Where a launch finds how its array elements ended, decided once at submission. */
export type Accounting =
  | { kind: 'sacct' }
  /** The job completion log, read from `offset` (its size when the launch was submitted). */
  | { kind: 'jobcomp'; file: string; offset: number }
  | { kind: 'none' };

/**
 * The best source of final element states this submit host can use: the job completion log when it is
 * readable here (a file read, no daemon call), else sacct when the cluster has slurmdbd, else none (drover then
 * relies on its runners' records, the elements' output files and its own cancel requests).
 */
export function chooseAccounting(config: ClusterConfig): Accounting {
  if (config.jobcompFile) {
    try {
      fs.accessSync(config.jobcompFile, fs.constants.R_OK);
      return { kind: 'jobcomp', file: config.jobcompFile, offset: fs.statSync(config.jobcompFile).size };
    } catch {
      // not readable from here
    }
  }
  return config.sacct ? { kind: 'sacct' } : { kind: 'none' };
}
