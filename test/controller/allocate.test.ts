import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  type AllocationInput,
  type AllocationOutcome,
  type AutoSettings,
  decideAllocation,
  failuresInRow,
  idleToLeave,
  judgeAllocation,
  PAUSE_AFTER,
  toWithdraw,
} from '../../src/controller/allocate.js';

const settings = (extra: Partial<AutoSettings> = {}): AutoSettings => ({
  maxWorkers: 4,
  minWorkers: 0,
  idleTimeout: 20,
  backlog: 1,
  ...extra,
});

const pool = (extra: Partial<AllocationInput> = {}): AllocationInput => ({
  queued: 0,
  freeSlots: 0,
  perWorker: 1,
  live: 0,
  inSetup: 0,
  starting: 0,
  waitingAllocations: 0,
  failuresInRow: 0,
  ...extra,
});

test('a pool with no worker and tasks queued asks for enough workers, within --max-workers', () => {
  assert.deepEqual(decideAllocation(settings({ maxWorkers: 2 }), pool({ queued: 200 })), {
    kind: 'submit',
    workers: 2,
    reason: '200 task(s) queued, 200 with no slot',
  });
  // 5 tasks, 2 per worker: 3 workers.
  const d = decideAllocation(settings(), pool({ queued: 5, perWorker: 2 }));
  assert.equal(d.kind === 'submit' && d.workers, 3);
});

test('nothing queued, nothing submitted; queued tasks that fit free slots or coming workers, nothing either', () => {
  assert.deepEqual(decideAllocation(settings(), pool({ queued: 0 })), {
    kind: 'wait',
    reason: 'no task queued',
  });
  assert.equal(decideAllocation(settings(), pool({ queued: 3, freeSlots: 3, live: 1 })).kind, 'wait');
  assert.equal(decideAllocation(settings(), pool({ queued: 4, perWorker: 2, starting: 2 })).kind, 'wait');
  assert.equal(
    decideAllocation(settings(), pool({ queued: 4, perWorker: 2, live: 2, inSetup: 2 })).kind,
    'wait',
  );
  // One more task than they take: one more worker.
  const d = decideAllocation(settings(), pool({ queued: 5, perWorker: 2, starting: 2 }));
  assert.equal(d.kind === 'submit' && d.workers, 1);
});

test('at --max-workers, or with --backlog allocations waiting, it waits and says why', () => {
  assert.deepEqual(decideAllocation(settings({ maxWorkers: 2 }), pool({ queued: 9, live: 1, starting: 1 })), {
    kind: 'wait',
    reason: 'at --max-workers 2 (1 live, 1 on their way); 9 task(s) queued',
  });
  assert.deepEqual(
    decideAllocation(settings({ backlog: 1 }), pool({ queued: 9, starting: 1, waitingAllocations: 1 })),
    { kind: 'wait', reason: "1 allocation(s) waiting in the scheduler's queue (--backlog 1)" },
  );
  const d = decideAllocation(
    settings({ backlog: 2 }),
    pool({ queued: 9, starting: 1, waitingAllocations: 1 }),
  );
  assert.equal(d.kind === 'submit' && d.workers, 3);
});

test(`after ${PAUSE_AFTER} failed allocations in a row it pauses with the last reason, queue or not`, () => {
  const p = pool({ queued: 10, failuresInRow: PAUSE_AFTER, lastFailure: 'setup exited 3' });
  const d = decideAllocation(settings(), p);
  assert.equal(d.kind, 'paused');
  assert.match(d.reason, /3 allocations in a row failed to start \(last: setup exited 3\)/);
  assert.equal(decideAllocation(settings(), { ...p, queued: 0 }).kind, 'paused');
  assert.equal(decideAllocation(settings(), { ...p, failuresInRow: PAUSE_AFTER - 1 }).kind, 'submit');
});

test('failures in a row count back to the newest allocation that started, skipping those still waiting', () => {
  const row = (...o: AllocationOutcome[]) => failuresInRow(o);
  assert.equal(row(), 0);
  assert.equal(row('failed', 'failed'), 2);
  assert.equal(row('failed', 'started', 'failed', 'waiting', 'failed'), 2);
  assert.equal(row('failed', 'failed', 'started'), 0);
  assert.equal(row('waiting', 'waiting'), 0);
});

test('idle workers leave after --idle-timeout, longest idle first, keeping --min-workers', () => {
  const w = (id: string, idleSince: number | undefined, registeredAt = 0) => ({
    id,
    idleSince,
    registeredAt,
  });
  const ws = [w('busy', undefined), w('new', 95), w('old', 70), w('older', 60)];
  assert.deepEqual(idleToLeave(ws, 100, { idleTimeout: 20, minWorkers: 0 }, 4), ['older', 'old']);
  assert.deepEqual(idleToLeave(ws, 100, { idleTimeout: 20, minWorkers: 3 }, 4), ['older']);
  assert.deepEqual(idleToLeave(ws, 100, { idleTimeout: 20, minWorkers: 4 }, 4), []);
  assert.deepEqual(idleToLeave(ws, 100, { idleTimeout: 50, minWorkers: 0 }, 4), []);
});

test('waiting allocations are withdrawn once nothing was queued for --idle-timeout', () => {
  assert.deepEqual(toWithdraw(['7', '8'], undefined, 100, 20), []);
  assert.deepEqual(toWithdraw(['7', '8'], 90, 100, 20), []);
  assert.deepEqual(toWithdraw(['7', '8'], 80, 100, 20), ['7', '8']);
});

const arbSettings = fc.record({
  maxWorkers: fc.integer({ min: 1, max: 50 }),
  minWorkers: fc.integer({ min: 0, max: 10 }),
  idleTimeout: fc.integer({ min: 0, max: 600 }),
  backlog: fc.integer({ min: 1, max: 5 }),
});

const arbPool = fc.record({
  queued: fc.integer({ min: 0, max: 10_000 }),
  freeSlots: fc.integer({ min: 0, max: 100 }),
  perWorker: fc.integer({ min: 1, max: 16 }),
  live: fc.integer({ min: 0, max: 60 }),
  inSetup: fc.integer({ min: 0, max: 60 }),
  starting: fc.integer({ min: 0, max: 60 }),
  waitingAllocations: fc.integer({ min: 0, max: 8 }),
  failuresInRow: fc.integer({ min: 0, max: 6 }),
});

test('property: one decision never passes --max-workers or --backlog, nothing when nothing is queued', () => {
  fc.assert(
    fc.property(arbSettings, arbPool, (s, raw) => {
      const p = { ...raw, inSetup: Math.min(raw.inSetup, raw.live) };
      const d = decideAllocation(s, p);
      if (p.failuresInRow >= PAUSE_AFTER) return d.kind === 'paused';
      if (d.kind !== 'submit') return d.kind === 'wait' && d.reason.length > 0;
      return (
        p.queued > 0 &&
        d.workers >= 1 &&
        p.live + p.starting + d.workers <= s.maxWorkers &&
        p.waitingAllocations + 1 <= s.backlog &&
        // enough for the tasks no slot takes, unless max-workers says fewer
        ((d.workers - 1) * p.perWorker < p.queued - p.freeSlots - (p.inSetup + p.starting) * p.perWorker ||
          p.live + p.starting + d.workers === s.maxWorkers)
      );
    }),
    { numRuns: 2000 },
  );
});

/**
 * A scheduler simulated in memory, step by step: allocations wait, then start (their workers register) or fail,
 * workers take tasks and leave when idle. Each step the decision is taken as the controller takes it.
 */
test('property: over a run, never more than --max-workers, never more than --backlog waiting, pause on failure', () => {
  const event = fc.record({
    start: fc.boolean(),
    fail: fc.boolean(),
    finish: fc.integer({ min: 0, max: 30 }),
    arrive: fc.integer({ min: 0, max: 20 }),
  });
  fc.assert(
    fc.property(
      arbSettings,
      fc.integer({ min: 1, max: 4 }),
      fc.boolean(),
      fc.array(event, { maxLength: 60 }),
      (s, perWorker, allFail, events) => {
        const allocations: { workers: number; outcome: AllocationOutcome }[] = [];
        let queued = 0;
        let live = 0;
        let submitted = 0;
        for (const e of events) {
          queued += e.arrive;
          // The oldest waiting allocation starts or fails.
          const next = allocations.find((a) => a.outcome === 'waiting');
          if (next && (e.start || e.fail || allFail)) {
            if (allFail || e.fail) next.outcome = 'failed';
            else {
              next.outcome = 'started';
              live += next.workers;
            }
          }
          const running = Math.min(queued, live * perWorker);
          queued -= Math.min(running, e.finish);
          const waiting = allocations.filter((a) => a.outcome === 'waiting');
          const starting = waiting.reduce((n, a) => n + a.workers, 0);
          const d = decideAllocation(s, {
            queued,
            freeSlots: Math.max(0, live * perWorker - queued),
            perWorker,
            live,
            inSetup: 0,
            starting,
            waitingAllocations: waiting.length,
            failuresInRow: failuresInRow(allocations.map((a) => a.outcome)),
          });
          if (d.kind === 'submit') {
            if (queued === 0) return false;
            allocations.push({ workers: d.workers, outcome: 'waiting' });
            submitted++;
          }
          const nowWaiting = allocations.filter((a) => a.outcome === 'waiting');
          if (nowWaiting.length > s.backlog) return false;
          if (live + nowWaiting.reduce((n, a) => n + a.workers, 0) > s.maxWorkers) return false;
        }
        // When every allocation fails, at most PAUSE_AFTER of them end before the pause, plus those waiting then.
        return !allFail || submitted <= PAUSE_AFTER + s.backlog - 1;
      },
    ),
    { numRuns: 1000 },
  );
});

test('an allocation is queued until a worker of it is ready, and failed when none ever gets ready', () => {
  const w = (state: string, reason: string | null = null) => ({ state, reason });
  const judge = (
    elements: Parameters<typeof judgeAllocation>[0]['elements'],
    workers = [] as ReturnType<typeof w>[],
  ) => judgeAllocation({ elements, workers });
  assert.deepEqual(judge(['waiting', 'waiting']), { state: 'queued', reason: null });
  assert.deepEqual(judge(undefined), { state: 'queued', reason: null }, 'the scheduler did not answer');
  assert.deepEqual(judge(['running', 'gone'], [w('setup')]), { state: 'queued', reason: null });
  assert.deepEqual(judge(['running', 'running'], [w('ready'), w('setup')]), {
    state: 'running',
    reason: null,
  });
  assert.deepEqual(judge(['gone', 'gone'], [w('stopped', 'drained'), w('stopped', 'drained')]), {
    state: 'finished',
    reason: null,
  });
  assert.deepEqual(judge(['running'], [w('stopped', 'setup exited 3')]), {
    state: 'failed',
    reason: 'setup exited 3',
  });
  assert.deepEqual(judge(['gone', 'gone']), {
    state: 'failed',
    reason: 'its workers ended before registering with the controller',
  });
  assert.equal(judge(['error']).state, 'failed');
  // One worker ready is enough: the allocation started, whatever its other element's setup did.
  assert.equal(judge(['running'], [w('ready'), w('stopped', 'setup exited 3')]).state, 'running');
});
