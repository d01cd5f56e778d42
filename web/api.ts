// The dashboard's requests to the server's /v1/ui routes (docs/dashboard.md#routes): each with the session's
// page key, each answer typed by the contract in src/protocol/dashboard.ts.

const API = '/v1/ui';

/** A request the server refused: its status and its error's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

// The session's page key (docs/dashboard.md): the server checks it with the session cookie on every request.
// The page keeps it in this origin's storage (the origin includes the port: no other service on this host
// reads it), or in memory where the browser keeps no storage.
const KEY_STORE = 'drover-page-key';
let keyInMemory: string | undefined;

/** The session's page key, if there is one. */
export function pageKey(): string | undefined {
  try {
    return localStorage.getItem(KEY_STORE) ?? undefined;
  } catch {
    return keyInMemory;
  }
}

/** Keep the page key of a new session, or forget it (undefined). */
export function keepKey(key: string | undefined): void {
  keyInMemory = key;
  try {
    if (key === undefined) localStorage.removeItem(KEY_STORE);
    else localStorage.setItem(KEY_STORE, key);
  } catch {
    // no storage: kept in memory
  }
}

// A one-time login link's redirect brings the key in the fragment (sent to no server): keep it, and take it out
// of the address and the history.
{
  const given = /^#page_key=([\w-]+)$/.exec(location.hash)?.[1];
  if (given !== undefined) {
    keepKey(given);
    history.replaceState(null, '', location.pathname + location.search);
  }
}

/** A request to the route `path` under /v1/ui; its answer, which the route's type `T` describes. */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const key = pageKey();
  const res = await fetch(API + path, {
    method: init.method ?? 'GET',
    credentials: 'same-origin',
    headers: {
      ...(key !== undefined ? { 'x-drover-page-key': key } : {}),
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(init.method && init.method !== 'GET' ? { 'x-drover-dashboard': '1' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  const body = text === '' ? {} : (JSON.parse(text) as { error?: { message: string } });
  if (!res.ok) throw new ApiError(res.status, body.error?.message ?? `${res.status} ${res.statusText}`);
  return body as T;
}

/**
 * The live event stream's URL (of a job, or of the folder). An EventSource sends no headers of ours: its route
 * takes the page key as a query parameter.
 */
export function eventsUrl(job?: string): string {
  const query = new URLSearchParams({ ...(job ? { job } : {}), page_key: pageKey() ?? '' });
  return `${API}/events?${query}`;
}

/** A name in a route's path. */
export const enc = encodeURIComponent;
