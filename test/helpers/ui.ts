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

/** Log in by a one-time link: the session cookie (name=value). */
export async function loginByLink(link: string): Promise<string> {
  const res = await fetch(link, { redirect: 'manual' });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/');
  const cookie = res.headers.get('set-cookie') ?? '';
  assert.match(cookie, /^drover_session=[\w-]{20,};/);
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  return cookie.split(';')[0]!;
}
