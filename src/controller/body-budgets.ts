import { PassThrough, type Readable } from 'node:stream';
import type { TokenRow } from '../ledger/server-tokens.js';
import { FILE_CHUNK_BYTES, MAX_BODY_BYTES } from '../protocol/messages.js';
import { BodyGate } from './body-limits.js';
import { HttpError } from './http-error.js';

/**
 * Who may keep the server reading request bodies, how many at once, and for how long. Each kind of sender has a
 * gate of its own, so none waits behind another kind: the login (anyone, no token), a user's requests (however
 * slow on purpose), workers' reports and registrations, and workers' life signs (heartbeats, polls, leaves).
 * A body is read only after its request was authenticated (the onRequest hook runs first), and must be whole
 * within its budget's deadline of taking its slot: else the request ends with a 408 and its connection closes,
 * which frees the slot. A budget's bodies are at most `bytes` each (its routes' body limit), so what bodies
 * take at once is bounded by the sum of `slots × bytes`: see BODY_MEMORY_BOUND.
 */
export interface BodyBudget {
  /** Its name in messages. */
  name: string;
  /** Bodies read at once; more wait, unread, in the kernel's socket buffers. */
  slots: number;
  /** The most a body may be. */
  bytes: number;
  /** A body must be whole this long after it took its slot. */
  deadlineMs: number;
}

/** The body limit of worker routes whose bodies are a few fields: heartbeats, polls, leaves. */
export const SMALL_BODY_BYTES = 16 << 10;

/** The budgets, by sender (docs/pools.md and docs/dashboard.md state them). */
export const BODY_BUDGETS = {
  /** Routes answered without a token (the login): tiny bodies, a short deadline. */
  public: { name: 'public', slots: 64, bytes: 4 << 10, deadlineMs: 5_000 },
  /** Routes of user tokens and dashboard sessions. */
  user: { name: 'user', slots: 2, bytes: MAX_BODY_BYTES, deadlineMs: 10_000 },
  /** Workers' reports and registrations. */
  worker: { name: 'worker', slots: 1, bytes: MAX_BODY_BYTES, deadlineMs: 10_000 },
  /**
   * Chunks of task logs and result files from workers without a shared filesystem: never in the way of reports
   * or life signs, and a few at once so that several workers' logs flow together.
   */
  workerFiles: { name: 'worker files', slots: 4, bytes: FILE_CHUNK_BYTES, deadlineMs: 10_000 },
  /** Workers' heartbeats, polls and leaves: their life signs never wait behind a report. */
  workerSmall: { name: 'worker (small)', slots: 64, bytes: SMALL_BODY_BYTES, deadlineMs: 10_000 },
} as const satisfies Record<string, BodyBudget>;

/** The most that bodies being read and parsed can hold at once (bytes on the wire). */
export const BODY_MEMORY_BOUND = Object.values(BODY_BUDGETS).reduce((a, b) => a + b.slots * b.bytes, 0);

/** What decides a request's budget: its route's options and who it was authenticated as. */
export interface BodyRoute {
  public: boolean;
  bodyLimit: number;
  token: Pick<TokenRow, 'kind'> | undefined;
  /** The route takes a worker's file chunks (`config.files`). */
  files?: boolean;
}

/**
 * The budget of a request (pure): public routes', a worker's (its file chunks, or small or not by its route's
 * limit), or a user's.
 */
export function budgetOf(r: BodyRoute): keyof typeof BODY_BUDGETS {
  if (r.public) return 'public';
  if (r.token?.kind === 'worker' && r.files === true) return 'workerFiles';
  if (r.token?.kind === 'worker') return r.bodyLimit <= SMALL_BODY_BYTES ? 'workerSmall' : 'worker';
  return 'user';
}

/** One gate for each budget. */
export class BodyGates {
  private readonly gates = new Map<keyof typeof BODY_BUDGETS, BodyGate>();

  /** The gate and the facts of a budget. */
  of(name: keyof typeof BODY_BUDGETS): { gate: BodyGate; budget: BodyBudget } {
    const budget = BODY_BUDGETS[name];
    let gate = this.gates.get(name);
    if (!gate) {
      gate = new BodyGate(budget.slots);
      this.gates.set(name, gate);
    }
    return { gate, budget };
  }
}

/** The error of a body that was not whole by its deadline (answered 408, its connection closed). */
export class BodyDeadlineError extends HttpError {
  constructor(budget: BodyBudget) {
    super(
      408,
      'body-timeout',
      `the request body was not whole within ${budget.deadlineMs / 1000} s (the ${budget.name} body deadline): send it at once`,
    );
  }
}

/**
 * The body `payload` as a stream that fails with a BodyDeadlineError when it has not ended within the budget's
 * deadline (Fastify's parser then answers the error). The request's own stream is left unread from then on.
 */
export function withDeadline(payload: Readable, budget: BodyBudget): Readable {
  const out = new PassThrough();
  const timer = setTimeout(() => {
    payload.unpipe(out);
    out.destroy(new BodyDeadlineError(budget));
  }, budget.deadlineMs);
  out.once('close', () => clearTimeout(timer));
  payload.once('end', () => clearTimeout(timer));
  payload.pipe(out);
  return out;
}
