import fc from 'fast-check';
import { BODY_BUDGETS, SMALL_BODY_BYTES } from '../../src/controller/body-budgets.js';
import { MAX_BODY_BYTES } from '../../src/protocol/messages.js';
import type { SlowRequest } from '../helpers/slow-client.js';

/**
 * The slow-client generator of the adversarial API suite: requests that announce a body and then send part of it
 * slowly or not at all, on every kind of route, with and without the right credentials. Each comes with what the
 * server must do with it, and by when:
 * - `refused`: its credentials are wrong, so it is answered (401, 403, 409) before any of its body is read;
 * - `too-large`: it announces more than its route takes, so it is refused (413) without taking a slot;
 * - `cut`: it was let in, so its budget's deadline ends it (408, or its connection closed).
 */

/** What the generator needs of the test's world. */
export interface SlowWorld {
  tokens: { user: string; worker: string; otherPool: string };
  /** An honest worker of `tokens.worker`'s pool. */
  worker: { id: string; secret: string };
}

/** A slow request and what must come of it. */
export interface SlowCase {
  what: string;
  req: SlowRequest;
  expect: 'refused' | 'too-large' | 'cut';
  /** For `cut`: the budget whose deadline ends it. */
  budget?: keyof typeof BODY_BUDGETS;
}

/** A body of `size` bytes that would be valid JSON once whole: `prefix`, spaces, `}`. */
function padded(prefix: string, size: number): string {
  return `${prefix}${' '.repeat(Math.max(0, size - prefix.length - 1))}}`;
}

/** How the body is sent: bytes with the head, then one more now and then or never; chunked or not. */
const pace = fc.record({
  first: fc.integer({ min: 0, max: 40 }),
  trickleMs: fc.option(fc.integer({ min: 200, max: 1500 }), { nil: undefined }),
  chunked: fc.boolean(),
});

/** A size a route takes (`max`), or more than it takes. */
const sizes = (max: number) => ({
  within: fc.integer({ min: 64, max: Math.min(max, 1 << 16) }),
  over: fc.integer({ min: max + 1, max: max + (1 << 20) }),
});

/** Slow requests of every kind, for a world. */
export function slowCases(w: SlowWorld): fc.Arbitrary<SlowCase> {
  const json = { 'content-type': 'application/json' };
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  const own = { ...bearer(w.tokens.worker), 'drover-worker-secret': w.worker.secret };
  const make = (
    what: string,
    path: string,
    headers: Record<string, string>,
    prefix: string,
    size: fc.Arbitrary<number>,
    expect: SlowCase['expect'],
    budget?: SlowCase['budget'],
  ): fc.Arbitrary<SlowCase> =>
    fc.tuple(size, pace).map(([n, p]) => ({
      what: `${what} (${n} bytes, ${JSON.stringify(p)})`,
      // A body announced too large is refused by its length: only a Content-Length announces one.
      req: {
        method: 'POST',
        path,
        headers: { ...json, ...headers },
        body: padded(prefix, n),
        ...p,
        chunked: p.chunked && expect !== 'too-large',
      },
      expect,
      ...(budget ? { budget } : {}),
    }));
  const login = sizes(BODY_BUDGETS.public.bytes);
  const user = sizes(MAX_BODY_BYTES);
  const small = sizes(SMALL_BODY_BYTES);
  const beat = `/v1/workers/${w.worker.id}/heartbeat`;
  const report = `/v1/workers/${w.worker.id}/report`;
  const scale = '/v1/pools/none/scale';
  return fc.oneof(
    // Anyone: the login.
    make('a login', '/v1/ui/login', {}, '{"token": "x"', login.within, 'cut', 'public'),
    make('a login, too large', '/v1/ui/login', {}, '{"token": "x"', login.over, 'too-large'),
    // A user's request with a user token; with none, a made-up one or a worker's.
    make('a user request', scale, bearer(w.tokens.user), '{"workers": 1', user.within, 'cut', 'user'),
    fc
      .constantFrom({}, bearer('drv_000000000000_made-up-made-up-made-up'), bearer(w.tokens.worker))
      .chain((h) =>
        make(`a user request with ${JSON.stringify(h)}`, scale, h, '{"workers": 1', user.within, 'refused'),
      ),
    // A worker's life signs and report, with its own credentials, or with another's.
    make("a worker's heartbeat", beat, own, '{', small.within, 'cut', 'workerSmall'),
    make("a worker's heartbeat, too large", beat, own, '{', small.over, 'too-large'),
    make("a worker's report", report, own, '{"batches": [', user.within, 'cut', 'worker'),
    fc
      .constantFrom(
        bearer(w.tokens.worker),
        { ...bearer(w.tokens.otherPool), 'drover-worker-secret': w.worker.secret },
        { ...bearer(w.tokens.user), 'drover-worker-secret': w.worker.secret },
        { 'drover-worker-secret': w.worker.secret },
      )
      .chain((h) =>
        make(
          `a report as another (${Object.keys(h).join(', ')})`,
          report,
          h,
          '{"batches": [',
          user.within,
          'refused',
        ),
      ),
    // No route at all.
    make('no route, no token', '/v1/nowhere', {}, '{', user.within, 'refused'),
  );
}

/**
 * A run's slow requests: at most as many let in to each budget as it has slots, and at most one report (a
 * worker has one in flight), so each is ended by its own deadline, not a queue's.
 */
export function slowRun(w: SlowWorld): fc.Arbitrary<SlowCase[]> {
  return fc.array(slowCases(w), { minLength: 1, maxLength: 12 }).filter((cases) => {
    const n = (b: keyof typeof BODY_BUDGETS) => cases.filter((c) => c.budget === b).length;
    return n('user') <= BODY_BUDGETS.user.slots && n('worker') <= 1;
  });
}
