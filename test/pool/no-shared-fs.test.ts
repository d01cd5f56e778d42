import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { droverJson, runDrover, type Started, startDrover } from '../helpers/drover.js';
import { waitFor } from '../helpers/workspace.js';
import { FakeProxy } from './fake-proxy.js';
import { poolToken } from './fake-worker.js';
import { killInside, poolWorkspace } from './helpers.js';
import { checkOutputs, EMIT, oneSuccessEach, runSweep, tree } from './sweep-outputs.js';
import { idlePool } from './two-pools.js';

/**
 * Workers without a shared filesystem (issue 35 item 3): a real `drover worker --no-shared-fs` whose folder is
 * apart from the submit side's keeps its tasks' logs and results there and sends them to the controller, which
 * writes them where `drover logs` and `results` read them: byte for byte, also over a link cut at random moments.
 */

/** Start a real worker of pool p with --no-shared-fs in a folder of its own (stopped after the test). */
function startWorker(
  t: { after(fn: () => Promise<void>): void },
  cwd: string,
  url: string,
): { proc: Started; dir: string } {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'drover-worker-host-')));
  fs.writeFileSync(path.join(dir, 'wtoken'), `${poolToken(cwd, 'p')}\n`, { mode: 0o600 });
  const proc = startDrover(
    ['worker', '--server', url, '--token-file', 'wtoken', '--pool', 'p', '--no-shared-fs', '--slots', '2'],
    { cwd: dir },
  );
  t.after(async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGTERM');
    const r = await proc.result;
    killInside(dir);
    if (process.env.DROVER_TEST_KEEP) process.stderr.write(`kept ${dir}\nworker stderr:\n${r.stderr}\n`);
    else fs.rmSync(dir, { recursive: true, force: true });
  });
  return { proc, dir };
}

test('a --no-shared-fs worker sends logs and results: logs and results answer byte for byte, files and segments', {
  timeout: 180_000,
}, async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  fs.writeFileSync(path.join(cwd, 'emit.sh'), EMIT);
  await idlePool(cwd, 'p');
  const w = startWorker(t, cwd, server.url);
  const seg = await runSweep(cwd, 'S', 8, 'segments');
  await checkOutputs(cwd, 'S', 8);
  oneSuccessEach(cwd, 'S', 8);
  const files = await runSweep(cwd, 'F', 6, 'files');
  await checkOutputs(cwd, 'F', 6);
  oneSuccessEach(cwd, 'F', 6);

  // The worker wrote its logs, results and records in its own folder, none in the submit side's.
  const local = tree(path.join(w.dir, '.drover'));
  const id = /pools\/p\/workers\/([^/]+)\/logs/.exec(local.join('\n'))?.[1];
  assert.ok(id, `the worker's own folder holds its logs: ${local.slice(0, 5).join(', ')}`);
  const localFiles = local.filter((f) => f.includes(`/logs/F/${files}/`)).map((f) => path.basename(f));
  assert.deepEqual(localFiles.filter((f) => f.startsWith('6.')).sort(), [
    '6.1.err',
    '6.1.out',
    '6.1.result.json',
  ]);
  assert.deepEqual(tree(path.join(cwd, '.drover', 'pools', 'p', 'workers', id)), []);
  // The controller's copies are those files, byte for byte, where a shared filesystem would have them.
  const controllerLogs = path.join(cwd, '.drover', 'logs');
  for (const [job, launch] of [
    ['S', seg],
    ['F', files],
  ] as const) {
    const mine = path.join(w.dir, '.drover', 'pools', 'p', 'workers', id, 'logs', job, String(launch));
    const names = tree(mine);
    assert.deepEqual(tree(path.join(controllerLogs, job, String(launch))), names, `${job}: the same files`);
    for (const f of names) {
      const a = fs.readFileSync(path.join(mine, f));
      const b = fs.readFileSync(path.join(controllerLogs, job, String(launch), f));
      assert.ok(a.equals(b), `${job}/${f}: ${a.length} bytes here, ${b.length} on the controller`);
    }
  }
});

test('over a link cut at random moments (a fake proxy), every log byte arrives once and each task succeeds once', {
  timeout: 300_000,
}, async (t) => {
  const { cwd, server } = await poolWorkspace(t, ['--lost-after', '30']);
  fs.writeFileSync(path.join(cwd, 'emit.sh'), EMIT);
  await idlePool(cwd, 'p');
  const proxy = new FakeProxy({ host: '127.0.0.1', port: server.port }, 10, 200);
  const url = await proxy.listen();
  t.after(() => proxy.close());
  startWorker(t, cwd, url);
  await runSweep(cwd, 'C', 10, 'segments');
  await runSweep(cwd, 'D', 6, 'files');
  proxy.cutting = false;
  assert.ok(proxy.cuts >= 10, `the link was cut ${proxy.cuts} times`);
  await checkOutputs(cwd, 'C', 10);
  await checkOutputs(cwd, 'D', 6);
  oneSuccessEach(cwd, 'C', 10);
  oneSuccessEach(cwd, 'D', 6);
});

test('the controller lost its copy of a running task’s log: the next chunk is a gap and the worker resends it all', {
  timeout: 120_000,
}, async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  fs.writeFileSync(
    path.join(cwd, 'tick.sh'),
    'i=0\nwhile [ $i -lt 30 ]; do echo "tick $i"; i=$((i+1)); sleep 0.1; done\n',
  );
  await idlePool(cwd, 'p');
  startWorker(t, cwd, server.url);
  const l = await droverJson<{ launch: string }>(
    [
      'launch',
      '--pool',
      'p',
      '--num-jobs',
      '1',
      '--command',
      'sh tick.sh',
      '--jobname',
      'G',
      '--logs',
      'files',
      '--json',
    ],
    { cwd },
  );
  const copy = path.join(cwd, '.drover', 'logs', 'G', l.launch, '1.1.out');
  await waitFor('5 ticks on the controller', () => fs.existsSync(copy) && fs.statSync(copy).size >= 35);
  fs.truncateSync(copy, 0);
  await waitFor('the task to succeed', async () => {
    const s = await droverJson<{ counts: { succeeded: number } }>(['status', 'G', '--json'], { cwd });
    return s.counts.succeeded === 1;
  });
  const out = await runDrover(['logs', 'G', '1'], { cwd });
  assert.equal(out.stdout, Array.from({ length: 30 }, (_, i) => `tick ${i}\n`).join(''));
});
