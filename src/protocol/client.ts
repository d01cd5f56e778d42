import fs from 'node:fs';
import http from 'node:http';
import { DroverError } from '../errors.js';
import { API_PREFIX, type AttemptKey, type ErrorBody } from './messages.js';

/** A refusal or failure from the controller: its HTTP status and error code, or status 0 when unreachable. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    options?: { cause?: unknown; refused?: AttemptKey[]; offset?: number },
  ) {
    super(message, options);
    this.name = 'ApiError';
    this.refused = options?.refused ?? [];
    this.offset = options?.offset;
  }
  /** With code `gap`: the bytes the controller has of the file. */
  readonly offset: number | undefined;
  /** With code `not-yours`: the attempts whose records the controller refused. */
  readonly refused: AttemptKey[];
}

/**
 * Calls the controller's API with a bearer token (used by workers and by the CLI). node:http rather than fetch:
 * it loads faster, and without `keepAlive` a one-shot CLI exits as soon as its answer came.
 */
export class ApiClient {
  private readonly agent: http.Agent;
  /** Headers sent with every request (a worker's session secret). */
  readonly headers: Record<string, string> = {};

  constructor(
    public url: string,
    private readonly token: string,
    options: { keepAlive?: boolean } = {},
  ) {
    this.agent = new http.Agent({ keepAlive: options.keepAlive === true });
  }

  /**
   * Send `method path` (path after the /v1 prefix) with an optional body — JSON, or raw bytes when it is a Buffer
   * (application/octet-stream) — and resolve with the JSON answer.
   */
  call<T>(method: string, path: string, body?: unknown, timeoutMs = 120_000): Promise<T> {
    const raw = Buffer.isBuffer(body);
    const payload = body === undefined ? undefined : raw ? body : Buffer.from(JSON.stringify(body));
    return new Promise<T>((resolve, reject) => {
      const unreachable = (err: unknown) =>
        reject(
          new ApiError(0, 'unreachable', `cannot reach the drover server at ${this.url}: is it running?`, {
            cause: err,
          }),
        );
      let req: http.ClientRequest;
      try {
        req = http.request(`${this.url}${API_PREFIX}${path}`, {
          method,
          agent: this.agent,
          timeout: timeoutMs,
          headers: {
            authorization: `Bearer ${this.token}`,
            ...this.headers,
            ...(payload
              ? {
                  'content-type': raw ? 'application/octet-stream' : 'application/json',
                  'content-length': payload.length,
                }
              : {}),
          },
        });
      } catch (err) {
        unreachable(err);
        return;
      }
      req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
      req.on('error', unreachable);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', unreachable);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text === '' ? undefined : JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) return resolve(parsed as T);
          const e = (parsed as ErrorBody | undefined)?.error;
          reject(
            new ApiError(status, e?.code ?? 'http', e?.message ?? `HTTP ${status} from ${this.url}`, {
              ...(e?.refused ? { refused: e.refused } : {}),
              ...(typeof e?.offset === 'number' ? { offset: e.offset } : {}),
            }),
          );
        });
      });
      req.end(payload);
    });
  }

  /** Close idle kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }
}

/** Read a token file (first line), or throw a usage error naming it. */
export function readTokenFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n')[0]!.trim();
  } catch {
    throw new DroverError('usage', `cannot read the token file ${file}: give one with --token-file`);
  }
}
