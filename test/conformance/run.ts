import { describe, test } from 'node:test';
import type { BackendUnderTest } from './backend.js';
import { SCENARIOS } from './scenarios.js';

/**
 * Run the conformance scenarios on one backend: a scenario that does not apply is skipped with the reason, one
 * that shows a known bug of drover runs as todo. A cluster that is not up skips them all with a notice, unless
 * CI asked for it (DROVER_TEST_SLURM=1 / DROVER_TEST_GRIDENGINE=1): then they run and fail.
 */
export function runConformance(b: BackendUnderTest): void {
  if (b.skip) process.stderr.write(`NOTICE: backend conformance on ${b.name} skipped: ${b.skip}\n`);
  describe(`backend conformance: ${b.name}`, { skip: b.skip, concurrency: b.concurrency }, () => {
    const down = b.down;
    if (down) {
      test('the test cluster is up (with DROVER_TEST_SLURM=1 / DROVER_TEST_GRIDENGINE=1 a failure when not)', () => {
        const why = down();
        if (why) throw new Error(why);
      });
    }
    for (const s of SCENARIOS) {
      const notFor = s.notFor?.(b);
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
