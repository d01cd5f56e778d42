import { setTimeout as sleep } from 'node:timers/promises';
import { refresh } from '../backends/refresh.js';
import { usageError } from '../errors.js';
import { getLaunch, type LaunchRow } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import { launchCounts } from '../ledger/queries.js';
import { listItems } from '../util/list-items.js';
import { quoted } from '../util/quote.js';

/** How often a launch waiting with `--after` looks at the launches it waits for. */
const LOOK_EVERY_MS = 1000;

/**
 * `launch --after 3,5` on the local backend: the drover launches of this folder it waits for (a cluster's
 * `--after` names scheduler job ids instead, and the scheduler waits). Refused at once if one does not exist.
 */
export function launchesToWaitFor(ledger: Ledger, after: string): LaunchRow[] {
  const ids = listItems(after);
  if (!ids.every((id) => /^\d{1,15}$/.test(id)))
    throw usageError(
      `--after ${quoted(after)} is not a list of launch ids: give e.g. 3 or 3,5 (drover status shows them)`,
    );
  return ids.map((text) => {
    const row = getLaunch(ledger, Number(text));
    if (!row)
      throw usageError(
        `--after ${text}: this folder has no launch ${text} (drover status shows its launches)`,
      );
    return row;
  });
}

/** How the launches waited for ended: all well, or the first that did not, and why. */
export type AfterOutcome = { ok: true } | { ok: false; why: string };

/**
 * `--after` for a dry run, without waiting: the ids of the launches still open (the launch would wait for
 * them), or, when every one has ended, how they ended, as the launch would find it.
 */
export function afterNow(ledger: Ledger, launches: readonly LaunchRow[]): { open: number[] } | AfterOutcome {
  const open = openLaunches(ledger, launches);
  return open.length > 0 ? { open: open.map((l) => l.id) } : howLaunchesEnded(ledger, launches);
}

/** The launches that have not ended yet (a task of theirs queued or running), their jobs refreshed first. */
function openLaunches(ledger: Ledger, launches: readonly LaunchRow[]): LaunchRow[] {
  return launches.filter((l) => {
    refresh(ledger, l.job_id);
    return getLaunch(ledger, l.id)?.open === 1;
  });
}

/**
 * Wait until every launch has ended (no task of it queued or running), then say whether each ended well: every
 * one of its tasks succeeded, as Slurm's `afterok`. Nothing is written while waiting but what any `drover
 * status` writes (the runners' records, ingested).
 */
export async function waitForLaunches(
  ledger: Ledger,
  launches: readonly LaunchRow[],
  waiting: (ids: number[]) => void,
): Promise<AfterOutcome> {
  let told = false;
  for (;;) {
    const pending = openLaunches(ledger, launches);
    if (pending.length === 0) break;
    if (!told) waiting(pending.map((l) => l.id));
    told = true;
    await sleep(LOOK_EVERY_MS);
  }
  return howLaunchesEnded(ledger, launches);
}

/** Whether launches that have ended ended well (every task succeeded), or the first that did not, and why. */
function howLaunchesEnded(ledger: Ledger, launches: readonly LaunchRow[]): AfterOutcome {
  for (const l of launches) {
    const counts = launchCounts(ledger, l.id);
    if (counts.succeeded !== l.task_count) {
      const not = Object.entries(counts)
        .filter(([state, n]) => state !== 'succeeded' && n > 0)
        .map(([state, n]) => `${n} ${state}`)
        .join(', ');
      return {
        ok: false,
        why: `launch ${l.id} ended with ${not || 'tasks not succeeded'} of its ${l.task_count} tasks`,
      };
    }
  }
  return { ok: true };
}
