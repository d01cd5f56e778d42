/**
 * One untimed request before a test times any: a process loads Node's HTTP client (undici) at its first `fetch`,
 * ~100 ms idle and several times that when the machine is loaded (a first request timed at 1013 ms against a bound
 * of 1000, the next ones at ~30), and a bound on how fast the server answers must not count the test's own
 * start-up. Returns the answer's status, for the test to check it got the answer it expects.
 */
export async function warmFetch(url: string, init: RequestInit = {}): Promise<number> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  await res.arrayBuffer();
  return res.status;
}
