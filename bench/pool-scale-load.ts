/**
 * Load generator of the pool scale benchmark (run as its own process by bench/pool-scale.ts): plays `workers`
 * workers of a pool over HTTP on loopback, as a real worker speaks the protocol. Each registers, long-polls for
 * tasks and reports every task it is handed as succeeded at once (its start and end records, in one report),
 * until `total` tasks were reported across all of them. Prints a JSON summary: when the last report was accepted
 * (epoch ms), how many tasks were reported and how the controller answered.
 *
 * Usage: node dist/bench/pool-scale-load.js URL TOKEN_FILE POOL WORKERS TOTAL SLOTS
 */
import fs from 'node:fs';
import { MAX_REPORT_RECORDS } from '../src/protocol/messages.js';
import { poster, succeededRecords, type Task } from './worker-http.js';

const [url, tokenFile, pool, nWorkers, nTotal, nSlots] = process.argv.slice(2);
const token = fs.readFileSync(tokenFile!, 'utf8').trim();
const workers = Number(nWorkers);
const total = Number(nTotal);
const slots = Number(nSlots);

const post = poster(url!, token);

/** The start and end of each of `tasks` (all of one launch), as a real worker's runner records them. */
function records(tasks: Task[]): unknown[] {
  return succeededRecords(tasks, Date.now() / 1000, { slotOf: (i) => i % slots });
}

let reported = 0;
let lastReportAt = 0;
let polls = 0;
let reports = 0;
const statuses: Record<string, number> = {};

async function worker(i: number): Promise<void> {
  const reg = {
    pool,
    host: `scale${i}`,
    pid: 2000 + i,
    resources: { cpus: slots, gpus: 0, mem_mb: 0 },
    slots,
    setup: false,
    holding: [],
  };
  const a = await post('/workers/register', JSON.stringify(reg));
  if (a.status !== 200) throw new Error(`register: ${a.status} ${a.text}`);
  const { id, secret } = JSON.parse(a.text) as { id: string; secret: string };
  // A heartbeat each second, as a real worker sends them beside its polls.
  const beat = setInterval(() => {
    void post(`/workers/${id}/heartbeat`, '{}', secret).catch(() => undefined);
  }, 1000);
  let seq = 0;
  try {
    await loop(id, secret, () => ++seq);
  } finally {
    clearInterval(beat);
  }
}

async function loop(id: string, secret: string, nextSeq: () => number): Promise<void> {
  while (reported < total) {
    const p = await post(`/workers/${id}/poll`, JSON.stringify({ wait: 1 }), secret);
    polls++;
    if (p.status !== 200) throw new Error(`poll: ${p.status} ${p.text}`);
    const tasks = (JSON.parse(p.text) as { tasks: Task[] }).tasks;
    if (tasks.length === 0) continue;
    // One batch per launch, each at most MAX_REPORT_RECORDS records (two a task).
    const byLaunch = new Map<number, Task[]>();
    for (const t of tasks) {
      const l = byLaunch.get(t.launch);
      if (l) l.push(t);
      else byLaunch.set(t.launch, [t]);
    }
    const per = Math.floor(MAX_REPORT_RECORDS / 2);
    for (const [launch, ts] of byLaunch) {
      for (let k = 0; k < ts.length; k += per) {
        const chunk = ts.slice(k, k + per);
        const body = JSON.stringify({ batches: [{ seq: nextSeq(), launch, records: records(chunk) }] });
        const r = await post(`/workers/${id}/report`, body, secret);
        reports++;
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status !== 200) throw new Error(`report: ${r.status} ${r.text}`);
        reported += chunk.length;
        lastReportAt = Date.now();
      }
    }
  }
}

async function main(): Promise<void> {
  const ids: Promise<void>[] = [];
  for (let i = 0; i < workers; i++) ids.push(worker(i));
  await Promise.all(ids);
  process.stdout.write(`${JSON.stringify({ reported, lastReportAt, polls, reports, statuses })}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
