import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { BODY_BUDGETS } from '../../src/controller/body-budgets.js';
import { tempWorkspace } from '../helpers/workspace.js';
import { api } from '../pool/fake-worker.js';
import { startServer } from '../pool/helpers.js';

/** Open a connection and send a request head announcing a `length`-byte body, and `sent` of it. */
async function partialRequest(url: string, token: string, length: number, sent: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => undefined);
  socket.write(
    `POST /v1/pools/none/scale HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${sent}`,
  );
  return socket;
}

/** Resolve with what `socket` received once it has a whole answer head. */
function answerHead(socket: net.Socket): Promise<string> {
  let got = '';
  return new Promise((resolve) => {
    socket.on('data', (d) => {
      got += d.toString();
      if (got.includes('\r\n\r\n')) resolve(got);
    });
  });
}

test('a client that goes while its body waits for the gate does not take a body slot with it', {
  timeout: 60_000,
}, async (t) => {
  const cwd = tempWorkspace(t);
  const server = await startServer(cwd);
  t.after(async () => {
    server.proc.child.kill('SIGTERM');
    await server.proc.result;
  });
  const body = JSON.stringify({ workers: 1 });
  // The first bodies arrive slowly: they hold every slot of the user routes while they are read.
  const slow: net.Socket[] = [];
  for (let i = 0; i < BODY_BUDGETS.user.slots; i++) {
    slow.push(await partialRequest(server.url, server.token, body.length, body.slice(0, 3)));
  }
  await new Promise((r) => setTimeout(r, 200));
  // The next waits for a slot, and its client goes.
  const gone = await partialRequest(server.url, server.token, body.length, body);
  await new Promise((r) => setTimeout(r, 300));
  gone.destroy();
  await new Promise((r) => setTimeout(r, 300));
  // The slow bodies complete and are answered; a slot passes to the one gone, which must hand it on.
  for (const s of slow) {
    const answer = answerHead(s);
    s.write(body.slice(3));
    assert.match(await answer, /^HTTP\/1\.1 \d{3}/);
    s.destroy();
  }
  // Every slot is still there: with all but one held again, a request with a body is read (with a slot lost it
  // would wait for the held ones' deadline).
  const held: net.Socket[] = [];
  for (let i = 0; i < BODY_BUDGETS.user.slots - 1; i++) {
    held.push(await partialRequest(server.url, server.token, body.length, body.slice(0, 3)));
  }
  t.after(() => {
    for (const h of held) h.destroy();
  });
  await new Promise((r) => setTimeout(r, 200));
  const wait = BODY_BUDGETS.user.deadlineMs / 2;
  const answered = await Promise.race([
    api(server.url, 'POST', '/pools/none/scale', server.token, { workers: 1 }),
    new Promise<'hung'>((r) => setTimeout(() => r('hung'), wait)),
  ]);
  assert.notEqual(
    answered,
    'hung',
    `a request with a body got no answer in ${wait} ms: a body slot was lost`,
  );
  assert.equal((answered as { status: number }).status, 404);
});
