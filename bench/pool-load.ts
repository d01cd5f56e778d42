/**
 * Load generator of the pool memory benchmark (run as its own process by bench/pool-memory.ts): plays `workers`
 * workers of a pool over HTTP. Each registers, takes `perWorker` tasks, and in each round all of them send, at
 * the same moment, a maximal report — the start and end of every task it holds, padded to just under the
 * controller's 1 MiB body limit — and, alongside, one oversized report (8 MiB) that must be refused. Prints a JSON
 * summary of what the controller answered.
 *
 * Usage: node dist/bench/pool-load.js URL TOKEN_FILE POOL WORKERS PER_WORKER ROUNDS
 */
import fs from 'node:fs';
import { MAX_BODY_BYTES } from '../src/protocol/messages.js';
import { poster, succeededRecords, type Task } from './worker-http.js';

const [url, tokenFile, pool, nWorkers, perWorker, nRounds] = process.argv.slice(2);
const token = fs.readFileSync(tokenFile!, 'utf8').trim();
const workers = Number(nWorkers);
const per = Number(perWorker);
const rounds = Number(nRounds);

const post = poster(url!, token);

/** A report of the start and end of `tasks`, each end's reason padded so the body is just under the limit. */
function maximalReport(seq: number, tasks: Task[]): string {
  const now = Date.now() / 1000;
  const records = (pad: number) => succeededRecords(tasks, now, { took: 0.01, reason: 'r'.repeat(pad) });
  const launch = tasks[0]!.launch;
  const bare = JSON.stringify({ batches: [{ seq, launch, records: records(0) }] }).length;
  const pad = Math.max(0, Math.min(1000, Math.floor((MAX_BODY_BYTES - 1024 - bare) / tasks.length)));
  return JSON.stringify({ batches: [{ seq, launch, records: records(pad) }] });
}

async function main(): Promise<void> {
  const all: { id: string; secret: string; held: Task[] }[] = [];
  for (let i = 0; i < 2 * workers; i++) {
    const reg = {
      pool,
      host: `load${i}`,
      pid: 1000 + i,
      resources: { cpus: per, gpus: 0, mem_mb: 0 },
      slots: per,
      // The abusers stay in their setup: the controller hands them nothing.
      setup: i >= workers,
      holding: [],
    };
    const a = await post('/workers/register', JSON.stringify(reg));
    if (a.status !== 200) throw new Error(`register: ${a.status} ${a.text}`);
    const { id, secret } = JSON.parse(a.text) as { id: string; secret: string };
    all.push({ id, secret, held: [] });
  }
  // The first half report their tasks; the other half send the oversized reports (one report per worker in
  // flight). They stay in their setup.
  const ws = all.slice(0, workers);
  const abusers = all.slice(workers);
  const statuses: Record<string, number> = {};
  let bytes = 0;
  let records = 0;
  // Every worker says it is alive each second, as a real one does: a round of the storm can take longer than the
  // server's lost-after, and a worker heard from only by its polls would be taken for lost in the middle of it.
  let beating = false;
  const beat = setInterval(() => {
    if (beating) return;
    beating = true;
    void Promise.all(
      all.map((w) => post(`/workers/${w.id}/heartbeat`, '{}', w.secret).catch(() => undefined)),
    ).then(() => {
      beating = false;
    });
  }, 1000);
  for (let round = 1; round <= rounds; round++) {
    for (const w of ws) {
      // At least one poll a round (it is also the worker's sign of life), more until it holds `per` tasks.
      for (let tries = 0; tries === 0 || (w.held.length < per && tries < 50); tries++) {
        const wait = w.held.length < per ? 1 : 0;
        const a = await post(`/workers/${w.id}/poll`, JSON.stringify({ wait }), w.secret);
        if (a.status !== 200) throw new Error(`poll: ${a.status} ${a.text}`);
        w.held.push(...(JSON.parse(a.text) as { tasks: Task[] }).tasks);
      }
      if (w.held.length === 0) throw new Error(`worker ${w.id} got no task in round ${round}`);
    }
    // The controller may hand short tasks out ahead (prefetch): report `per` of them, keep the rest for later.
    const taken = ws.map((w) => w.held.splice(0, per));
    const bodies = ws.map((_, i) => maximalReport(round, taken[i]!));
    const oversized = `{"batches": [], "pad": "${'x'.repeat(8 << 20)}"}`;
    const answers = await Promise.all([
      ...ws.map((w, i) => post(`/workers/${w.id}/report`, bodies[i]!, w.secret)),
      ...abusers.map((w) => post(`/workers/${w.id}/report`, oversized, w.secret)),
    ]);
    for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    for (const [i, t] of taken.entries()) {
      bytes += bodies[i]!.length;
      records += t.length * 2;
    }
  }
  clearInterval(beat);
  process.stdout.write(`${JSON.stringify({ statuses, bytes, records })}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
