import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { lines, runDrover } from '../helpers/drover.js';
import { fillDisk, needsRoot, tmpfsFolder } from '../helpers/mounts.js';
import { loginByLink, startUi } from '../helpers/ui.js';
import { launchLeftUningested } from '../helpers/uningested.js';
import { tempWorkspace, waitFor } from '../helpers/workspace.js';

/**
 * `drover ui` when its folder goes wrong, against the real process: a ledger damaged before it starts or while it
 * runs, a full disk, and a kill -9 while a page's event stream is open. A read-only dashboard says what is wrong
 * (one line at start; a 500 naming the file once running) and never leaves anything running.
 */

async function ok(cwd: string, args: string[]): Promise<void> {
  const r = await runDrover(args, { cwd });
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
}

/** A folder with job `j` (two tasks, launched and ended). */
async function folder(cwd: string): Promise<string> {
  await ok(cwd, ['prelaunch', '+command', 'echo', '+jobname', 'j', '+pos-arg', '1', '2']);
  await ok(cwd, ['launch', '--jobname', 'j', '-q']);
  return path.join(cwd, '.drover', 'ledger.db');
}

/** True while some process of the group `pgid` lives. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

test('drover ui on a ledger that is not a database: one line naming it, exit 2, no server', async (t) => {
  const cwd = tempWorkspace(t);
  const ledger = await folder(cwd);
  fs.writeFileSync(ledger, 'not a database at all\n'.repeat(20));
  const r = await runDrover(['ui', '--port', '0'], { cwd });
  assert.equal(r.code, 2, r.stderr);
  const ls = lines(r.stderr);
  assert.equal(ls.length, 1, r.stderr);
  assert.match(ls[0]!, new RegExp(`^drover: ${ledger} is not a drover ledger \\(file is not a database\\)`));
});

test('drover ui whose ledger is damaged while it runs: a 500 naming the file, the server still up', {
  timeout: 60_000,
}, async (t) => {
  const cwd = tempWorkspace(t);
  const ledger = await folder(cwd);
  const { base, link, proc } = await startUi(t, cwd);
  const session = await loginByLink(link);
  assert.equal((await fetch(`${base}/v1/ui/jobs/j`, { headers: session })).status, 200);
  // Overwritten in place (the server's open file), as a bad disk or a stray `cp` would.
  fs.writeFileSync(ledger, 'not a database at all\n'.repeat(5000));
  const res = await fetch(`${base}/v1/ui/jobs/j`, { headers: session });
  const body = (await res.json()) as { error: { code: string; message: string } };
  assert.equal(res.status, 500, JSON.stringify(body));
  assert.equal(body.error.code, 'corrupt');
  assert.ok(body.error.message.includes(ledger), body.error.message);
  assert.match(body.error.message, /move it aside|restore it/);
  // The page itself (no ledger in it) still loads: it shows that message.
  assert.equal((await fetch(`${base}/`)).status, 200);
  assert.equal(proc.child.exitCode, null, 'drover ui is still running');
});

test('drover ui on a full disk: the pages answer from the ledger as last written, and it says once they may be stale', {
  skip: needsRoot,
  timeout: 60_000,
}, async (t) => {
  const cwd = tmpfsFolder(t, '4m');
  await folder(cwd);
  // A second job whose runner has finished but whose records no command has read into the ledger yet: reading
  // them in is a write, which the full disk refuses.
  await launchLeftUningested(cwd, 'late');
  fillDisk(cwd);
  const { base, link, proc, stderr } = await startUi(t, cwd);
  const session = await loginByLink(link);
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${base}/v1/ui/jobs`, { headers: session });
    assert.equal(res.status, 200);
    const { jobs } = (await res.json()) as { jobs: { name: string; counts: Record<string, number> }[] };
    const byName = new Map(jobs.map((j) => [j.name, j.counts]));
    assert.equal(byName.get('j')?.succeeded, 2);
    assert.equal(byName.get('late')?.succeeded ?? 0, 0, 'late as last written: its end not read in');
    // Past the hub's throttle: the second request tries again (and says nothing new).
    await new Promise((r) => setTimeout(r, 800));
  }
  const stale = lines(stderr()).filter((l) => /the answer may be stale/.test(l));
  assert.equal(stale.length, 1, stderr());
  assert.match(stale[0]!, /disk full|disk I\/O error/);
  assert.equal(proc.child.exitCode, null);
});

test('kill -9 of drover ui with an event stream open: the client sees the stream end, nothing is left running', {
  timeout: 60_000,
}, async (t) => {
  const cwd = tempWorkspace(t);
  await folder(cwd);
  const { base, link, proc } = await startUi(t, cwd);
  const session = await loginByLink(link);
  const req = http.get(`${base}/v1/ui/events?job=j`, { headers: session });
  t.after(() => {
    req.destroy();
  });
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  assert.equal(res.statusCode, 200);
  let text = '';
  const ended = new Promise<string>((resolve) => {
    res.setEncoding('utf8').on('data', (d: string) => {
      text += d;
    });
    res.once('end', () => resolve('end'));
    res.once('aborted', () => resolve('aborted'));
    res.once('error', () => resolve('error'));
    res.once('close', () => resolve('close'));
  });
  await waitFor('the ready event', () => text.includes('event: ready'), 10_000, 20);

  proc.child.kill('SIGKILL');
  const how = await Promise.race([
    ended,
    new Promise<string>((r) => setTimeout(() => r('still open'), 5000)),
  ]);
  assert.notEqual(how, 'still open', 'the stream ended when the server died');
  const r = await proc.result;
  assert.equal(r.signal, 'SIGKILL');
  await waitFor('its process group to be gone', () => !groupAlive(proc.pid), 5000, 20);
  // The port is free again: nothing else held it.
  await assert.rejects(fetch(`${base}/v1/ui/me`));
});
