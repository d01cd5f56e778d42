import { describe, test } from 'node:test';
import type { BackendUnderTest } from './backend.js';
import { SCENARIOS } from './scenarios.js';

/**
 * Run the conformance scenarios on one backend: a scenario that does not apply is skipped with the reason, one
 * that shows a known bug of drover runs as todo. A cluster that is not up skips them all with a notice, unless
 * CI asked for it (DROVER_TEST_SLURM=1 / DROVER_TEST_GRIDENGINE=1): then they run and fail. `part` splits them
 * for backends whose file runs beside others: `shared` skips the scenarios that must run alone, `alone` runs only
 * those (from a file of its own, NAME-alone.test.ts), one at a time: each may load or disturb the whole machine.
 */
export function runConformance(b: BackendUnderTest, part: 'all' | 'shared' | 'alone' = 'all'): void {
  if (b.skip) process.stderr.write(`NOTICE: backend conformance on ${b.name} skipped: ${b.skip}\n`);
  const concurrency = part === 'alone' ? 1 : b.concurrency;
  describe(`backend conformance: ${b.name}`, { skip: b.skip, concurrency }, () => {
    const down = b.down;
    if (down) {
      test('the test cluster is up (with DROVER_TEST_SLURM=1 / DROVER_TEST_GRIDENGINE=1 a failure when not)', () => {
        const why = down();
        if (why) throw new Error(why);
      });
    }
    for (const s of SCENARIOS) {
      if (part === 'alone' && !s.alone) continue;
      const notFor =
        part === 'shared' && s.alone ? `runs alone, from ${b.name}-alone.test.ts: ${s.alone}` : s.notFor?.(b);
      const bug = s.bug?.(b);
      test(s.name, {
        timeout: s.timeoutMs(b),
        ...(notFor ? { skip: notFor } : {}),
        ...(bug ? { todo: bug } : {}),
      }, async (t) => {
        const site = await b.open(t);
        await s.run(b, site, t);
      });
    }
  });
}
