import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { flapLinks, makeNetns, NETNS_TOOLS, type Netns, netnsWorkspace, startNetnsWorker } from './netns.js';
import { checkOutputs, EMIT, oneSuccessEach, runSweep } from './sweep-outputs.js';
import { idlePool } from './two-pools.js';

/**
 * The test of a worker without a shared filesystem with large outputs: the worker runs on a host of its
 * own (test/pool/netns.ts), its link taken down and up at random moments while two sweeps run, one with a log
 * segment per slot and one with a file per attempt.
 */

test('a --no-shared-fs worker in its own network and mount namespaces, its link flapping: logs and results whole', {
  skip: NETNS_TOOLS ? false : 'needs root, ip netns and unshare',
  timeout: 300_000,
}, async (t) => {
  let net!: Netns;
  const { cwd, server } = await netnsWorkspace(t, () => {
    net = makeNetns();
    return net;
  });
  await idlePool(cwd, 'p');
  // The launch's folder is not on the worker's host: its tasks run in the worker's folder, beside emit.sh.
  const worker = startNetnsWorker(net, {
    cwd,
    server: server.url,
    pool: 'p',
    hidden: path.dirname(cwd),
    slots: 2,
    files: { 'emit.sh': EMIT },
  });
  t.after(async () => {
    await worker.stop();
    net.remove();
  });

  const flapper = flapLinks([net]);
  let flaps = 0;
  try {
    await runSweep(cwd, 'N', 16, 'segments');
    await runSweep(cwd, 'M', 8, 'files');
  } finally {
    flaps = await flapper.stop();
  }
  assert.ok(flaps >= 3, `the link went down ${flaps} times`);
  assert.match(
    worker.stderr(),
    /this host has no folder .*: its tasks run in /,
    'the submit folder was hidden from it',
  );
  await checkOutputs(cwd, 'N', 16);
  await checkOutputs(cwd, 'M', 8);
  oneSuccessEach(cwd, 'N', 16);
  oneSuccessEach(cwd, 'M', 8);
});
