import type { TestContext } from 'node:test';
import type { BackendUnderTest, Site } from './backend.js';

/** One conformance scenario: the same steps and assertions on every backend it applies to. */
export interface Scenario {
  name: string;
  /** Why it does not apply to a backend (undefined: it does). */
  notFor?(b: BackendUnderTest): string | undefined;
  /** A known bug of drover on a backend: the scenario runs, marked todo with this text. */
  bug?(b: BackendUnderTest): string | undefined;
  /**
   * Why it must not share the machine with other test files (it bounds how fast something answers, and a loaded
   * machine would make the bound lie): on backends that also run in shared files it runs from NAME-alone.test.ts,
   * which scripts/test.mjs runs alone.
   */
  alone?: string;
  /** Its time limit on a backend. */
  timeoutMs(b: BackendUnderTest): number;
  run(b: BackendUnderTest, site: Site, t: TestContext): Promise<void>;
}

/** Applies only to cluster backends. */
export const clustersOnly = (b: BackendUnderTest) =>
  b.scheduler ? undefined : `${b.name} has no scheduler (no array elements)`;

/** Applies only to the fake schedulers (a failure a real cluster cannot produce on demand). */
export const fakesOnly = (b: BackendUnderTest) =>
  b.scheduler?.fake ? undefined : 'a failure only the fake schedulers produce on demand';

/**
 * The `--duration` of a pool's workers on a scheduler, long enough to outlast the scenario: a fake scheduler's
 * minute lasts 2 s (test/helpers/fake-scheduler.ts), so 10:00 there would end the workers after 20 s, before a
 * loaded machine gets through the scenario, and the test would see them stopped by their time limit.
 */
export const workerDuration = (b: BackendUnderTest) => (b.scheduler?.fake ? '3:00:00' : '10:00');

/** A scenario's usual time limit: its settling plus a margin for the site's setup and teardown. */
export const usual = (b: BackendUnderTest) => b.settleMs * 2 + 60_000;
