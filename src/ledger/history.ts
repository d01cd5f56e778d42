import type { Ledger } from './ledger.js';

/** One command in the history. */
export interface HistoryRow {
  id: number;
  /** Unix seconds. */
  at: number;
  /** prelaunch | launch | cancel */
  kind: string;
  jobname: string | null;
  /** JSON array of the arguments after `drover`. */
  argv: string;
  cwd: string;
  dry_run: number;
  launch_id: number | null;
}

/** Append a command to the history. */
export function recordHistory(
  ledger: Ledger,
  entry: { kind: string; jobname?: string; argv: readonly string[]; dryRun?: boolean; launchId?: number },
): void {
  ledger
    .stmt(
      'INSERT INTO history (at, kind, jobname, argv, cwd, dry_run, launch_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    .run(
      Date.now() / 1000,
      entry.kind,
      entry.jobname ?? null,
      JSON.stringify(entry.argv),
      process.cwd(),
      entry.dryRun ? 1 : 0,
      entry.launchId ?? null,
    );
}

/** History entries, newest last, filtered as `drover history` asks. */
export function queryHistory(
  ledger: Ledger,
  filter: { kinds?: string[]; noDryRun?: boolean; since?: number; limit?: number },
): HistoryRow[] {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.kinds && filter.kinds.length > 0) {
    where.push(`kind IN (${filter.kinds.map(() => '?').join(', ')})`);
    params.push(...filter.kinds);
  }
  if (filter.noDryRun) where.push('dry_run = 0');
  if (filter.since !== undefined) {
    where.push('at >= ?');
    params.push(filter.since);
  }
  const sql = `SELECT * FROM (SELECT * FROM history ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY id DESC ${filter.limit !== undefined ? 'LIMIT ?' : ''}) ORDER BY id`;
  if (filter.limit !== undefined) params.push(filter.limit);
  return ledger.db.prepare(sql).all(...params) as HistoryRow[];
}
