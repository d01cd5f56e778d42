import { formatClock } from '../../util/duration.js';
import { formatSize } from '../../util/size.js';
import type { LaunchRequest } from '../backend.js';
import { completeLines, type Parsed, unreadable, whole } from '../cluster/answer.js';
import { slurmSync } from './commands.js';

/** One node of one partition, as `sinfo -h -N -o '%P|%c|%m|%G|%l'` lists it. */
export interface NodeInfo {
  partition: string;
  /** The partition is the cluster's default (sinfo marks it with `*`). */
  isDefault: boolean;
  cpus: number;
  /** Memory in MB. */
  memMb: number;
  gpus: number;
  /** The partition's time limit in seconds; undefined when unlimited. */
  timeLimit: number | undefined;
}

/** The `--format` of the sinfo call parseNodes reads. */
export const SINFO_FORMAT = '%P|%c|%m|%G|%l';

/** A Slurm time (`infinite`, `MM`, `MM:SS`, `HH:MM:SS`, `D-HH[:MM[:SS]]`) in seconds; undefined when unlimited. */
export function parseSlurmTime(text: string): number | undefined {
  const t = text.trim();
  if (/^(infinite|unlimited|n\/a)$/i.test(t) || t === '') return undefined;
  const m = /^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$/.exec(t);
  if (!m) return undefined;
  const [, d, a, b, c] = m;
  const parts = [a, b, c].filter((x): x is string => x !== undefined).map(Number);
  if (d !== undefined) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    return Number(d) * 86400 + (parts[0] ?? 0) * 3600 + (parts[1] ?? 0) * 60 + (parts[2] ?? 0);
  }
  if (parts.length === 1) return parts[0]! * 60;
  if (parts.length === 2) return parts[0]! * 60 + parts[1]!;
  return parts[0]! * 3600 + parts[1]! * 60 + parts[2]!;
}

/** GPUs in a GRES string such as `gpu:4`, `gpu:a100:4(S:0-1)` or `gpu:2,mps:100` (`(null)`: none). */
export function gresGpus(gres: string): number {
  let n = 0;
  for (const item of gres.split(/,(?![^(]*\))/)) {
    const m = /^gpu(?::[^:(]+)?:(\d+)/.exec(item.trim());
    if (m) n += Number(m[1]);
  }
  return n;
}

/** A node line of SINFO_FORMAT: partition (`*` for the default), CPUs, memory in MB, GRES, time limit. */
const NODE_LINE = /^([^|\s]+)\|(\d+)\+?\|(\d+)\+?\|([^|]*)\|([^|]+)$/;

/** Parse sinfo's node lines (format SINFO_FORMAT), or say the answer is not whole. */
export function parseNodes(text: string): Parsed<NodeInfo[]> {
  const lines = completeLines(text);
  if (!lines.ok) return lines;
  const nodes: NodeInfo[] = [];
  for (const line of lines.value) {
    if (line.trim() === '') continue;
    const f = NODE_LINE.exec(line.trim());
    if (!f) return unreadable('a line is not a node of a partition');
    const partition = f[1]!;
    nodes.push({
      partition: partition.replace(/\*$/, ''),
      isDefault: partition.endsWith('*'),
      cpus: Number(f[2]),
      memMb: Number(f[3]),
      gpus: gresGpus(f[4]!),
      timeLimit: parseSlurmTime(f[5]!),
    });
  }
  return whole(nodes);
}

/**
 * Requests no node of the target partition(s) can ever satisfy: Slurm accepts some of them and lets the
 * elements pend forever, so drover warns. Pure: give it sinfo's nodes.
 */
export function infeasible(req: LaunchRequest, nodes: readonly NodeInfo[]): string[] {
  const wanted = req.partition?.split(',').map((p) => p.trim());
  const inScope = nodes.filter((n) => (wanted ? wanted.includes(n.partition) : n.isDefault));
  if (inScope.length === 0) return [];
  const where = wanted ? `partition ${wanted.join(',')}` : `the default partition (${inScope[0]!.partition})`;
  const max = (f: (n: NodeInfo) => number) => Math.max(...inScope.map(f));
  const out: string[] = [];
  const pend = 'the array elements would pend forever: ask for less or pick another --partition';
  if (req.cpus !== undefined && req.cpus > max((n) => n.cpus)) {
    out.push(`--cpus ${req.cpus}: no node of ${where} has more than ${max((n) => n.cpus)} CPUs; ${pend}`);
  }
  if (req.gpus !== undefined && req.gpus > 0 && req.gpus > max((n) => n.gpus)) {
    out.push(`--gpus ${req.gpus}: no node of ${where} has more than ${max((n) => n.gpus)} GPUs; ${pend}`);
  }
  if (req.memMb !== undefined && req.memMb > max((n) => n.memMb)) {
    out.push(
      `--mem ${formatSize(req.memMb)}: no node of ${where} has more than ${max((n) => n.memMb)} MB; ${pend}`,
    );
  }
  const limits = inScope.map((n) => n.timeLimit);
  if (req.duration !== undefined && limits.every((l) => l !== undefined)) {
    const longest = Math.max(...(limits as number[]));
    if (Math.ceil(req.duration / 60) * 60 > longest) {
      out.push(
        `--duration ${formatClock(req.duration)}: ${where} allows at most ${formatClock(longest)}; ${pend}`,
      );
    }
  }
  return out;
}

/** Warnings about a request, from one sinfo call; none when sinfo cannot say. */
export function feasibilityWarnings(req: LaunchRequest): string[] {
  if (
    req.cpus === undefined &&
    req.gpus === undefined &&
    req.memMb === undefined &&
    req.duration === undefined
  ) {
    return [];
  }
  const r = slurmSync('sinfo', ['-h', '-N', '-o', SINFO_FORMAT]);
  const nodes = r.status === 0 ? parseNodes(r.stdout) : undefined;
  return nodes?.ok ? infeasible(req, nodes.value) : [];
}
