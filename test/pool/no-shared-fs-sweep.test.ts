import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { ATTEMPT_LOG_COLUMNS, type AttemptLogs } from '../../src/ledger/queries.js';
import { extentOf, placeOf, readRange } from '../../src/protocol/log-slices.js';
import { openTaskFile } from '../../src/util/task-file.js';
import { droverJson, runDrover } from '../helpers/drover.js';
import { flapLinks, makeNetns, NETNS_TOOLS, type Netns, netnsWorkspace, startNetnsWorker } from './netns.js';
import { oneSuccessEach } from './sweep-outputs.js';
import { idlePool } from './two-pools.js';

/**
 * The sweep on workers without a shared filesystem: two workers, each on a host of its own
 * (test/pool/netns.ts), run 1,000 tasks that print and leave a result while both links go down and up at
 * random moments. Every task's output, as `drover logs` reads it, is byte for byte what it printed, `results`
 * has every task's result and `--best` the best, and every task has exactly one attempt, which succeeded.
 */

const TASKS = 1000;
const BEST = 617;

/** Task `n` prints two lines (the second longer for some tasks), one on stderr, and its loss (n − 617)². */
const SMALL = `n=$2
echo "task $n says hello"
printf 'task %s line 2 %0*d\\n' "$n" $((n % 13 * 40)) 0
echo "stderr of task $n" >&2
printf '{"n": %s, "loss": %s}\\n' "$n" $(((n - ${BEST}) * (n - ${BEST}))) > "$DROVER_RESULT_FILE"
`;

function expected(n: number): { out: string; err: string } {
  return {
    out: `task ${n} says hello\ntask ${n} line 2 ${'0'.repeat(Math.max(1, (n % 13) * 40))}\n`,
    err: `stderr of task ${n}\n`,
  };
}

/** Each task's stdout and stderr as `drover logs` reads them (its attempt's place in a file or segment). */
function readLogs(cwd: string, job: string): Map<number, { out: string; err: string; path: string }> {
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true });
  const rows = db
    .prepare(
      `SELECT task_id, ${ATTEMPT_LOG_COLUMNS} FROM attempts WHERE job_id = (SELECT id FROM jobs WHERE name = ?) ORDER BY task_id, attempt`,
    )
    .all(job) as (AttemptLogs & { task_id: number })[];
  db.close();
  const read = (row: AttemptLogs, stream: 'out' | 'err'): string => {
    const place = placeOf(row, stream);
    const fd = openTaskFile(place.path!);
    try {
      const e = extentOf(fd, place, stream);
      return readRange(fd, e.start, e.end).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  };
  return new Map(
    rows.map((r) => [r.task_id, { out: read(r, 'out'), err: read(r, 'err'), path: r.stdout_path! }]),
  );
}

test(`two --no-shared-fs workers on hosts of their own run ${TASKS} tasks while their links flap: every log and result whole`, {
  skip: NETNS_TOOLS ? false : 'needs root, ip netns and unshare',
  timeout: 600_000,
}, async (t) => {
  const nets: Netns[] = [];
  const { cwd, server } = await netnsWorkspace(t, () => {
    nets.push(makeNetns(0), makeNetns(1));
    return nets[0]!;
  });
  await idlePool(cwd, 'p');
  const workers = nets.map((net) =>
    startNetnsWorker(net, {
      cwd,
      server: server.url,
      pool: 'p',
      hidden: path.dirname(cwd),
      slots: 2,
      files: { 'small.sh': SMALL },
    }),
  );
  t.after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    for (const n of nets) n.remove();
  });

  const values = Array.from({ length: TASKS }, (_, i) => String(i + 1));
  const pre = await runDrover(
    ['prelaunch', '+command', 'sh small.sh', '+jobname', 'S', '+arg', '--n', ...values, '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  // Each link is down about a quarter of the time (the one-worker test flaps it harder, with fewer tasks).
  const flapper = flapLinks(nets, { up: [500, 2500], down: [150, 1000] });
  let flaps = 0;
  const t0 = Date.now();
  try {
    const l = await runDrover(
      ['launch', '--pool', 'p', '--jobname', 'S', '--logs', 'segments', '--follow', '--json'],
      { cwd },
    );
    assert.equal(l.code, 0, `${l.stdout}\n${l.stderr}`);
  } finally {
    flaps = await flapper.stop();
  }
  const seconds = (Date.now() - t0) / 1000;
  t.diagnostic(`${TASKS} tasks in ${seconds.toFixed(1)} s, links down ${flaps} times`);
  // Each link goes down at once, then again within 3.5 s: a sweep of 1,000 tasks on 4 slots lasts longer.
  assert.ok(flaps >= 4, `the links went down ${flaps} times in ${seconds} s`);
  for (const w of workers)
    assert.match(w.stderr(), /this host has no folder .*: its tasks run in /, 'the submit folder was hidden');

  oneSuccessEach(cwd, 'S', TASKS);
  const logs = readLogs(cwd, 'S');
  // Both workers ran some of them: their segments are named by worker (`<worker-id>.<slot>.out`).
  const writers = new Set([...logs.values()].map((l) => path.basename(l.path).replace(/\.\d+\.out$/, '')));
  assert.equal(
    writers.size,
    2,
    `the workers whose segments hold the sweep's logs: ${[...writers].join(', ')}; the workers said:\n${workers.map((w) => w.stderr().slice(-2000)).join('\n--\n')}`,
  );
  for (let n = 1; n <= TASKS; n++) {
    const l = logs.get(n);
    assert.deepEqual(l && { out: l.out, err: l.err }, expected(n), `task ${n}'s logs`);
  }
  // And as `drover logs` prints them, for a sample.
  for (const n of [1, 2, 13, 499, BEST, 999, TASKS]) {
    const out = await runDrover(['logs', 'S', String(n)], { cwd });
    assert.equal(out.stdout, expected(n).out, `drover logs S ${n}`);
    const err = await runDrover(['logs', 'S', String(n), '--err'], { cwd });
    assert.equal(err.stdout, expected(n).err, `drover logs S ${n} --err`);
  }
  const results = await droverJson<{ task: number; result: { n: number; loss: number } }[]>(
    ['results', 'S', '--json'],
    { cwd },
  );
  assert.deepEqual(
    results.map((r) => [r.task, r.result]),
    values.map((_, i) => [i + 1, { n: i + 1, loss: (i + 1 - BEST) ** 2 }]),
  );
  const best = await droverJson<{ task: number; result: { loss: number } }>(
    ['results', 'S', '--best', 'loss', '--json'],
    { cwd },
  );
  assert.deepEqual([best.task, best.result.loss], [BEST, 0]);
});
