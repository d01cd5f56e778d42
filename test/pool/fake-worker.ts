import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

/**
 * A worker spoken by hand over HTTP (a fake worker: no runner behind it), to play a worker, or an attacker
 * holding a worker token, against a real controller.
 */

/** An answer of the API. */
export interface Answer {
  status: number;
  body: {
    error?: {
      code: string;
      message: string;
      refused?: { launch: number; task: number; attempt: number }[];
      offset?: number;
    };
    [k: string]: unknown;
  };
}

/** Send a request to the controller (`body` as text, or any value sent as JSON). */
export async function api(
  url: string,
  method: string,
  route: string,
  token: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(`${url}/v1${route}`, {
    method,
    headers: {
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      ...(text !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(text !== undefined ? { body: text } : {}),
  });
  const answer = await res.text();
  let parsed: Answer['body'] = {};
  try {
    parsed = answer ? (JSON.parse(answer) as Answer['body']) : {};
  } catch {
    parsed = { raw: answer };
  }
  return { status: res.status, body: parsed };
}

/** The worker token `drover pool create` made for a pool. */
export function poolToken(cwd: string, pool: string): string {
  return fs.readFileSync(path.join(cwd, '.drover', 'pools', pool, 'worker-token'), 'utf8').trim();
}

/** What a fake worker registers with (fields may be overridden). */
export function registration(pool: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    pool,
    host: 'fakehost',
    pid: 4242,
    resources: { cpus: 4, gpus: 0, mem_mb: 0 },
    slots: 4,
    setup: false,
    holding: [],
    ...extra,
  };
}

/** A task handed to a fake worker. */
export interface Given {
  launch: number;
  task: number;
  attempt: number;
}

/** A worker registered by hand: its id and secret, and calls that carry them. */
export class FakeWorker {
  constructor(
    readonly url: string,
    readonly token: string,
    readonly id: string,
    readonly secret: string,
  ) {}

  /** Register a new worker of `pool` with `token`. */
  static async register(url: string, token: string, pool: string, extra: Record<string, unknown> = {}) {
    const a = await api(url, 'POST', '/workers/register', token, registration(pool, extra));
    if (a.status !== 200) throw new Error(`register answered ${a.status}: ${JSON.stringify(a.body)}`);
    return new FakeWorker(url, token, a.body.id as string, a.body.secret as string);
  }

  /** Call a route of this worker (`/poll`, `/report`, ...) with its secret (another one; null: none). */
  call(route: string, body: unknown, secret: string | null = this.secret): Promise<Answer> {
    return api(
      this.url,
      'POST',
      `/workers/${this.id}${route}`,
      this.token,
      body,
      secret !== null ? { 'drover-worker-secret': secret } : {},
    );
  }

  /** Poll until the controller has handed it at least `n` tasks (or `tries` polls passed). */
  async take(n: number, tries = 20): Promise<Given[]> {
    const got: Given[] = [];
    for (let i = 0; i < tries && got.length < n; i++) {
      const a = await this.call('/poll', { wait: 1 });
      if (a.status !== 200) throw new Error(`poll answered ${a.status}: ${JSON.stringify(a.body)}`);
      for (const t of a.body.tasks as Given[])
        got.push({ launch: t.launch, task: t.task, attempt: t.attempt });
    }
    return got;
  }
}

/** A start record as a runner writes it. */
export function startRecord(task: number, attempt: number, extra: Record<string, unknown> = {}) {
  return {
    type: 'start',
    task,
    attempt,
    at: Date.now() / 1000,
    pid: 999_999,
    slot: 0,
    gpus: null,
    host: 'fakehost',
    out: '/tmp/out',
    err: '/tmp/err',
    ...extra,
  };
}

/** An end record as a runner writes it. */
export function endRecord(task: number, attempt: number, extra: Record<string, unknown> = {}) {
  return {
    type: 'end',
    task,
    attempt,
    at: Date.now() / 1000 + 0.1,
    state: 'succeeded',
    exit_code: 0,
    signal: null,
    ...extra,
  };
}

/** Every row of every table of a folder's ledger, as text: two dumps are equal when the ledger did not change. */
export function dumpLedger(cwd: string): string {
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true, fileMustExist: true });
  try {
    const tables = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all() as { name: string }[];
    const out: Record<string, unknown[]> = {};
    for (const { name } of tables) {
      const cols = (db.prepare(`PRAGMA table_info("${name}")`).all() as { name: string }[]).map(
        (c) => c.name,
      );
      out[name] = db
        .prepare(`SELECT * FROM "${name}" ORDER BY ${cols.map((c) => `"${c}"`).join(', ')}`)
        .all();
    }
    return JSON.stringify(out);
  } finally {
    db.close();
  }
}
