import { WORKER_SECRET_HEADER } from '../src/protocol/messages.js';

/** A task as the controller hands it to a worker. */
export interface Task {
  launch: number;
  task: number;
  attempt: number;
}

/**
 * POST to a drover server's worker API as a worker does (the pool benchmarks' load processes): the user token,
 * and the worker's session secret once it has one. A request the server never answers fails the benchmark
 * instead of stalling it.
 */
export function poster(
  url: string,
  token: string,
): (route: string, body: string, secret?: string) => Promise<{ status: number; text: string }> {
  return async (route, body, secret) => {
    const res = await fetch(`${url}/v1${route}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(secret ? { [WORKER_SECRET_HEADER]: secret } : {}),
      },
      body,
      signal: AbortSignal.timeout(120_000),
    });
    return { status: res.status, text: await res.text() };
  };
}

/**
 * The start and end records of `tasks`, each succeeded, as a worker's runner writes them: started at `at` in
 * slot `slotOf(i)`, ended `took` seconds later, with `reason` on each end when given.
 */
export function succeededRecords(
  tasks: readonly Task[],
  at: number,
  opts: { slotOf?: (i: number) => number; took?: number; reason?: string } = {},
): unknown[] {
  return tasks.flatMap((t, i) => [
    {
      type: 'start',
      task: t.task,
      attempt: t.attempt,
      at,
      pid: 1,
      slot: opts.slotOf?.(i) ?? 0,
      gpus: null,
      host: 'h',
      out: '',
      err: '',
    },
    {
      type: 'end',
      task: t.task,
      attempt: t.attempt,
      at: at + (opts.took ?? 0),
      state: 'succeeded',
      exit_code: 0,
      signal: null,
      ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
    },
  ]);
}
