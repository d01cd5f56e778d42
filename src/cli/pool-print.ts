import type { PoolStatus } from '../protocol/messages.js';
import { printTable } from './output.js';

/**
 * `drover pool status NAME` for people: a summary line, the workers, why the gone ones left, and for `--auto`
 * pools the allocations and why the controller did or did not submit.
 */
export function printPoolStatus(p: PoolStatus, all: boolean): void {
  const ready = p.workers.filter((w) => w.state === 'ready').length;
  const wanted = p.auto ? `up to ${p.auto.max_workers}` : String(p.workers_wanted);
  process.stdout.write(
    `pool ${p.name} (${p.backend}, ${p.state}): ${ready}/${wanted} workers ready, ${p.running} task(s) running, ${p.queued} queued\n`,
  );
  printTable(
    ['worker', 'host', 'pid', 'state', 'free', 'tasks', 'seen', ...(all ? ['reason'] : [])],
    p.workers.map((w) => [
      w.id,
      w.host,
      w.pid,
      w.state,
      `${w.free_slots}/${w.slots}`,
      w.tasks.length > 4 ? `${w.tasks.slice(0, 4).join(' ')} ...` : w.tasks.join(' ') || '-',
      `${w.seen_ago}s ago`,
      ...(all ? [w.reason ?? '-'] : []),
    ]),
  );
  if (p.workers_gone > 0 && !all) {
    const why = p.gone_reasons.length > 0 ? `; latest: ${p.gone_reasons.join('; ')}` : '';
    process.stdout.write(
      `${p.workers_gone} worker(s) lost or left (drover pool status ${p.name} --all)${why}\n`,
    );
  }
  if (p.auto) printAuto(p.auto);
}

function printAuto(a: NonNullable<PoolStatus['auto']>): void {
  process.stdout.write(
    `allocation ${a.state} (--max-workers ${a.max_workers}, --min-workers ${a.min_workers}, --idle-timeout ${a.idle_timeout}s, --backlog ${a.backlog}): ${a.decision}\n`,
  );
  if (a.allocations.length === 0) return;
  const now = Date.now() / 1000;
  printTable(
    ['allocation', 'job', 'workers', 'state', 'submitted', 'reason'],
    a.allocations.map((x) => [
      x.id,
      x.job ?? '-',
      x.workers,
      x.state,
      `${Math.max(0, Math.round(now - x.submitted_at))}s ago`,
      x.reason ?? '-',
    ]),
  );
}
