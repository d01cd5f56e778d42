import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { LOG_MODES, runEnds } from './runner-ends.js';
import { RUNNERS } from './runners.js';

/**
 * The ends again, round after round, while both cores are kept busy: a record must never give one task
 * another's end (in one CI run the bash element runner recorded a missing program, exit 127, as `killed` with no
 * exit code, because bash answers 127 for a pid it does not know). The tasks end close together and slots are
 * reused at once, so the runners' reaping, pid bookkeeping and signal paths race each other as on a loaded node.
 * Bounded in time: each runner gets ROUNDS rounds or its share of the budget, whichever ends first.
 */
describe('under load', () => {
  const ROUNDS = 6;
  const BUDGET_MS = 2500;
  const busy: ChildProcess[] = [];
  before(() => {
    for (let i = 0; i < 2; i++)
      busy.push(spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore', detached: true }));
  });
  after(() => {
    for (const p of busy) if (p.pid) process.kill(-p.pid, 'SIGKILL');
  });
  for (const impl of RUNNERS) {
    test(`${impl.name}: every task's own end, round after round`, { skip: impl.skip }, async (t) => {
      const t0 = Date.now();
      for (let i = 1; i <= ROUNDS && (i <= 2 || Date.now() - t0 < BUDGET_MS); i++)
        await runEnds(t, impl, LOG_MODES[i % 2]!);
    });
  }
});
