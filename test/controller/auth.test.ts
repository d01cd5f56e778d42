import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runDrover } from '../helpers/drover.js';
import { poolWorkspace } from '../pool/helpers.js';

async function req(
  url: string,
  method: string,
  path: string,
  token: string | undefined,
  body?: string,
): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
  const res = await fetch(`${url}/v1${path}`, {
    method,
    headers: {
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? (JSON.parse(text) as { error?: { code: string; message: string } }) : {},
  };
}

test('requests without a token, with a bad or revoked one, or with the wrong kind are refused', async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  const { url, token } = server;
  assert.equal((await req(url, 'GET', '/health', token)).status, 200);
  // The first token was created on first start, in a file only its owner can read.
  assert.equal(fs.statSync(path.join(cwd, '.drover', 'server', 'token')).mode & 0o777, 0o600);

  const none = await req(url, 'GET', '/health', undefined);
  assert.equal(none.status, 401);
  assert.equal(none.body.error?.code, 'unauthorized');
  assert.equal((await req(url, 'GET', '/pools', 'drv_000000000000_notarealtokennotarealtoken')).status, 401);
  assert.equal((await req(url, 'GET', '/pools', 'garbage')).status, 401);

  const made = await runDrover(['server', 'token', 'create', '--name', 'ci', '--json'], { cwd });
  assert.equal(made.code, 0, made.stderr);
  const user2 = JSON.parse(made.stdout) as { id: string; token: string };
  assert.equal((await req(url, 'GET', '/pools', user2.token)).status, 200);
  const rv = await runDrover(['server', 'token', 'revoke', user2.id], { cwd });
  assert.equal(rv.code, 0, rv.stderr);
  const revoked = await req(url, 'GET', '/pools', user2.token);
  assert.equal(revoked.status, 401);
  assert.match(revoked.body.error!.message, /revoked/);
  const listed = JSON.parse((await runDrover(['server', 'token', 'list', '--json'], { cwd })).stdout) as {
    id: string;
    revoked_at: string | null;
  }[];
  assert.ok(listed.find((x) => x.id === user2.id)!.revoked_at !== null);
  assert.ok(!JSON.stringify(listed).includes(user2.token), 'token list never shows secrets');

  const w = JSON.parse(
    (await runDrover(['server', 'token', 'create', '--worker', '--pool', 'p', '--json'], { cwd })).stdout,
  ) as {
    token: string;
  };
  const onUser = await req(url, 'GET', '/pools', w.token);
  assert.equal(onUser.status, 403);
  assert.equal(onUser.body.error?.code, 'forbidden');
  const launch = await req(
    url,
    'POST',
    '/launches',
    w.token,
    JSON.stringify({ pool: 'p', cwd, command: 'true' }),
  );
  assert.equal(launch.status, 403);
  const userOnWorker = await req(url, 'POST', '/workers/x/heartbeat', token, '{}');
  assert.equal(userOnWorker.status, 403);
  const reg = {
    pool: 'other',
    host: 'h',
    pid: 1,
    resources: { cpus: 1, gpus: 0, mem_mb: 0 },
    slots: 1,
    setup: false,
    holding: [],
  };
  const otherPool = await req(url, 'POST', '/workers/register', w.token, JSON.stringify(reg));
  assert.equal(otherPool.status, 403);
  assert.match(otherPool.body.error!.message, /for pool 'p', not 'other'/);
});

test('malformed, invalid or oversized bodies get a clear 4xx and the server stays up', async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  const { url, token } = server;
  const bad = await req(url, 'POST', '/pools', token, '{"name": "p", ');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error?.code, 'bad-request');
  const invalid = await req(
    url,
    'POST',
    '/pools',
    token,
    JSON.stringify({ name: 'p', backend: 'local', workers: 'x', cpus: 1 }),
  );
  assert.equal(invalid.status, 400);
  assert.match(invalid.body.error!.message, /workers/);
  const unknownBackend = await req(
    url,
    'POST',
    '/pools',
    token,
    JSON.stringify({ name: 'p', backend: 'k8s', workers: 1, cpus: 1 }),
  );
  assert.equal(unknownBackend.status, 400);
  // Refused before it is read: the server reads the rest of the body and throws it away, so the client, still
  // sending, reads the 413 (answering and closing at once made the kernel reset the connection: EPIPE).
  for (let i = 0; i < 10; i++) {
    const huge = await req(
      url,
      'POST',
      '/launches',
      token,
      JSON.stringify({ pool: 'p', cwd, command: 'x'.repeat((i % 2 === 0 ? 2 : 8) << 20) }),
    );
    assert.equal(huge.status, 413);
    assert.equal(huge.body.error?.code, 'too-large');
  }
  const nowhere = await req(url, 'GET', '/nope', token);
  assert.equal(nowhere.status, 404);
  assert.equal((await req(url, 'GET', '/health', token)).status, 200);
});
