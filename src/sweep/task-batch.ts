import type { SweepTask } from './types.js';

/**
 * Some of a job's tasks, in order, as parallel arrays: what a prelaunch streams into the jobfile, the params
 * file and the ledger a few thousand at a time, so that no JavaScript object per task is ever made.
 */
export interface TaskBatch {
  /** Task ids. */
  ids: number[];
  /** Each task's full command. */
  commands: string[];
  /** Each task's tag (`''` when untagged). */
  tags: string[];
  /** Each task's sweep values as JSON text, exactly `JSON.stringify(SweepTask.params)` (`{}` when none). */
  params: string[];
}

/** How many tasks a batch holds by default: big enough for few statements, small enough to stay in cache. */
export const BATCH_SIZE = 4096;

/** An empty batch. */
export function emptyBatch(): TaskBatch {
  return { ids: [], commands: [], tags: [], params: [] };
}

/** Tasks already in memory (a commands file's), as batches. */
export function* batchesOfTasks(tasks: readonly SweepTask[], size = BATCH_SIZE): Generator<TaskBatch> {
  for (let start = 0; start < tasks.length; start += size) {
    const batch = emptyBatch();
    for (const t of tasks.slice(start, start + size)) {
      batch.ids.push(t.id);
      batch.commands.push(t.command);
      batch.tags.push(t.tag);
      batch.params.push(JSON.stringify(t.params));
    }
    yield batch;
  }
}
