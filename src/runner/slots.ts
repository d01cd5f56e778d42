import os from 'node:os';
import { usageError } from '../errors.js';

/** Inputs that decide how many tasks a runner runs at once. */
export interface SlotRequest {
  /** CPUs available to this process (affinity-aware). */
  cpusAvailable: number;
  /** CPUs each task needs (default 1). */
  cpusPerTask?: number;
  /** An explicit number of slots (`--max-tasks` / `--max-tasks-per-node`); overrides the CPU count. */
  maxTasks?: number;
  /** GPUs each task needs; each slot gets its own. */
  gpusPerTask?: number;
  /** GPU ids visible to the runner (from CUDA_VISIBLE_DEVICES). */
  visibleGpus?: readonly string[];
  /**
   * The tasks the runner has, when it knows them all (not a pool worker's open runner): it never runs more at
   * once, so it gets no more slots than that. A slot costs a little memory and a message to the fork server,
   * so `--max-tasks 10000000` on a 10-task job must cost 10 slots, not 10 million.
   */
  tasks?: number;
}

/** One slot of a runner and the GPUs pinned to it. */
export interface Slot {
  index: number;
  gpus: string[];
}

/** CPUs this process may use: its affinity mask, not the machine's core count. */
export function cpusAvailable(): number {
  return os.availableParallelism();
}

/** GPU ids from a CUDA_VISIBLE_DEVICES value (empty when unset or empty). */
export function parseVisibleGpus(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '' && s !== 'NoDevFiles');
}

/**
 * Decide the runner's slots: by default CPUs available divided by CPUs per task (at least 1); `maxTasks`
 * overrides. With GPUs per task, each slot gets that many distinct GPUs, and there are never more slots than
 * the visible GPUs can fill; never more than `tasks` either (at least 1).
 */
export function planSlots(req: SlotRequest, gpuFlag = '--gpus'): Slot[] {
  const perTask = req.cpusPerTask ?? 1;
  let count = req.maxTasks ?? Math.max(1, Math.floor(req.cpusAvailable / perTask));
  const k = req.gpusPerTask ?? 0;
  const visible = req.visibleGpus ?? [];
  if (k > 0) {
    const fit = Math.floor(visible.length / k);
    if (fit < 1) {
      throw usageError(
        `${gpuFlag} ${k} needs ${k} GPU(s) per task but ${visible.length} are visible (CUDA_VISIBLE_DEVICES='${visible.join(',')}'): make GPUs visible or lower ${gpuFlag}`,
      );
    }
    count = Math.min(count, fit);
  }
  if (req.tasks !== undefined) count = Math.max(1, Math.min(count, req.tasks));
  return Array.from({ length: count }, (_, index) => ({
    index,
    gpus: k > 0 ? visible.slice(index * k, index * k + k) : [],
  }));
}
