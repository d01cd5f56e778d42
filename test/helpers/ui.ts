import assert from 'node:assert/strict';
import { type Started, startDrover } from './drover.js';
import { waitFor } from './workspace.js';

/**
 * `drover ui --port 0` in a folder (a process group of its own); its base URL and one-time login link (from its
 * stderr), and its stderr so far.
 */
export async function startUi(
  t: { after(fn: () => Promise<void>): void },
  cwd: string,
): Promise<{ base: string; link: string; proc: Started; stderr: () => string }> {
  const proc = startDrover(['ui', '--port', '0'], { cwd, setsid: true });
  let err = '';
  proc.child.stderr!.on('data', (d: string) => {
    err += d;
  });
  t.after(async () => {
    proc.child.kill('SIGTERM');
    await proc.result;
  });
  const link = await waitFor(
    'drover ui to print its link',
    () => {
      if (proc.child.exitCode !== null) throw new Error(`drover ui exited ${proc.child.exitCode}: ${err}`);
      return /open (http:\/\/\S+\/login\?code=\S+)/.exec(err)?.[1];
    },
    20_000,
  );
  return { base: link.replace(/\/login.*/, ''), link, proc, stderr: () => err };
}

/** A dashboard session as a script holds it: the cookie and the page key, as the headers that send them. */
export interface SessionHeaders extends Record<string, string> {
  cookie: string;
  'x-drover-page-key': string;
}

/**
 * Log in by a one-time link: the session's cookie (`name=value`, named for the server's port) and its page key
 * (from the redirect's fragment), as headers.
 */
export async function loginByLink(link: string): Promise<SessionHeaders> {
  const res = await fetch(link, { redirect: 'manual' });
  assert.equal(res.status, 303);
  const key = /^\/#page_key=([\w-]{20,})$/.exec(res.headers.get('location') ?? '')?.[1];
  assert.ok(key, `the redirect gives the page its key: ${res.headers.get('location')}`);
  const cookie = res.headers.get('set-cookie') ?? '';
  assert.match(cookie, new RegExp(`^drover_session_${new URL(link).port}=[\\w-]{20,};`));
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  return { cookie: cookie.split(';')[0]!, 'x-drover-page-key': key };
}

/** Log in to a server's dashboard with a token: the session, as headers (see loginByLink). */
export async function loginByToken(base: string, token: string): Promise<SessionHeaders> {
  const res = await fetch(`${base}/v1/ui/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  assert.equal(res.status, 200);
  const { page_key } = (await res.json()) as { page_key: string };
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, 'x-drover-page-key': page_key };
}
